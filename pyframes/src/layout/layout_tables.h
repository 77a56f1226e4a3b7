// The generated per-version layouts (layout_tables_generated.cpp, written by
// scripts/gen_layouts.py): one fill function per CPython minor version 3.6-3.13.
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

// The table for major.minor, or nullptr.
const GeneratedLayout* find_generated_layout(int major, int minor);

}  // namespace pyframes
