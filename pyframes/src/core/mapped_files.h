// The files a core names (NT_FILE), found on this machine. A file is looked for at its original
// path (under --root when given), through --exe for the executable, then in each --lib-search
// directory; a candidate is used only when its build-id equals the one in the core's copy of the
// file's first page (or when the core kept no build-id to compare). Files are resolved lazily,
// the first time a read or the engine needs them, so a core that maps hundreds of libraries
// costs nothing for the ones never consulted, and each missing or different file is reported
// once, when it matters.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "elf/build_id.h"
#include "core/unique_fd.h"
#include "pyframes/core.h"
#include "pyframes/module_map.h"

namespace pyframes::core {

struct LocalFile {
  std::string path;  // where it was found; empty when unusable
  UniqueFd fd;
  uint64_t size = 0;
};

class MappedFiles {
 public:
  // `read_dumped` reads bytes the core itself holds (never the files: it is used to learn what
  // the files should contain). `executable` is the target path of the main program.
  MappedFiles(const ModuleMap& modules, ImageReader read_dumped, std::string executable, const CoreOptions& options);

  // The usable local copy of `target_path`, resolved on first use; nullptr when there is none.
  // The pointer stays valid for the lifetime of this object. Thread-safe.
  const LocalFile* find(const std::string& target_path) const;

  std::vector<std::string> warnings() const;
  std::vector<UnusableFile> unusable() const;

  // Candidate local paths for a target path, in the order they are tried.
  std::vector<std::string> candidates(const std::string& target_path) const;

 private:
  LocalFile resolve(const std::string& target_path) const;  // called with mutex_ held
  std::optional<std::string> expected_build_id(const std::string& target_path) const;

  const ModuleMap& modules_;
  ImageReader read_dumped_;  // reads target memory bytes present in the core
  std::string executable_;
  std::optional<std::string> exe_override_;
  std::vector<std::string> lib_search_;
  std::string root_;

  mutable std::mutex mutex_;
  mutable std::map<std::string, LocalFile> resolved_;
  mutable std::vector<std::string> warnings_;
  mutable std::vector<UnusableFile> unusable_;
};

}  // namespace pyframes::core
