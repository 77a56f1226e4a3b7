#include "report/inputs/timing_history.h"

#include <algorithm>

namespace hangshim::report {

namespace {

constexpr uint64_t kIssuedBits = 56;
constexpr size_t kMaxKinds = 256;

}  // namespace

void TimingHistory::assign(const std::vector<CallTiming>& timings) {
  packed_.clear();
  kinds_.clear();
  wide_.clear();
  seq_base_ = issued_base_ = 0;
  if (timings.empty()) return;
  uint64_t seq_min = UINT64_MAX, seq_max = 0, issued_min = UINT64_MAX, issued_max = 0;
  for (const CallTiming& t : timings) {
    seq_min = std::min(seq_min, t.seq);
    seq_max = std::max(seq_max, t.seq);
    issued_min = std::min(issued_min, t.issued_ns);
    issued_max = std::max(issued_max, t.issued_ns);
  }
  bool fits = seq_max - seq_min <= UINT32_MAX && (issued_max - issued_min) >> kIssuedBits == 0;
  // Into the memory this history already has (one reused from rank to rank: PreparedRank); a
  // copy of it, what a view keeps, has no slack.
  packed_.reserve(timings.size());
  for (const CallTiming& t : timings) {
    if (!fits) break;
    Kind kind{t.comm, t.callsite, t.flags, t.op};
    auto found = std::find(kinds_.begin(), kinds_.end(), kind);
    if (found == kinds_.end()) {
      if (kinds_.size() == kMaxKinds) {
        fits = false;
        break;
      }
      kinds_.push_back(kind);
      found = kinds_.end() - 1;
    }
    auto kind_index = static_cast<uint64_t>(found - kinds_.begin());
    packed_.push_back({(t.issued_ns - issued_min) << 8 | kind_index, static_cast<uint32_t>(t.seq - seq_min), t.wait_us});
  }
  if (!fits) {
    kinds_.clear();
    packed_.clear();
    wide_ = timings;
    return;
  }
  seq_base_ = seq_min;
  issued_base_ = issued_min;
}

CallTiming TimingHistory::operator[](size_t i) const { return wide_.empty() ? unpack(packed_[i]) : wide_[i]; }

}  // namespace hangshim::report
