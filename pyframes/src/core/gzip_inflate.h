// gzip-compressed cores (`gzip core.1234`, what many clusters keep) are inflated into an
// unlinked temporary file, a bounded buffer at a time, so that the core reader can pread it like
// any core while this process's memory stays small whatever the core's size.
#pragma once

#include <cstdint>
#include <string>

#include "core/unique_fd.h"
#include "pyframes/result.h"

namespace pyframes::core {

struct Inflated {
  UniqueFd fd;  // the decompressed core, deleted from the file system already
  uint64_t size = 0;
  std::string warning;  // non-empty when the gzip stream ended early (a truncated .gz)
};

// `fd` is the open .gz file (read from its start; not closed). `path` names it in messages.
// The temporary file goes to $TMPDIR, else /tmp.
Result<Inflated> inflate_to_temp_file(int fd, const std::string& path);

}  // namespace pyframes::core
