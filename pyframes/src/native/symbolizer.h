// Native frames get names: the function symbol that contains the address (.symtab, else a
// separate debug file found by build-id, plus .dynsym), demangled; "module+0xoffset" data when
// nothing is known. In a stripped file the evaluation loop's compiler-split part is named too
// ("_PyEval_EvalFrameDefault.cold", see split_parts.h): --native merges at its frames. Symbol
// tables are read once per module and dump.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "native/module_cache.h"
#include "native/native_stack.h"
#include "pyframes/model.h"

namespace pyframes::native {

class Symbolizer {
 public:
  // `debug_directories`: roots of separate debug files (<dir>/.build-id/xx/yyyy.debug).
  explicit Symbolizer(ModuleCache& modules, std::vector<std::string> debug_directories = {"/usr/lib/debug"});
  ~Symbolizer();

  // A Frame::Kind::Native frame: address, module (the target's path), offset (the link-time
  // address, as addr2line and readelf count), function (empty when unknown).
  Frame frame(const RawFrame& raw);

 private:
  struct Function {
    uint64_t start = 0;  // link-time address
    uint64_t size = 0;
    std::string_view name;  // into an ElfFile kept open in the table
  };
  struct Table {
    std::unique_ptr<ElfFile> debug_file;  // holds the names of `functions` when they came from it
    std::vector<Function> functions;      // sorted by start, one per address
    std::deque<std::string> split_names;  // "NAME.cold" of split parts found in a stripped file
  };
  const Table& table(const std::string& target_path, const LoadedModule& module);

  ModuleCache& modules_;
  std::vector<std::string> debug_directories_;
  std::unordered_map<std::string, Table> tables_;
};

// The demangled C++ name, or `name` itself when it is not a mangled name.
std::string demangle(std::string_view name);

}  // namespace pyframes::native
