#include "report/inputs/base64_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hangshim::report {

#if defined(__x86_64__)
namespace {

// Per block: classify each character by its nibbles (an invalid one has a bit in common between
// its low nibble's and its high nibble's class), add the offset that maps its range of the
// alphabet onto 0..63, then pack four 6-bit values into three bytes with two multiply-adds and
// a shuffle. The constants are the paper's.
__attribute__((target("avx2"))) Avx2Decoded decode_blocks(const unsigned char* in, size_t length, unsigned char* out,
                                                          size_t capacity, bool out_is_zeroed) {
  const __m256i lut_lo = _mm256_setr_epi8(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1A, 0x1B,
                                          0x1B, 0x1B, 0x1A, 0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
                                          0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A);
  const __m256i lut_hi = _mm256_setr_epi8(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10,
                                          0x10, 0x10, 0x10, 0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10,
                                          0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
  const __m256i lut_roll = _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 19, 4, -65,
                                            -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i mask_2f = _mm256_set1_epi8(0x2f);
  const __m256i all_a = _mm256_set1_epi8('A');
  const __m256i pack_pairs = _mm256_set1_epi32(0x01400140);
  const __m256i pack_quads = _mm256_set1_epi32(0x00011000);
  const __m256i order = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6, 5, 4, 10, 9,
                                         8, 14, 13, 12, -1, -1, -1, -1);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, -1, -1);
  Avx2Decoded d;
  while (d.chars + 32 <= length && d.bytes + 24 <= capacity) {
    const __m256i text = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + d.chars));
    if (out_is_zeroed && _mm256_movemask_epi8(_mm256_cmpeq_epi8(text, all_a)) == -1) {
      d.chars += 32;
      d.bytes += 24;
      continue;
    }
    const __m256i hi_nibbles = _mm256_and_si256(_mm256_srli_epi32(text, 4), mask_2f);
    const __m256i lo_nibbles = _mm256_and_si256(text, mask_2f);
    const __m256i lo = _mm256_shuffle_epi8(lut_lo, lo_nibbles);
    const __m256i hi = _mm256_shuffle_epi8(lut_hi, hi_nibbles);
    if (!_mm256_testz_si256(lo, hi)) {
      d.invalid = true;
      return d;
    }
    const __m256i is_slash = _mm256_cmpeq_epi8(text, mask_2f);
    const __m256i roll = _mm256_shuffle_epi8(lut_roll, _mm256_add_epi8(is_slash, hi_nibbles));
    const __m256i values = _mm256_add_epi8(text, roll);
    const __m256i pairs = _mm256_maddubs_epi16(values, pack_pairs);
    const __m256i quads = _mm256_madd_epi16(pairs, pack_quads);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(quads, order), lanes);
    // 24 bytes, no more: what follows in `out` may be another run's bytes.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + d.bytes), _mm256_castsi256_si128(packed));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + d.bytes + 16), _mm256_extracti128_si256(packed, 1));
    d.chars += 32;
    d.bytes += 24;
  }
  return d;
}

}  // namespace

Avx2Decoded base64_decode_avx2(const unsigned char* in, size_t length, unsigned char* out, size_t capacity,
                               bool out_is_zeroed) {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (!has_avx2) return {};
  return decode_blocks(in, length, out, capacity, out_is_zeroed);
}

#else

Avx2Decoded base64_decode_avx2(const unsigned char*, size_t, unsigned char*, size_t, bool) { return {}; }

#endif

}  // namespace hangshim::report
