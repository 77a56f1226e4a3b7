// A private, consistent copy of a ledger file that its writer may be changing, and that anyone
// else may be cutting or replacing, while it is read.
//
// Why not read through a mapping: a file shrunk by another process under a live mapping makes
// the next access to a page past the new end a SIGBUS, which kills the reader (hangshim report
// during an incident). Reads with pread() just come back short instead, which is an error the
// caller can name.
//
// Why the copy is still torn-free: the file is copied in passes whose order replaces the
// ordering a reader gets from atomic loads on a live mapping (the writer's protocol, FORMAT.md):
//   1. the header: the publication fields (magic, counts, strings_used, ring_head);
//   2. the `state` words of the communicator and call-site entries those counts cover;
//   3. the contents: header, those entries, the used strings (all at least as new as 1-2, and
//      everything 1-2 says is published was complete before 1-2 were read);
//   4. the ring slots of the records ring_head covers, three times each (stamp before, contents,
//      stamp after: the seqlock of access.h across three copies); an entry whose stamps differ or
//      are odd is retried alone, then marked odd in the copy, which the parser counts as busy.
//      The three copies are made with passes 2, 3 and a last one of their own: the slots'
//      "before" copy is read with the states, their contents with the other contents (each
//      pass in as few reads as the parts' places allow).
// A ledger nobody writes any more (its writer took the lock of writer_lock.h, and nobody held it
// when the copy began: the process is gone, or the file is a copy) is copied in one pass instead,
// usually one read: how a directory of a whole job's ledgers gathered on one machine is read.
// Passes 1 and 2 are one read where the parts of pass 2 follow the header closely (small
// ledgers) and the last ledger read with the same scratch showed how far they reach: 3 reads
// per ledger over a directory of such ledgers (snapshot.cpp says why that order suffices).
// The publication fields and states from passes 1-2 replace those of pass 3 in the copy, so
// the parser never looks at anything the earlier passes did not vouch for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pyframes/result.h"

namespace hangshim::ledger {

// Ledgers larger than this are refused before anything is allocated (the largest geometry a
// writer can choose stays well below it).
inline constexpr uint64_t kMaxLedgerFileSize = 1ull << 30;

// Copies the `size` bytes (from fstat) of the ledger open at `fd`. A file that shrinks while
// being copied is an error naming `source`; anything else (a half-written or foreign file) is
// copied as found, for parse_ledger to judge.
pyframes::Result<std::vector<unsigned char>> snapshot_ledger(int fd, uint64_t size, const std::string& source);
// The same into `out` (resized to `size`), whose memory a caller reading many ledgers reuses.
pyframes::Result<void> snapshot_ledger_into(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out);

// Memory the passes before and after the contents read into, kept by a caller reading many
// ledgers (LedgerReader); nothing in it is looked at after the snapshot.
struct SnapshotScratch {
  // Passes 1 and 2, by file offset: the header, the entries with their states, the ring slots
  // with their stamps.
  std::vector<unsigned char> early;
  std::vector<unsigned char> after;  // the last pass: the ring slots with their stamps
  uint64_t first_read = 0;           // how much pass 1 reads: what the last ledger needed next
  uint32_t reads = 0;                // reads the last snapshot made (what tests and benchmarks count)
};
pyframes::Result<void> snapshot_ledger_into(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out,
                                            SnapshotScratch& scratch);

}  // namespace hangshim::ledger
