#include "cli/malloc_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hangshim::cli {

void reuse_freed_memory() {
#if defined(__GLIBC__)
  // 32 MiB: the largest mmap threshold glibc accepts on 64-bit (half its per-thread heap),
  // above any block a report frees and allocates again (an export's strings, a thread's read
  // buffer). Larger blocks (the straggler table over 131 072 ranks, 100+ MiB) are made once.
  constexpr int kMmapThreshold = 32 << 20;
  // Freed memory kept at a heap's top, up to a per-thread heap's size (64 MiB).
  constexpr int kTrimThreshold = 64 << 20;
  ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
}

}  // namespace hangshim::cli
