// Base64 decoding 32 characters at a time with AVX2 (Muła and Lemire, "Faster Base64 Encoding
// and Decoding Using AVX2 Instructions", 2018): an export's ledgers are megabytes of base64, and
// the table decoder (base64.cpp) was the largest single cost of a report over thousands of
// exports. Used only where the CPU has AVX2 (checked at run time: the release runs anywhere).
#pragma once

#include <cstddef>

namespace hangshim::report {

struct Avx2Decoded {
  size_t chars = 0;    // characters consumed, a multiple of 32
  size_t bytes = 0;    // bytes written, 24 per 32 characters
  bool invalid = false;  // a character outside the alphabet ('=' included) in a block: not base64
};

// Decodes whole blocks of 32 characters from `in` (`length` of them, no padding among them)
// into `out` while they fit in `capacity`, writing only the decoded bytes; the caller decodes
// the rest. `out_is_zeroed`: blocks of 32 'A's (24 zero bytes) are skipped, not written.
// Returns nothing decoded where the CPU lacks AVX2.
Avx2Decoded base64_decode_avx2(const unsigned char* in, size_t length, unsigned char* out, size_t capacity,
                               bool out_is_zeroed);

}  // namespace hangshim::report
