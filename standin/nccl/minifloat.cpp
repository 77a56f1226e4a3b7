#include "minifloat.h"

#include <cmath>
#include <limits>

namespace fakenccl {
namespace {

struct Derived {
  std::uint32_t exponent_mask;
  std::uint32_t mantissa_mask;
  int bias;
  std::uint32_t sign_bit;
  std::uint32_t nan_bits;         // positive quiet NaN
  std::uint32_t max_finite_bits;  // largest finite magnitude
};

Derived derive(MiniFormat f) {
  Derived d{};
  d.exponent_mask = (1u << f.exponent_bits) - 1;
  d.mantissa_mask = (1u << f.mantissa_bits) - 1;
  d.bias = (1 << (f.exponent_bits - 1)) - 1;
  d.sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
  if (f.ieee_specials) {
    d.nan_bits = (d.exponent_mask << f.mantissa_bits) | (1u << (f.mantissa_bits - 1));
    d.max_finite_bits = ((d.exponent_mask - 1) << f.mantissa_bits) | d.mantissa_mask;
  } else {
    d.nan_bits = (d.exponent_mask << f.mantissa_bits) | d.mantissa_mask;
    d.max_finite_bits = d.nan_bits - 1;
  }
  return d;
}

}  // namespace

float mini_to_float(std::uint32_t bits, MiniFormat f) {
  const Derived d = derive(f);
  const bool negative = (bits & d.sign_bit) != 0;
  const std::uint32_t exponent = (bits >> f.mantissa_bits) & d.exponent_mask;
  const std::uint32_t mantissa = bits & d.mantissa_mask;
  double magnitude;
  if (f.ieee_specials && exponent == d.exponent_mask) {
    magnitude = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                              : std::numeric_limits<double>::infinity();
  } else if (!f.ieee_specials && (bits & ~d.sign_bit) == d.nan_bits) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - d.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (d.mantissa_mask + 1)),
                           static_cast<int>(exponent) - d.bias - f.mantissa_bits);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

std::uint32_t float_to_mini(float value, MiniFormat f) {
  const Derived d = derive(f);
  const std::uint32_t sign = std::signbit(value) ? d.sign_bit : 0;
  if (std::isnan(value)) return sign | d.nan_bits;
  const double a = std::fabs(static_cast<double>(value));
  const std::uint32_t overflow =
      f.ieee_specials ? sign | (d.exponent_mask << f.mantissa_bits) : sign | d.nan_bits;
  if (std::isinf(a)) return overflow;
  if (a == 0) return sign;

  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1)
  const int min_normal_exponent = 1 - d.bias;
  const int exponent = std::max(e - 1, min_normal_exponent);
  // Quantum of the representable grid around a; a / quantum is exact in double, nearbyint
  // rounds half to even in the default rounding mode.
  const double scaled = std::ldexp(a, f.mantissa_bits - exponent);
  const auto k = static_cast<std::uint64_t>(std::nearbyint(scaled));
  // k < 2^M: subnormal (exponent field 0); k in [2^M, 2^(M+1)]: normal, and 2^(M+1) carries into
  // the next binade. Either way the encoding is (exponent - bias) * 2^M + k.
  const std::uint64_t field_base = static_cast<std::uint64_t>(exponent - min_normal_exponent)
                                   << f.mantissa_bits;
  const std::uint64_t magnitude = field_base + k;
  if (magnitude > d.max_finite_bits) return overflow;
  return sign | static_cast<std::uint32_t>(magnitude);
}

}  // namespace fakenccl
