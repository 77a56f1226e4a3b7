// The lock a ledger's writer holds for as long as it may write to the file, so that a reader can
// tell a ledger nobody writes any more (its process is gone, or the file is a copy: a directory
// of 131 072 ranks' ledgers gathered on one machine) from one a live process is changing, and
// copy the former in one read instead of the seqlock passes of snapshot.h.
//
// An open-file-description lock (F_OFD_SETLK, Linux 3.15+): a read lock on the file's first
// byte, taken on the writer's own descriptor before the file has its size and name. It lasts as
// long as any descriptor of that open file is open: the writer keeps its descriptor for as long
// as its mapping (Writer), a fork child's copy of it (closed with the child's copy of the
// mapping) does not end it, and the kernel ends it when the process dies, however it dies. A
// writer that could take it says so in its header (kFeatureWriterLock), so that a file of an
// earlier writer, which never locks, is not taken for one nobody writes.
#pragma once

#include "ledger/format.h"

namespace hangshim::ledger {

// Takes the writer's lock on `fd` (open for writing). False where the file system or kernel has
// no such locks: the writer then leaves kFeatureWriterLock unset and readers copy its ledger
// with every pass.
bool take_writer_lock(int fd) noexcept;

enum class WriterLock {
  Held,      // some process holds it: the ledger may be changing
  Released,  // nobody holds it: whoever wrote the file is gone, or this is a copy of it
  Unknown,   // the lock cannot be asked about here (file system, kernel)
};

// Asks, without taking anything, whether anyone holds the writer's lock on the file open at `fd`
// (open for reading is enough).
WriterLock find_writer_lock(int fd) noexcept;

// Whether nobody can be writing the ledger whose header `h` was read after `lock` was asked
// (find_writer_lock, before the first read: a writer that is gone never comes back, a new process
// makes a new file): its writer took the lock, and nobody held it. A process of this host still
// alive under the header's pid keeps its ledger "being written" all the same: it could have
// closed the lock's descriptor among descriptors it did not open (closefrom), which ends the
// lock and not the writing.
bool nobody_writes(const Header& h, WriterLock lock) noexcept;

}  // namespace hangshim::ledger
