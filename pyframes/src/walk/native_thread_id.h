// The Linux TID of a thread known by its pthread_t. CPython 3.11+ stores it in the thread
// state; before that only pthread_self() is kept (PyThreadState.thread_id), which on glibc is
// the address of the thread's struct pthread, whose `tid` field holds the TID. The field's
// offset is found at run time in this process (searching our own struct pthread for gettid()),
// not hard-coded: it differs between glibc versions.
#pragma once

#include <cstdint>
#include <optional>

#include "pyframes/memory.h"

namespace pyframes {

// Offset of `tid` in glibc's struct pthread, or -1 when it cannot be found (not glibc).
int pthread_tid_offset();

// Reads the TID of the thread whose pthread_t is `pthread` in the target; nullopt when
// unreadable or implausible. Assumes the target's libc matches ours (callers validate).
std::optional<int64_t> tid_from_pthread(const Memory& memory, uint64_t pthread);

}  // namespace pyframes
