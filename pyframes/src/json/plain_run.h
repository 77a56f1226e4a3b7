// How many bytes from the start of a JSON string's contents are plain (no quote, backslash or
// control character), 32 at a time with AVX2 where the CPU has it (checked at run time; the
// release runs anywhere). An export carries each ledger as a long base64 string: scanning them
// eight bytes at a time was a tenth of a report over thousands of exports.
#pragma once

#include <cstddef>

namespace pyframes::json {

// The length of the plain prefix of the `size` bytes at `text`, found 32 bytes at a time; it
// stops before the last 32, where the caller's own scan takes over. 0 without AVX2.
size_t plain_prefix_avx2(const char* text, size_t size) noexcept;

}  // namespace pyframes::json
