// UTF-8 repair for text that comes from a target: file names, function names and source lines
// are bytes the target chose, and every output format must stay valid (JSON requires UTF-8; a
// terminal must not receive escape sequences it did not ask for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pyframes::render {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not one
// (bad lead byte, truncated, overlong, surrogate, beyond U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i);

// Appends the code point `code` to `out` as UTF-8 (1 to 4 bytes), U+FFFD for a value beyond
// U+10FFFF. Surrogates are encoded like other values: callers that must not emit them check first.
void append_utf8(std::string& out, uint32_t code);

// `text` with every invalid byte replaced by U+FFFD.
std::string repair_utf8(std::string_view text);

// A one-line, terminal-safe version of `text`: invalid UTF-8 repaired, tabs become spaces, other
// control characters (CR, LF, ESC, DEL) become visible escapes "\x1b", C1 controls "\u0085".
std::string printable_line(std::string_view text);

}  // namespace pyframes::render
