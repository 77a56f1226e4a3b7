// One line of /proc/PID/maps ("start-end perms offset dev inode   path"), read in place: no
// allocation, no locale, noexcept. Both readers of the file use it: the module map of a process
// being dumped (proc_maps.cpp, which keeps the paths) and the shim's table of its own readable
// memory (self_memory.cpp, which may not allocate: it runs inside a training job's NCCL call).
#pragma once

#include <cstdint>
#include <string_view>

namespace pyframes {

struct MapsLine {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  bool readable = false;
  bool writable = false;
  bool executable = false;
  // The mapped file or the kernel's name ("[stack]"), "" for anonymous memory; " (deleted)"
  // removed. Points into the line.
  std::string_view path;
};

// False for a line that is not a mapping (its address range, permissions or offset unreadable).
// A line cut short after its offset (a path longer than the caller's buffer) still parses, with
// what is left of its path.
bool parse_maps_line(std::string_view line, MapsLine& out) noexcept;

}  // namespace pyframes
