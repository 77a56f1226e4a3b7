#include "pyframes/utf8.h"

#include <fmt/format.h>

namespace pyframes::render {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The common case, checked first: printable ASCII needs no work at all.
bool printable_ascii(std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) return false;
  }
  return true;
}
}  // namespace

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code <= 0x10FFFF) {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += kReplacement;  // values no code point has
  }
}

size_t utf8_sequence_length(std::string_view text, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // overlong
    if (lead == 0xED) second_max = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // overlong
    if (lead == 0xF4) second_max = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;  // continuation byte as lead, C0/C1 overlong leads, F5..FF
  }
  if (i + length > text.size()) return 0;
  if (at(i + 1) < second_min || at(i + 1) > second_max) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (!is_continuation(at(i + k))) return 0;
  }
  return length;
}

namespace {

// Copies `text` with each byte that starts no valid sequence replaced by U+FFFD and each valid
// sequence written by `write(out, sequence)`: the one walk both repairs below share.
template <typename Write>
std::string rewrite_sequences(std::string_view text, Write write) {
  if (printable_ascii(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
    } else {
      write(out, text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string repair_utf8(std::string_view text) {
  return rewrite_sequences(text, [](std::string& out, std::string_view sequence) { out.append(sequence); });
}

std::string printable_line(std::string_view text) {
  return rewrite_sequences(text, [](std::string& out, std::string_view sequence) {
    const auto byte = static_cast<unsigned char>(sequence[0]);
    if (byte == '\t') {
      out += ' ';
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (sequence.size() == 2 && byte == 0xC2 && static_cast<unsigned char>(sequence[1]) < 0xA0) {
      // C1 controls (U+0080..U+009F): some terminals treat them as escape sequences.
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(sequence[1]));
    } else {
      out.append(sequence);
    }
  });
}

}  // namespace pyframes::render
