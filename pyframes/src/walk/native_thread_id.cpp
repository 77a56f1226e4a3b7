#include "walk/native_thread_id.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace pyframes {

namespace {

// Stay inside struct pthread (2304 bytes on glibc x86-64, tid at 720): for threads other than
// the main one it sits at the very top of the thread's stack mapping, so reading further faults.
constexpr int kSearchBytes = 1024;

std::vector<int> offsets_holding_own_tid() {
  std::vector<int> out;
  // Read our own descriptor through process_vm_readv: with another libc the struct may be
  // smaller and end at an unmapped page, which must cost a short read, not a SIGSEGV.
  uint8_t bytes[kSearchBytes];
  iovec local{bytes, sizeof bytes};
  iovec remote{reinterpret_cast<void*>(pthread_self()), sizeof bytes};
  ssize_t got = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
  if (got <= 0) return out;
  int tid = static_cast<int>(::syscall(SYS_gettid));
  for (ssize_t offset = 0; offset + 4 <= got; offset += 4) {
    int value;
    std::memcpy(&value, bytes + offset, 4);
    if (value == tid) out.push_back(static_cast<int>(offset));
  }
  return out;
}

int find_offset() {
  // Candidates from this thread; when more than one word holds our TID, a second thread with
  // a different TID tells them apart (a value that merely happens to equal one TID does not
  // survive the second look). glibc has one match: no thread is started in the usual case.
  std::vector<int> first = offsets_holding_own_tid();
  if (first.empty()) return -1;
  if (first.size() == 1) return first[0];
  std::vector<int> second;
  try {
    std::thread probe([&second] { second = offsets_holding_own_tid(); });
    probe.join();
  } catch (...) {
    return first.size() == 1 ? first[0] : -1;
  }
  for (int offset : first) {
    for (int other : second) {
      if (offset == other) return offset;
    }
  }
  return -1;
}

}  // namespace

int pthread_tid_offset() {
  static std::once_flag once;
  static int offset = -1;
  std::call_once(once, [] { offset = find_offset(); });
  return offset;
}

std::optional<int64_t> tid_from_pthread(const Memory& memory, uint64_t pthread) {
  int offset = pthread_tid_offset();
  if (offset < 0 || pthread == 0) return std::nullopt;
  auto tid = memory.read_value<int32_t>(pthread + static_cast<uint64_t>(offset));
  if (!tid || *tid <= 0 || *tid > (1 << 22)) return std::nullopt;  // pid_max is at most 2^22
  return *tid;
}

}  // namespace pyframes
