// The core file itself: validated ELF header, the PT_LOAD table and the notes, read with
// libelf without loading the segments; segment bytes are pread on demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/unique_fd.h"
#include "pyframes/memory.h"
#include "pyframes/result.h"

namespace pyframes::core {

struct Segment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0;  // into the core file
  uint64_t filesz = 0;  // bytes present in the core; < memsz when the dumper left pages out
  uint32_t flags = 0;   // PF_R | PF_W | PF_X
  uint64_t end() const { return vaddr + memsz; }
  bool contains(uint64_t address) const { return address >= vaddr && address - vaddr < memsz; }
};

struct Note {
  uint32_t type = 0;
  std::string name;  // "CORE", "LINUX", "GDB", ...
  std::vector<unsigned char> desc;
};

class CoreFile {
 public:
  // Opens `path`, inflating gzip data into a temporary file first. Errors name the problem:
  // empty, not ELF, ELF but no core, foreign class/byte order/machine, cut before its notes.
  static Result<CoreFile> open(const std::string& path);

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  uint16_t machine() const { return machine_; }
  bool gzip() const { return gzip_; }
  const std::vector<Segment>& segments() const { return segments_; }  // sorted by vaddr
  const std::vector<Note>& notes() const { return notes_; }
  // Bytes the segment table places beyond the end of the file (a core cut while written or copied).
  uint64_t missing_bytes() const { return missing_bytes_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // The segment containing `address`, or nullptr.
  const Segment* find_segment(uint64_t address) const;
  // Copies core-file bytes [offset, offset+size); Unmapped when they lie beyond the end.
  ReadStatus read_file_bytes(uint64_t offset, void* out, size_t size) const noexcept;

 private:
  std::string path_;
  UniqueFd fd_;
  uint64_t size_ = 0;
  uint16_t machine_ = 0;
  bool gzip_ = false;
  std::vector<Segment> segments_;
  std::vector<Note> notes_;
  uint64_t missing_bytes_ = 0;
  std::vector<std::string> warnings_;

  friend Result<CoreFile> parse_core(CoreFile file);
};

}  // namespace pyframes::core
