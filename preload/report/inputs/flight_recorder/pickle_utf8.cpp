#include "report/inputs/flight_recorder/pickle_utf8.h"

namespace hangshim::report::pickle {

namespace {

// The length of the valid sequence starting at `i`, 0 when none starts there.
size_t sequence_length(std::string_view s, size_t i) {
  auto cont = [&](size_t j, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return j < s.size() && static_cast<unsigned char>(s[j]) >= lo && static_cast<unsigned char>(s[j]) <= hi;
  };
  unsigned c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) return cont(i + 1, c == 0xE0 ? 0xA0 : 0x80) && cont(i + 2) ? 3 : 0;
  if (c >= 0xF0 && c <= 0xF4) {
    return cont(i + 1, c == 0xF0 ? 0x90 : 0x80, c == 0xF4 ? 0x8F : 0xBF) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_or_replaced(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      i += 1;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace hangshim::report::pickle
