// Where ledgers live: the directory (created 0700, refused when someone else could write to
// it), file names carrying host, pid and rank, and removal of ledgers of long-dead processes
// so that /dev/shm (small in containers) does not fill up run after run.
#pragma once

#include <cstdint>
#include <string>

#include "pyframes/result.h"

namespace hangshim::shim {

// Creates `dir` (one level, mode 0700) if missing, then checks it is a real directory (not a
// link) owned by `uid`, writable by us and by nobody else.
pyframes::Result<void> prepare_directory(const std::string& dir, uint32_t uid);

// "hangshim-r00003-node7-12345.ledger"; "hangshim-norank-node7-12345.ledger" without RANK.
// The host is reduced to [A-Za-z0-9._] (other bytes become '_').
std::string ledger_file_name(const std::string& host, int64_t pid, int32_t rank);
// The stall stack dump next to a ledger: "hangshim-r00003-node7-12345.stacks.txt".
std::string stacks_file_name(const std::string& ledger_file_name);

struct ParsedLedgerName {
  int32_t rank = -1;
  std::string host;
  int64_t pid = 0;
};
// Inverse of ledger_file_name; false for names that are not ledger names.
bool parse_ledger_file_name(const std::string& name, ParsedLedgerName& out);

// Removes ledgers (and their stack dumps) in `dir` written on `host` by processes that no
// longer exist and showed no sign of life for `keep_seconds`. Returns how many were removed.
int sweep_dead_ledgers(const std::string& dir, const std::string& host, uint64_t now_ns, uint32_t keep_seconds);

}  // namespace hangshim::shim
