// Ledger file names: "hangshim-r00003-node7-12345.ledger" (rank, host, pid), the stall dump's
// name next to it, and finding the ledgers in a directory. Shared by the writer (the shim) and
// every reader (hangshim ledger / report).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hangshim::ledger {

// "hangshim-r00003-node7-12345.ledger"; "hangshim-norank-node7-12345.ledger" without RANK.
// The host is reduced to [A-Za-z0-9._] (other bytes become '_'), so the name splits at '-'.
std::string ledger_file_name(const std::string& host, int64_t pid, int32_t rank);
// The stall dump next to a ledger: "hangshim-r00003-node7-12345.stacks.txt".
std::string stacks_file_name(const std::string& ledger_file_name);
// The host part as it appears in file names.
std::string file_name_host(const std::string& host);

struct ParsedLedgerName {
  int32_t rank = -1;
  std::string host;
  int64_t pid = 0;
};
// Inverse of ledger_file_name; false for names that are not ledger names.
bool parse_ledger_file_name(const std::string& name, ParsedLedgerName& out);

// The ledgers in `dir` (by name; not opened), sorted by rank, then host, then pid.
std::vector<std::string> list_ledger_files(const std::string& dir);

}  // namespace hangshim::ledger
