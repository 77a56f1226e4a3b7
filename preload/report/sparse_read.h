// Reading many ledgers fast: one ledger is a header plus sections that are mostly unused
// (capacity, not content). Mapping each file costs a mapping, its page faults and an unmap,
// which dominated `hangshim report` on thousands of ranks; this reads the header, then only the
// parts of each section the header says are in use, with pread into a buffer reused from file
// to file, and hands it to the ledger reader's own parser (preload/ledger/reader.h).
#pragma once

#include <string>

#include "ledger/reader.h"

namespace hangshim::report {

// The same result as ledger::read_ledger_file(path): anything unusual (an error, a header that
// does not add up, an entry being written right now, which a copy cannot wait out) is read
// again through read_ledger_file, so messages and live-file semantics are the reader's.
pyframes::Result<ledger::Ledger> read_ledger_sparse(const std::string& path);

}  // namespace hangshim::report
