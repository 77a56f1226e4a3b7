// Transparent huge pages for the memory of a large report.
//
// A report over 131 072 ranks holds about 850 MiB in millions of small blocks (each rank's
// newest calls, timings, communicators, names). glibc's malloc takes that memory from the
// kernel in 4 KiB pages, each faulted in, zeroed and mapped on first touch: 237 000 page faults
// there, over a third of the report's CPU time on a virtual machine (docs/benchmarks.md). With
// transparent huge pages a fault maps 2 MiB at once. The kernel gives them to memory that asks
// (THP mode "madvise", the default of most distributions), and glibc's malloc asks only when
// its tunable glibc.malloc.hugetlb=1 is set, which it reads from GLIBC_TUNABLES when the
// program starts. So `hangshim report` and `hangshim watch`, when HANGSHIM_HUGE_PAGES=1 asks,
// run themselves once more with it set. (It covers the main arena's memory, not the reading
// threads' own arenas; putting every thread on the main arena, glibc.malloc.arena_max=1, made
// them wait for its lock: a report over 16 384 exports took 15 % more CPU than without huge
// pages.) Asked for, not the default: what a fault costs depends on the host behind the VM,
// and on the last one measured (docs/benchmarks.md, the ninth round of issue 42) the report
// took 0.5-1.5 s more CPU with huge pages than without, over ledgers and over exports, on one
// thread and on two: there a fresh 2 MiB page costs the host more than the 4 KiB pages a
// process is given back from what others freed.
#pragma once

namespace hangshim::cli {

// Runs this program again (same pid, same arguments) with GLIBC_TUNABLES set as above when
// HANGSHIM_HUGE_PAGES=1 is set, unless the user set GLIBC_TUNABLES (theirs to choose), the kernel
// gives no huge pages (THP "never", or no THP at all), the program runs under valgrind (which
// would not follow the exec), a sanitizer (which has its own malloc) or was started by naming
// the dynamic loader (which the exec would start with these arguments). In the program run
// again, removes the variables it set, so that nothing it starts inherits them. Returns when it
// does not run the program again, or when that failed (then nothing changed).
void run_again_with_huge_pages(char** argv);

}  // namespace hangshim::cli
