#include "cli/json_writer.h"

#include <fmt/format.h>

#include <cmath>

namespace hangshim::cli {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;  // overlong
  if (n == 3) {
    unsigned char c1 = byte(i + 1);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return 0;  // overlong, surrogate
  }
  if (n == 4) {
    unsigned char c1 = byte(i + 1);
    if ((c == 0xF0 && c1 < 0x90) || c > 0xF4 || (c == 0xF4 && c1 >= 0x90)) return 0;
  }
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
      ++i;
      continue;
    }
    size_t n = utf8_sequence(text, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  out.push_back('"');
}

void JsonWriter::newline() {
  out_.push_back('\n');
  out_.append(first_.size() * 2, ' ');
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_.push_back('}');
  if (first_.empty()) out_.push_back('\n');
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_.push_back(']');
  if (first_.empty()) out_.push_back('\n');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  append_json_string(out_, name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  separate();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  separate();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  separate();
  if (std::isfinite(number)) {
    out_ += fmt::format("{}", number);
  } else {
    out_ += "null";
  }
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  separate();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

}  // namespace hangshim::cli
