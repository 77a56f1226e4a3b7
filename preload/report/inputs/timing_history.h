// A rank's newest completed calls as timings (CallTiming), encoded: 131 072 ranks keep 128
// each, and at 32 bytes a timing that was 4 KiB per rank, the largest part of a report's memory
// and of its page faults. Encoded, a timing is a few bytes: the index of its (communicator,
// call-site, op, flags) kind among the rank's few, then its sequence number and issue time as
// differences from the timing before it, and its wait, each as a variable-length integer (7
// bits a byte). Consecutive calls of a rank are a few numbers and microseconds to seconds
// apart: 5-10 bytes a timing, against 16 packed at fixed widths. Every value reads back exactly
// as it was given, however far apart (differences wrap around 2^64 and back).
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <vector>

namespace hangshim::report {

// When a call was issued and completed, for what needs many calls rather than the newest few:
// straggler detection (who arrives last) and `hangshim watch`'s learned stall limits.
struct CallTiming {
  uint64_t seq = 0;           // collective or send/recv number; 0 for life-cycle calls
  uint64_t issued_ns = 0;
  uint32_t wait_us = 0;       // issue to completion, in microseconds (at most about 71 minutes)
  uint32_t comm = 0;          // the ledger's communicator id (RankView::comm), 0 none
  uint32_t callsite = 0;      // the ledger's call-site id, 0 none
  uint8_t op = 0;             // ledger::Op
  uint16_t flags = 0;         // ledger::RecordFlag bits
  uint64_t wait_ns() const { return uint64_t{wait_us} * 1000; }
};

class TimingHistory {
 public:
  // Replaces the history with `timings` (oldest first), in the memory it already has.
  void assign(const std::vector<CallTiming>& timings);
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t encoded_bytes() const { return bytes_.size(); }  // what the history keeps, its kinds included
  // Calls take(timing) for each timing whose kind `keep` accepts, oldest first: `keep` sees a
  // timing whose comm, callsite, op and flags are set (its other fields are not) and is asked
  // once per kind, not per timing, so that picking one communicator's calls out of 131 072
  // ranks' histories fills in only those calls.
  template <class Keep, class Take>
  void each(Keep keep, Take take) const;

  // Reads the timings in order, decoding one at a time.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = CallTiming;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = const CallTiming&;
    const CallTiming& operator*() const { return current_; }
    Iterator& operator++() {
      if (++i_ < history_->size_) history_->decode(at_, current_);
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    friend class TimingHistory;
    // At the first timing (i == 0) or past the last (i == size): timings decode in order only.
    Iterator(const TimingHistory* history, size_t i) : history_(history), i_(i) {
      if (i_ == 0 && history_->size_ > 0) {
        at_ = history_->bytes_.data() + history_->kinds_ * kKindBytes;
        history_->decode(at_, current_);
      }
    }
    const TimingHistory* history_;
    size_t i_;
    const uint8_t* at_ = nullptr;
    CallTiming current_;  // also what the next timing's differences are from
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size_}; }

 private:
  // A kind, as it lies at the start of bytes_: comm (4 bytes), callsite (4), flags (2), op (1).
  static constexpr size_t kKindBytes = 11;

  static uint64_t read_varint(const uint8_t*& at) {
    if (*at < 0x80) return *at++;  // most numbers: a kind, a sequence step, a short wait
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      uint8_t byte = *at++;
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
  }
  static uint64_t unzigzag(uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }
  static uint8_t* write_kind(uint8_t* at, uint32_t comm, uint32_t callsite, uint16_t flags, uint8_t op) {
    std::memcpy(at, &comm, 4);
    std::memcpy(at + 4, &callsite, 4);
    std::memcpy(at + 8, &flags, 2);
    at[10] = op;
    return at + kKindBytes;
  }
  void read_kind(uint64_t index, CallTiming& t) const {
    const uint8_t* k = bytes_.data() + index * kKindBytes;
    std::memcpy(&t.comm, k, 4);
    std::memcpy(&t.callsite, k + 4, 4);
    std::memcpy(&t.flags, k + 8, 2);
    t.op = k[10];
  }
  // The next timing's kind index; its seq, issued_ns and wait_us into `t`, which holds the
  // timing before it (zeros before the first).
  static uint64_t decode_values(const uint8_t*& at, CallTiming& t) {
    uint64_t kind = read_varint(at);
    t.seq += unzigzag(read_varint(at));
    t.issued_ns += unzigzag(read_varint(at));
    t.wait_us = static_cast<uint32_t>(read_varint(at));
    return kind;
  }
  void decode(const uint8_t*& at, CallTiming& t) const { read_kind(decode_values(at, t), t); }

  std::vector<uint8_t> bytes_;  // the kinds, then the timings
  uint32_t size_ = 0;           // timings
  uint32_t kinds_ = 0;
};

template <class Keep, class Take>
void TimingHistory::each(Keep keep, Take take) const {
  if (size_ == 0) return;
  std::array<bool, 256> few{};  // by kind index; a rank has a handful
  std::vector<char> many;       // when it has more
  if (kinds_ > few.size()) many.resize(kinds_);
  bool any = false;
  for (uint32_t k = 0; k < kinds_; ++k) {
    CallTiming t;
    read_kind(k, t);
    bool kept = keep(t);
    if (kinds_ > few.size()) {
      many[k] = kept;
    } else {
      few[k] = kept;
    }
    any = any || kept;
  }
  if (!any) return;
  const uint8_t* at = bytes_.data() + kinds_ * kKindBytes;
  CallTiming t;
  for (uint32_t i = 0; i < size_; ++i) {
    uint64_t kind = decode_values(at, t);
    if (kinds_ > few.size() ? many[kind] != 0 : few[kind]) {
      read_kind(kind, t);
      take(static_cast<const CallTiming&>(t));
    }
  }
}

}  // namespace hangshim::report
