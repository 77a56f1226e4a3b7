// Conversions between float and the narrow floating types NCCL reduces: IEEE half, bfloat16 and
// the two OCP 8-bit formats. One parameterised codec, rounding to nearest even.
#pragma once

#include <cstdint>

namespace fakenccl {

struct MiniFormat {
  int exponent_bits;
  int mantissa_bits;
  bool ieee_specials;  // top exponent = inf/NaN (half, bf16, e5m2); false: e4m3fn (only S.1111.111 is NaN)
};

inline constexpr MiniFormat kHalf{5, 10, true};
inline constexpr MiniFormat kBfloat16{8, 7, true};
inline constexpr MiniFormat kFloat8E4M3{4, 3, false};
inline constexpr MiniFormat kFloat8E5M2{5, 2, true};

float mini_to_float(std::uint32_t bits, MiniFormat format);
// Out-of-range values become infinity, or NaN for e4m3fn which has no infinity (OCP's
// non-saturating conversion).
std::uint32_t float_to_mini(float value, MiniFormat format);

}  // namespace fakenccl
