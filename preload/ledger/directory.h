// Where ledgers are kept: which directory (the shim writes there, the hangshim command reads
// there by default), its checks (created 0700, refused when someone else could write to it) and
// removal of ledgers of long-dead processes, so that /dev/shm (small in containers) does not
// fill up run after run. File names: ledger/names.h.
#pragma once

#include <cstdint>
#include <string>

#include "pyframes/result.h"

namespace hangshim::ledger {

// The ledger directory: `hangshim_dir` ($HANGSHIM_DIR) when set and not empty, else
// /dev/shm/hangshim-$UID; without trailing slashes.
std::string ledger_directory(const char* hangshim_dir, uint32_t uid);

// Creates `dir` (one level, mode 0700) if missing, then checks it is a real directory (not a
// link) owned by `uid`, writable by us and by nobody else.
pyframes::Result<void> prepare_directory(const std::string& dir, uint32_t uid);

// Removes ledgers (and their stack dumps) in `dir` written on `host` by processes that no
// longer exist and showed no sign of life for `keep_seconds`. Returns how many were removed.
int sweep_dead_ledgers(const std::string& dir, const std::string& host, uint64_t now_ns, uint32_t keep_seconds);

}  // namespace hangshim::ledger
