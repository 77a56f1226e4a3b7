// The narrow-float codec against independent references: the compiler's _Float16 (every half
// value, both directions, including ties), bfloat16 as the top half of a float with round to
// nearest even, e5m2 as a half rounded to its top byte, and e4m3fn from its definition.
#include "../nccl/minifloat.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

using namespace fakenccl;

namespace {

std::uint16_t half_bits(_Float16 h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
_Float16 half_from_bits(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return h;
}
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::uint16_t bf16_reference(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

}  // namespace

TEST_CASE("minifloat: half matches _Float16 for every value and every midpoint") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float want = static_cast<float>(half_from_bits(bits));
    REQUIRE(same(mini_to_float(bits, kHalf), want));
    if (std::isnan(want)) continue;
    REQUIRE(float_to_mini(want, kHalf) == bits);
    // The midpoint to the next value up (a tie: rounds to even), and just around it.
    const auto next = static_cast<std::uint16_t>(bits + 1);
    const float up = static_cast<float>(half_from_bits(next));
    if ((bits & 0x7FFF) >= 0x7C00 || std::isnan(up) || std::signbit(up) != std::signbit(want)) continue;
    const float mid = static_cast<float>((static_cast<double>(want) + up) / 2);
    for (float probe : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, mid * 2)}) {
      REQUIRE(float_to_mini(probe, kHalf) == half_bits(static_cast<_Float16>(probe)));
    }
  }
}

TEST_CASE("minifloat: half and bfloat16 of random floats") {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 2000000; ++i) {
    const std::uint32_t u = any(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    REQUIRE(float_to_mini(f, kHalf) == half_bits(static_cast<_Float16>(f)));
    REQUIRE(float_to_mini(f, kBfloat16) == bf16_reference(f));
    REQUIRE(same(mini_to_float(bf16_reference(f), kBfloat16), [&] {
      const std::uint32_t w = static_cast<std::uint32_t>(bf16_reference(f)) << 16;
      float g;
      std::memcpy(&g, &w, 4);
      return g;
    }()));
  }
}

TEST_CASE("minifloat: e5m2 is a half rounded to its top byte") {
  for (std::uint32_t b = 0; b < 0x100; ++b) {
    const float want = static_cast<float>(half_from_bits(static_cast<std::uint16_t>(b << 8)));
    REQUIRE(same(mini_to_float(b, kFloat8E5M2), want));
    if (!std::isnan(want)) REQUIRE(float_to_mini(want, kFloat8E5M2) == b);
  }
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // rounding every half value to e5m2
    const float f = static_cast<float>(half_from_bits(static_cast<std::uint16_t>(h)));
    if (std::isnan(f)) continue;
    const std::uint32_t low = h & 0xFF;
    std::uint32_t top = h >> 8;
    if (low > 0x80 || (low == 0x80 && (top & 1))) ++top;  // round to nearest even on the byte
    if ((top & 0x7F) > 0x7C) top = (top & 0x80) | 0x7C;   // past the largest finite: infinity
    REQUIRE(float_to_mini(f, kFloat8E5M2) == top);
  }
}

TEST_CASE("minifloat: e4m3fn from its definition") {
  for (std::uint32_t b = 0; b < 0x100; ++b) {
    const int exponent = static_cast<int>((b >> 3) & 15);
    const int mantissa = static_cast<int>(b & 7);
    double want = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
    if ((b & 0x7F) == 0x7F) want = NAN;
    if (b & 0x80) want = -want;
    REQUIRE(same(mini_to_float(b, kFloat8E4M3), static_cast<float>(want)));
    if (!std::isnan(want)) REQUIRE(float_to_mini(static_cast<float>(want), kFloat8E4M3) == b);
  }
  CHECK(mini_to_float(float_to_mini(448.0f, kFloat8E4M3), kFloat8E4M3) == 448.0f);
  CHECK(std::isnan(mini_to_float(float_to_mini(1000.0f, kFloat8E4M3), kFloat8E4M3)));  // no infinity
  CHECK(float_to_mini(17.0f, kFloat8E4M3) == float_to_mini(16.0f, kFloat8E4M3));  // tie to even
}
