// The target's address space as files: from /proc/PID/maps for a live process, from the NT_FILE
// note for a core. Symbol lookup turns (module, symbol) into a target address through this map.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pyframes {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;          // exclusive
  uint64_t file_offset = 0;  // offset into `path` of `start`
  bool readable = false;
  bool writable = false;
  bool executable = false;
  std::string path;          // empty for anonymous memory; "[heap]", "[stack]" as the kernel names them
};

// Maps a path as the target sees it to a path this process can open (container roots,
// --lib-search directories for relocated cores). Identity by default.
using FileResolver = std::function<std::string(const std::string& target_path)>;

class ModuleMap {
 public:
  ModuleMap() = default;
  explicit ModuleMap(std::vector<Mapping> mappings);

  const std::vector<Mapping>& mappings() const { return mappings_; }
  const Mapping* find(uint64_t address) const;  // the mapping containing address, or nullptr
  // Distinct file-backed paths (no "[...]" pseudo paths), in address order of first mapping.
  std::vector<std::string> files() const;
  // Mappings of one file, in address order.
  std::vector<Mapping> mappings_of(const std::string& path) const;
  // First file whose base name matches `predicate`.
  std::optional<std::string> find_file(const std::function<bool(const std::string& basename)>& predicate) const;

 private:
  std::vector<Mapping> mappings_;  // sorted by start
};

}  // namespace pyframes
