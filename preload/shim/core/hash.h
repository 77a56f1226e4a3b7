// A small, fast 64-bit hash for communicator keys and call-site chains. Deterministic across
// processes and machines (keys must match on every rank), never 0 (0 means "no key").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hangshim::shim {

inline constexpr uint64_t mix64(uint64_t x) noexcept {
  // splitmix64's finalizer: every input bit affects every output bit.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0x9e3779b97f4a7c15ull) noexcept : state_(mix64(seed)) {}

  Hasher& add(uint64_t value) noexcept {
    state_ = mix64(state_ ^ (value + 0x9e3779b97f4a7c15ull + (state_ << 6) + (state_ >> 2)));
    return *this;
  }
  Hasher& add_bytes(const void* data, size_t size) noexcept {
    const auto* bytes = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      add(word);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, bytes + i, size - i);
    add(tail ^ (uint64_t{size} << 56));
    return *this;
  }
  uint64_t value() const noexcept { return state_ == 0 ? 1 : state_; }

 private:
  uint64_t state_;
};

}  // namespace hangshim::shim
