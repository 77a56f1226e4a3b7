// The characters JSON escapes with one letter after the backslash (RFC 8259 section 7): one
// table for the writer (render/json_writer.cpp), which spells them so, and the parser
// (json/json_parser.cpp), which reads them back. '/' is left out: the parser accepts "\/", the
// writer never needs it.
#pragma once

#include <optional>

namespace pyframes::render {

struct JsonShortEscape {
  char letter;     // after the backslash: 'n'
  char character;  // what it stands for: '\n'
};

inline constexpr JsonShortEscape kJsonShortEscapes[] = {
    {'"', '"'}, {'\\', '\\'}, {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'},
};

// The letter that escapes `character`, if JSON has one.
constexpr std::optional<char> json_escape_letter(char character) {
  for (const auto& escape : kJsonShortEscapes) {
    if (escape.character == character) return escape.letter;
  }
  return std::nullopt;
}

// The character `letter` stands for after a backslash, if it is one of the one-letter escapes.
constexpr std::optional<char> json_escaped_character(char letter) {
  for (const auto& escape : kJsonShortEscapes) {
    if (escape.letter == letter) return escape.character;
  }
  return std::nullopt;
}

}  // namespace pyframes::render
