// What a frame shows of its code object: names, file and line table, read once per code
// object per walk (a 300-deep recursion reads one code object, not 300).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "objects/object_reader.h"
#include "pyframes/model.h"
#include "pyframes/result.h"
#include "walk/frame_chain.h"

namespace pyframes {

struct CodeInfo {
  std::string name;
  std::string qualname;  // co_qualname (3.11+), else co_name
  std::string filename;
  int firstlineno = 0;
  std::string linetable;  // co_lnotab (<= 3.9) or co_linetable
};

Result<CodeInfo> read_code_info(const ObjectReader& reader, uint64_t code);

// The source line of `offset` (a RawFrame::instruction_offset) in `info`; 0 when unknown.
int code_line(const CodeInfo& info, const Layout& layout, int32_t offset);

class CodeCache {
 public:
  explicit CodeCache(const ObjectReader& reader) : reader_(reader) {}
  // nullptr when the code object cannot be read; `error` then says why.
  const CodeInfo* get(uint64_t code, std::string* error = nullptr);
  // A model frame for a raw frame (kind Python).
  Result<Frame> frame(const RawFrame& raw);

 private:
  const ObjectReader& reader_;
  std::unordered_map<uint64_t, Result<CodeInfo>> cache_;
};

}  // namespace pyframes
