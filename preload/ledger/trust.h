// Whether a ledger file, and the directory it lies in, can be trusted to be what its owner's
// job wrote. A ledger that anyone else could have written or replaced could make a report
// blame the wrong rank, so readers refuse it instead of parsing it:
//   - the file must not be writable by group or others;
//   - it must belong to the reader, to root, or (when the reader is root, reading a user's
//     ledgers) to the owner of its directory;
//   - the directory must belong to the reader or root (any owner when the reader is root) and
//     must not be writable by group or others unless it is sticky (/tmp): there, others can
//     add files of their own, which the owner rule refuses, but not replace ours.
// The checks are pure functions of stat results so that tests can feed them any owner/mode.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "pyframes/result.h"

namespace hangshim::ledger {

pyframes::Result<void> check_ledger_trust(const std::string& path, const struct stat& file,
                                          const struct stat& directory, uint32_t reader_uid);

}  // namespace hangshim::ledger
