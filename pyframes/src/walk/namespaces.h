// A frame's module globals and builtins (--globals): the dicts behind f_globals and f_builtins,
// as name = bounded repr, in the dicts' order. What gdb's py-print looks a name up in after the
// frame's locals.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "objects/object_reader.h"
#include "pyframes/model.h"
#include "walk/frame_chain.h"

namespace pyframes {

// Reads each dict once per walk: every frame of a module shares its globals, every frame of a
// process its builtins.
class NamespaceReader {
 public:
  explicit NamespaceReader(const ObjectReader& reader) : reader_(reader) {}

  // Fills frame.globals and frame.builtins from the raw frame's f_globals and f_builtins; leaves
  // them empty where the layout has no offset or the dict cannot be read.
  void read(const RawFrame& raw, Frame& frame);

 private:
  const std::vector<Local>& names_of(uint64_t dict);

  const ObjectReader& reader_;
  std::unordered_map<uint64_t, std::vector<Local>> read_;
};

}  // namespace pyframes
