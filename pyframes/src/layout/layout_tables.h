// The generated per-version layouts, written by scripts/gen_layouts.py: one fill function per
// CPython minor version 3.6-3.13 (layout_tables_generated.cpp), and per free-threaded minor
// version, 3.13t and 3.14t (layout_tables_free_threaded.cpp).
#pragma once

#include <cstddef>

#include "pyframes/layout.h"

namespace pyframes {

struct GeneratedLayout {
  int major;
  int minor;
  int micro;  // the micro version whose headers were measured
  void (*fill)(Layout&);
};

extern const GeneratedLayout kGeneratedLayouts[];
extern const size_t kGeneratedLayoutCount;
extern const GeneratedLayout kFreeThreadedLayouts[];
extern const size_t kFreeThreadedLayoutCount;

// The table for major.minor of the default (GIL) or the free-threaded build, or nullptr.
const GeneratedLayout* find_generated_layout(int major, int minor, bool free_threaded = false);

}  // namespace pyframes
