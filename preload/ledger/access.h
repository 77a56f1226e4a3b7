// Atomic access to ledger fields in a shared mapping, and the entry stamp protocol.
//
// The ledger is plain structs in a MAP_SHARED file, read by other processes at any moment.
// Every field that changes after publication is accessed only through these helpers (GCC
// __atomic builtins on the plain field), which keeps writer and in-process readers free of
// data races (ThreadSanitizer agrees) and never tears an 8-byte value.
//
// Ring entries are protected by a stamp (a seqlock whose writers take it with a CAS, because a
// slot can be written by its issuing thread, the watchdog and, after the ring wrapped, a new
// owner): even = stable, odd = being written. A reader copies the entry between two loads of
// the stamp and keeps the copy only if both are the same even value.
#pragma once

#include <cstdint>

#include <sched.h>

#include "ledger/format.h"

// The seqlock fences below are what the C++ memory model needs; ThreadSanitizer does not model
// fences (GCC warns under -fsanitize=thread), but every access they order is atomic, so it
// reports nothing either way.
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif

namespace hangshim::ledger {

template <class T>
inline T load_relaxed(const T& field) noexcept {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}
template <class T>
inline T load_acquire(const T& field) noexcept {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}
template <class T>
inline void store_relaxed(T& field, T value) noexcept {
  __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}
template <class T>
inline void store_release(T& field, T value) noexcept {
  __atomic_store_n(&field, value, __ATOMIC_RELEASE);
}
template <class T>
inline T fetch_add_relaxed(T& field, T value) noexcept {
  return __atomic_fetch_add(&field, value, __ATOMIC_RELAXED);
}
// Adds to a counter that one thread at a time writes (a communicator's issue counters: NCCL
// forbids using one communicator from two threads at once, and the shim's own group code relies
// on it too): an atomic load and an atomic store, each whole for readers in other processes,
// without the locked read-modify-write of fetch_add (about 8 ns each on the hot path, where a
// call makes five). Returns the value before.
template <class T>
inline T add_single_writer(T& field, T value) noexcept {
  T before = __atomic_load_n(&field, __ATOMIC_RELAXED);
  __atomic_store_n(&field, static_cast<T>(before + value), __ATOMIC_RELAXED);
  return before;
}
// Raises `field` to `value` if it is lower (completion sequence numbers).
template <class T>
inline void store_max_relaxed(T& field, T value) noexcept {
  T seen = __atomic_load_n(&field, __ATOMIC_RELAXED);
  while (seen < value && !__atomic_compare_exchange_n(&field, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Takes the stamp for writing; returns the odd value now in it. Writers hold it for a few
// dozen stores, so contention ends quickly; a holder that was descheduled is waited for with
// sched_yield (a syscall, but only in that rare case).
inline uint64_t stamp_lock(uint64_t& stamp) noexcept {
  uint64_t seen = __atomic_load_n(&stamp, __ATOMIC_RELAXED);
  for (unsigned spins = 0;; ++spins) {
    if ((seen & 1) == 0 &&
        __atomic_compare_exchange_n(&stamp, &seen, seen + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      // The odd stamp must be visible before any of the stores it guards.
      __atomic_thread_fence(__ATOMIC_RELEASE);
      return seen + 1;
    }
    if (spins > 64) {
      sched_yield();
    } else {
      cpu_relax();
    }
    seen = __atomic_load_n(&stamp, __ATOMIC_RELAXED);
  }
}

inline void stamp_unlock(uint64_t& stamp, uint64_t locked) noexcept {
  __atomic_store_n(&stamp, locked + 1, __ATOMIC_RELEASE);
}

// Copies a ring entry torn-free: true when two loads of the stamp around the copy are the same
// even value. Gives up after `attempts` tries (an entry whose writer was killed mid-write stays
// odd forever).
inline bool read_ring_entry(const RingEntry& e, RingEntry& out, int attempts) noexcept {
  for (int attempt = 0; attempt < attempts; ++attempt) {
    uint64_t before = load_acquire(e.stamp);
    if ((before & 1) != 0) {
      cpu_relax();
      continue;
    }
    out.stamp = before;
    out.index = load_relaxed(e.index);
    out.seq = load_relaxed(e.seq);
    out.count = load_relaxed(e.count);
    out.stream = load_relaxed(e.stream);
    out.issued_ns = load_relaxed(e.issued_ns);
    out.returned_ns = load_relaxed(e.returned_ns);
    out.completed_ns = load_relaxed(e.completed_ns);
    out.callsite_hit = load_relaxed(e.callsite_hit);
    out.group = load_relaxed(e.group);
    out.comm_key = load_relaxed(e.comm_key);
    out.comm = load_relaxed(e.comm);
    out.callsite = load_relaxed(e.callsite);
    out.peer = load_relaxed(e.peer);
    out.red_op = load_relaxed(e.red_op);
    out.result = load_relaxed(e.result);
    out.thread = load_relaxed(e.thread);
    out.op = load_relaxed(e.op);
    out.dtype = load_relaxed(e.dtype);
    out.flags = load_relaxed(e.flags);
    out.reserved0 = 0;
    out.reserved1 = 0;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (load_relaxed(e.stamp) == before) return true;
  }
  return false;
}

}  // namespace hangshim::ledger

#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
