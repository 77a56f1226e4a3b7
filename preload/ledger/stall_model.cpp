#include "ledger/stall_model.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace hangshim::ledger {

namespace {

constexpr uint64_t kMs = 1000000;

// upper[b]: the longest wait bucket b holds, 2^(b/2) ms (bucket 0: under 1 ms).
struct BucketEdges {
  std::array<uint64_t, StallModel::kBuckets> upper{};
  BucketEdges() {
    for (uint32_t b = 0; b < StallModel::kBuckets; ++b) {
      // ldexp, not exp2: glibc 2.29 gave exp2 a new symbol version, which an older glibc lacks
      // (libhangshim.so must load there); sqrt(2) * 2^(b/2) is the same double.
      const double power = std::ldexp(b % 2 != 0 ? std::numbers::sqrt2 : 1.0, static_cast<int>(b / 2));
      upper[b] = static_cast<uint64_t>(static_cast<double>(kMs) * power);
    }
  }
};
const BucketEdges& edges() {
  static const BucketEdges e;
  return e;
}

uint64_t seconds_ns(double s) { return static_cast<uint64_t>(s * 1e9); }

uint64_t scaled(double factor, uint64_t ns) {
  double v = factor * static_cast<double>(ns);
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

uint64_t mix(uint64_t k) {  // splitmix64's finalizer: keys differ in few low bits
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ull;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebull;
  return k ^ (k >> 31);
}

}  // namespace

StallModel::StallModel(StallModelSettings settings, uint32_t slots) : settings_(settings) {
  uint32_t n = 16;
  while (n < slots && n < (1u << 20)) n <<= 1;
  slots_.resize(n);
  edges();  // built here, not on the first learn
}

uint64_t StallModel::key(uint32_t comm, uint32_t callsite, uint8_t op) {
  uint64_t high = uint64_t{comm} + 1;  // never 0: 0 marks an empty slot
  return callsite != 0 ? (high << 32) | callsite : (high << 32) | 0x80000000u | op;
}

uint32_t StallModel::bucket_of(uint64_t wait_ns) {
  const auto& upper = edges().upper;
  auto it = std::upper_bound(upper.begin(), upper.end(), wait_ns);
  return it == upper.end() ? kBuckets - 1 : static_cast<uint32_t>(it - upper.begin());
}

uint64_t StallModel::bucket_upper_ns(uint32_t bucket) { return edges().upper[std::min(bucket, kBuckets - 1)]; }

const StallModel::Slot* StallModel::find(uint64_t key) const {
  size_t mask = slots_.size() - 1;
  for (size_t i = mix(key) & mask, probes = 0; probes < slots_.size(); i = (i + 1) & mask, ++probes) {
    if (slots_[i].key == key) return &slots_[i];
    if (slots_[i].key == 0) return nullptr;
  }
  return nullptr;
}

StallModel::Slot* StallModel::find_or_add(uint64_t key) {
  size_t mask = slots_.size() - 1;
  // At most 3/4 full: probe sequences stay short, and an unknown key is found absent quickly.
  for (size_t i = mix(key) & mask, probes = 0; probes < slots_.size(); i = (i + 1) & mask, ++probes) {
    if (slots_[i].key == key) return &slots_[i];
    if (slots_[i].key == 0) {
      if (used_ * 4 >= slots_.size() * 3) return nullptr;
      ++used_;
      slots_[i].key = key;
      return &slots_[i];
    }
  }
  return nullptr;
}

void StallModel::learn(uint64_t key, uint64_t wait_ns) {
  Slot* s = find_or_add(key);
  if (s == nullptr) {
    ++dropped_;
    return;
  }
  if (s->samples != UINT32_MAX) ++s->samples;
  uint64_t& longest = s->samples <= settings_.min_samples ? s->longest_ns : s->steady_longest_ns;
  longest = std::max(longest, wait_ns);
  uint32_t b = bucket_of(wait_ns);
  if (s->counts[b] == UINT16_MAX) {  // halve: the recent past weighs as much as the distant
    s->counted = 0;
    for (auto& c : s->counts) {
      c = static_cast<uint16_t>((c + 1) / 2);  // a rare wait keeps its 1
      s->counted += c;
    }
  }
  ++s->counts[b];
  ++s->counted;
}

uint32_t StallModel::samples(uint64_t key) const {
  const Slot* s = find(key);
  return s == nullptr ? 0 : s->samples;
}

uint64_t StallModel::limit_ns(uint64_t key) const {
  const Slot* s = find(key);
  if (s == nullptr || s->samples < settings_.min_samples) {  // warm-up (or never seen)
    uint64_t longest = s == nullptr ? 0 : s->longest_ns;
    return std::max(seconds_ns(settings_.new_site_seconds), scaled(settings_.slack, longest));
  }
  // p99 of all waits but the warm-up's longest: the bucket holding the ceil(0.99 (n - 1))-th
  // smallest, bounded by its edge and by the longest wait (the last bucket has no edge).
  uint64_t p99 = 0, longest = std::max(s->longest_ns, s->steady_longest_ns);
  uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(0.99 * static_cast<double>(s->counted - 1))));
  uint64_t seen = 0;
  for (uint32_t b = 0; b < kBuckets; ++b) {
    seen += s->counts[b];
    if (seen >= rank) {
      p99 = b == kBuckets - 1 ? longest : std::min(bucket_upper_ns(b), longest);
      break;
    }
  }
  return std::max({seconds_ns(settings_.floor_seconds), scaled(settings_.slack, p99),
                   scaled(settings_.recurring_slack, s->steady_longest_ns)});
}

}  // namespace hangshim::ledger
