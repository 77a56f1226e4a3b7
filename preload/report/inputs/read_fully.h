// Reading the first bytes of an open file into memory, for the inputs read whole (exports,
// Flight Recorder dumps) and the ledgers an export carries: each checks the file (a regular
// file, not too large) and sizes the buffer from fstat, then reads it with this.
#pragma once

#include <cstddef>

namespace hangshim::report {

// Reads up to `size` bytes from the start of `fd` into `out`, through interrupted reads; stops
// early at the end of the file or on an error. Returns how many bytes were read: a file cut by
// someone else meanwhile gives a short read (pread, never a mapping: no SIGBUS).
size_t read_fully(int fd, void* out, size_t size) noexcept;

}  // namespace hangshim::report
