// Memory freed by a large report, kept for what it reads next.
//
// A report over 16 384 exports reads them one by one (per reading thread): each is ~280 KiB of
// JSON whose parsed strings, its ledgers' bytes in base64, run to tens and hundreds of KiB.
// glibc's malloc serves blocks above its mmap threshold (128 KiB at start) with a mapping of
// their own, unmapped when freed, and hands memory freed at the top of a heap back to the kernel
// beyond its trim threshold (128 KiB): the next export's blocks are then fresh pages again, each
// faulted in and zeroed by the kernel. Over 16 384 exports that was 2-3 s of system time of a
// 131 072-rank report (docs/benchmarks.md, the seventh round of issue 42). Raised thresholds keep
// those blocks in the heap and the freed memory with the process, to be used again.
#pragma once

namespace hangshim::cli {

// Raises glibc's mmap and trim thresholds for this process (mallopt); nothing it starts
// inherits them. A no-op where the C library is not glibc.
void reuse_freed_memory();

}  // namespace hangshim::cli
