#include "json/plain_run.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace pyframes::json {

#if defined(__x86_64__)
namespace {

__attribute__((target("avx2"))) size_t plain_prefix(const char* text, size_t size) noexcept {
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i below_space = _mm256_set1_epi8(0x1f);
  size_t at = 0;
  for (; at + 32 <= size; at += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text + at));
    // A byte below 0x20 is its own minimum with 0x1f.
    const __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, below_space), v);
    const __m256i special =
        _mm256_or_si256(control, _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)));
    const unsigned mask = static_cast<unsigned>(_mm256_movemask_epi8(special));
    if (mask != 0) return at + static_cast<size_t>(__builtin_ctz(mask));
  }
  return at;
}

}  // namespace

size_t plain_prefix_avx2(const char* text, size_t size) noexcept {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2 ? plain_prefix(text, size) : 0;
}

#else

size_t plain_prefix_avx2(const char*, size_t) noexcept { return 0; }

#endif

}  // namespace pyframes::json
