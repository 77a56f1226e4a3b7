#include "dtype.h"

#include "minifloat.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fakenccl {
namespace {

// Integer arithmetic is done in the unsigned type so that overflow wraps (two's complement)
// instead of being undefined.
template <typename T>
T combine(T a, T b, int redop) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (redop) {
      case ncclProd: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case ncclMax: return std::max(a, b);
      case ncclMin: return std::min(a, b);
      default: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // sum, avg
    }
  } else {
    switch (redop) {
      case ncclProd: return a * b;
      case ncclMax: return std::max(a, b);
      case ncclMin: return std::min(a, b);
      default: return a + b;
    }
  }
}

template <typename T>
void reduce_native(void* out, const void* const* inputs, int ninputs, std::size_t n, int redop) {
  for (std::size_t i = 0; i < n; ++i) {
    T acc;
    std::memcpy(&acc, static_cast<const std::byte*>(inputs[0]) + i * sizeof(T), sizeof(T));
    for (int r = 1; r < ninputs; ++r) {
      T v;
      std::memcpy(&v, static_cast<const std::byte*>(inputs[r]) + i * sizeof(T), sizeof(T));
      acc = combine(acc, v, redop);
    }
    if (redop == ncclAvg) acc = static_cast<T>(acc / static_cast<T>(ninputs));
    std::memcpy(static_cast<std::byte*>(out) + i * sizeof(T), &acc, sizeof(T));
  }
}

template <typename Bits>
void reduce_mini(void* out, const void* const* inputs, int ninputs, std::size_t n, int redop,
                 MiniFormat format) {
  for (std::size_t i = 0; i < n; ++i) {
    auto element = [&](int r) {
      Bits b;
      std::memcpy(&b, static_cast<const std::byte*>(inputs[r]) + i * sizeof(Bits), sizeof(Bits));
      return mini_to_float(b, format);
    };
    float acc = element(0);
    for (int r = 1; r < ninputs; ++r) acc = combine(acc, element(r), redop);
    if (redop == ncclAvg) acc /= static_cast<float>(ninputs);
    const auto bits = static_cast<Bits>(float_to_mini(acc, format));
    std::memcpy(static_cast<std::byte*>(out) + i * sizeof(Bits), &bits, sizeof(Bits));
  }
}

}  // namespace

std::size_t dtype_size(int datatype) {
  switch (datatype) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

const char* dtype_name(int datatype) {
  switch (datatype) {
    case ncclInt8: return "int8";
    case ncclUint8: return "uint8";
    case ncclInt32: return "int32";
    case ncclUint32: return "uint32";
    case ncclInt64: return "int64";
    case ncclUint64: return "uint64";
    case ncclFloat16: return "float16";
    case ncclFloat32: return "float32";
    case ncclFloat64: return "float64";
    case ncclBfloat16: return "bfloat16";
    case ncclFloat8e4m3: return "float8e4m3";
    case ncclFloat8e5m2: return "float8e5m2";
    default: return "invalid-datatype";
  }
}

bool redop_valid(int redop) { return redop >= ncclSum && redop < ncclNumOps; }

const char* redop_name(int redop) {
  switch (redop) {
    case ncclSum: return "sum";
    case ncclProd: return "prod";
    case ncclMax: return "max";
    case ncclMin: return "min";
    case ncclAvg: return "avg";
    default: return "invalid-redop";
  }
}

void reduce_elements(void* out, const void* const* inputs, int ninputs, std::size_t n, int datatype,
                     int redop) {
  switch (datatype) {
    case ncclInt8: return reduce_native<std::int8_t>(out, inputs, ninputs, n, redop);
    case ncclUint8: return reduce_native<std::uint8_t>(out, inputs, ninputs, n, redop);
    case ncclInt32: return reduce_native<std::int32_t>(out, inputs, ninputs, n, redop);
    case ncclUint32: return reduce_native<std::uint32_t>(out, inputs, ninputs, n, redop);
    case ncclInt64: return reduce_native<std::int64_t>(out, inputs, ninputs, n, redop);
    case ncclUint64: return reduce_native<std::uint64_t>(out, inputs, ninputs, n, redop);
    case ncclFloat32: return reduce_native<float>(out, inputs, ninputs, n, redop);
    case ncclFloat64: return reduce_native<double>(out, inputs, ninputs, n, redop);
    case ncclFloat16: return reduce_mini<std::uint16_t>(out, inputs, ninputs, n, redop, kHalf);
    case ncclBfloat16: return reduce_mini<std::uint16_t>(out, inputs, ninputs, n, redop, kBfloat16);
    case ncclFloat8e4m3: return reduce_mini<std::uint8_t>(out, inputs, ninputs, n, redop, kFloat8E4M3);
    case ncclFloat8e5m2: return reduce_mini<std::uint8_t>(out, inputs, ninputs, n, redop, kFloat8E5M2);
    default: return;
  }
}

}  // namespace fakenccl
