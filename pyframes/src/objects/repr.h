// Bounded, Python-like reprs of target objects for --locals: None, bool, int, float, str,
// bytes, tuple, list and dict in full detail (first items of containers, lengths, truncated
// strings; containers cut by size, not depth); anything else as <type object at 0x...>. Never more than kMaxRepr bytes.
#pragma once

#include <cstdint>
#include <string>

#include "objects/object_reader.h"

namespace pyframes {

inline constexpr size_t kMaxRepr = 256;

std::string repr_object(const ObjectReader& reader, uint64_t object);

}  // namespace pyframes
