#include "report/inputs/timing_history.h"

#include <algorithm>

namespace hangshim::report {

namespace {

// 7 bits a byte, the lowest first; the top bit says another byte follows. At most 10 bytes.
uint8_t* put_varint(uint8_t* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}

// A difference as an unsigned number small in either direction: 0, -1, 1, -2, ... -> 0, 1, 2, 3.
uint64_t zigzag(uint64_t difference) {
  return (difference << 1) ^ (0 - (difference >> 63));
}

struct Kind {
  uint32_t comm;
  uint32_t callsite;
  uint16_t flags;
  uint8_t op;
  bool operator==(const Kind&) const = default;
};

}  // namespace

void TimingHistory::assign(const std::vector<CallTiming>& timings) {
  bytes_.clear();
  size_ = kinds_ = 0;
  if (timings.empty()) return;
  // The kinds first, so that the timings can name them by index. A rank has a few (one per
  // communicator and call-site, mostly), often the same from one call to the next.
  thread_local std::vector<Kind> kinds;
  thread_local std::vector<uint32_t> kind_of;
  thread_local std::vector<uint8_t> encoded;  // at most 4 numbers of 10 bytes a timing
  kinds.clear();
  kind_of.resize(timings.size());
  uint32_t last = 0;
  for (size_t i = 0; i < timings.size(); ++i) {
    const CallTiming& t = timings[i];
    Kind kind{t.comm, t.callsite, t.flags, t.op};
    if (kinds.empty() || !(kinds[last] == kind)) {
      auto found = std::find(kinds.begin(), kinds.end(), kind);
      if (found == kinds.end()) found = kinds.insert(kinds.end(), kind);
      last = static_cast<uint32_t>(found - kinds.begin());
    }
    kind_of[i] = last;
  }
  encoded.resize(kinds.size() * kKindBytes + timings.size() * 40);
  uint8_t* out = encoded.data();
  for (const Kind& kind : kinds) out = write_kind(out, kind.comm, kind.callsite, kind.flags, kind.op);
  uint64_t seq = 0, issued = 0;
  for (size_t i = 0; i < timings.size(); ++i) {
    const CallTiming& t = timings[i];
    out = put_varint(out, kind_of[i]);
    out = put_varint(out, zigzag(t.seq - seq));
    out = put_varint(out, zigzag(t.issued_ns - issued));
    out = put_varint(out, t.wait_us);
    seq = t.seq;
    issued = t.issued_ns;
  }
  bytes_.assign(encoded.data(), out);
  size_ = static_cast<uint32_t>(timings.size());
  kinds_ = static_cast<uint32_t>(kinds.size());
}

}  // namespace hangshim::report
