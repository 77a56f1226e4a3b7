#include "pyframes/json_writer.h"

#include <fmt/format.h>

#include <cassert>

#include "pyframes/utf8.h"
#include "render/json_escapes.h"

namespace pyframes {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    // Copy a run of ASCII that needs no escaping in one go: the common case.
    size_t run = i;
    while (run < text.size()) {
      const auto c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') break;
      ++run;
    }
    out.append(text.substr(i, run - i));
    i = run;
    if (i == text.size()) break;
    const auto byte = static_cast<unsigned char>(text[i]);
    const size_t length = render::utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (length == 1) {
      if (const auto letter = render::json_escape_letter(static_cast<char>(byte))) {
        out += '\\';
        out += *letter;
      } else if (byte < 0x20 || byte == 0x7F) {
        out += fmt::format("\\u{:04x}", byte);
      } else {
        out += static_cast<char>(byte);
      }
    } else if (length == 3 && text.substr(i, 2) == "\xE2\x80" &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  out += '"';
}

void JsonWriter::newline_indent() {
  out_ += '\n';
  out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) {
    assert(out_.empty() && "a JSON document has one top-level value");
    return;
  }
  Level& level = stack_.back();
  assert(!level.is_object && "an object member needs a key first");
  if (!level.empty) out_ += ',';
  level.empty = false;
  if (pretty_) newline_indent();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!stack_.empty() && stack_.back().is_object && !after_key_);
  Level& level = stack_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  if (pretty_) newline_indent();
  append_json_string(out_, name);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
  return *this;
}

JsonWriter JsonWriter::elements_of() const {
  assert(!stack_.empty() && !stack_.back().is_object && !after_key_ && "elements belong in an open array");
  JsonWriter part(pretty_);
  part.stack_ = stack_;  // the same depth, so the same indentation
  part.stack_.back().empty = true;
  return part;
}

JsonWriter& JsonWriter::append_elements(JsonWriter&& elements) {
  assert(!stack_.empty() && !stack_.back().is_object && !after_key_ && "elements belong in an open array");
  assert(elements.stack_.size() == stack_.size() && "the elements' writer has every element closed");
  if (elements.stack_.empty() || elements.stack_.back().empty) return *this;  // none written
  Level& level = stack_.back();
  if (!level.empty) out_ += ',';
  level.empty = false;
  out_ += elements.out_;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({true, true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({false, true});
  return *this;
}

void JsonWriter::close([[maybe_unused]] bool is_object, char bracket) {
  assert(!stack_.empty() && stack_.back().is_object == is_object && !after_key_);
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (pretty_ && !empty) newline_indent();
  out_ += bracket;
}

JsonWriter& JsonWriter::end_object() {
  close(true, '}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(false, ']');
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

}  // namespace pyframes
