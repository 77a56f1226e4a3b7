// A rank's newest completed calls as timings (CallTiming), packed: 131 072 ranks keep 128 each,
// and at 32 bytes a timing that was 4 KiB per rank, the largest part of a report's memory and
// of its page faults. Packed, a timing is 16 bytes: its sequence number and issue time as
// offsets from the rank's smallest, its wait, and an index into the rank's few distinct
// (communicator, call-site, op, flags) kinds. A history whose values do not fit (a sequence
// range of 2^32 or more, issue times 2^56 ns apart, more than 256 kinds: a damaged or
// extraordinary ledger) is kept unpacked, so every value reads back exactly as it was given.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
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
  // Replaces the history with `timings` (oldest first).
  void assign(const std::vector<CallTiming>& timings);
  size_t size() const { return wide_.empty() ? packed_.size() : wide_.size(); }
  bool empty() const { return size() == 0; }
  CallTiming operator[](size_t i) const;
  // Calls take(timing) for each timing whose kind `keep` accepts, oldest first: `keep` sees a
  // timing whose comm, callsite, op and flags are set (its other fields are not) and is asked
  // once per kind, not per timing, so that picking one communicator's calls out of 131 072
  // ranks' histories unpacks only those calls.
  template <class Keep, class Take>
  void each(Keep keep, Take take) const;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = CallTiming;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = CallTiming;
    Iterator(const TimingHistory* history, size_t i) : history_(history), i_(i) {}
    CallTiming operator*() const { return (*history_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    const TimingHistory* history_;
    size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  struct Kind {
    uint32_t comm;
    uint32_t callsite;
    uint16_t flags;
    uint8_t op;
    bool operator==(const Kind&) const = default;
  };
  struct Packed {
    uint64_t issued_and_kind;  // issue time - issued_base_ (56 bits), then the kind's index (8 bits)
    uint32_t seq;              // sequence number - seq_base_
    uint32_t wait_us;
  };
  static_assert(sizeof(Packed) == 16);
  CallTiming unpack(const Packed& p) const {
    const Kind& kind = kinds_[p.issued_and_kind & 0xff];
    CallTiming t;
    t.seq = seq_base_ + p.seq;
    t.issued_ns = issued_base_ + (p.issued_and_kind >> 8);
    t.wait_us = p.wait_us;
    t.comm = kind.comm;
    t.callsite = kind.callsite;
    t.op = kind.op;
    t.flags = kind.flags;
    return t;
  }

  std::vector<Packed> packed_;
  std::vector<Kind> kinds_;
  std::vector<CallTiming> wide_;  // only when the values do not fit packed_
  uint64_t seq_base_ = 0;
  uint64_t issued_base_ = 0;
};

template <class Keep, class Take>
void TimingHistory::each(Keep keep, Take take) const {
  if (!wide_.empty()) {
    for (const CallTiming& t : wide_) {
      if (keep(t)) take(t);
    }
    return;
  }
  std::array<bool, 256> kept{};  // by kind index (at most 256 kinds: assign() keeps more unpacked)
  bool any = false;
  for (size_t k = 0; k < kinds_.size(); ++k) {
    CallTiming t;
    t.comm = kinds_[k].comm;
    t.callsite = kinds_[k].callsite;
    t.op = kinds_[k].op;
    t.flags = kinds_[k].flags;
    kept[k] = keep(t);
    any = any || kept[k];
  }
  if (!any) return;
  for (const Packed& p : packed_) {
    if (kept[p.issued_and_kind & 0xff]) take(unpack(p));
  }
}

}  // namespace hangshim::report
