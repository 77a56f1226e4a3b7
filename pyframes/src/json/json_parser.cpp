// A strict recursive-descent JSON parser. Strict because its input is what our own writer
// produced (anything else is a damaged or foreign file, better named than half-read), bounded
// in depth because a file may be hostile, and exact for 64-bit integers (thread ids).
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "json/plain_run.h"
#include "pyframes/json_reader.h"
#include "pyframes/utf8.h"
#include "render/json_escapes.h"

namespace pyframes {

std::optional<bool> JsonValue::boolean() const {
  if (type_ != Type::Bool) return std::nullopt;
  return boolean_;
}

std::optional<int64_t> JsonValue::int64() const {
  if (type_ != Type::Number || !integral_) return std::nullopt;
  if (!negative_) {
    if (magnitude_ > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(magnitude_);
  }
  if (magnitude_ > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
  return static_cast<int64_t>(0 - magnitude_);
}

std::optional<uint64_t> JsonValue::uint64() const {
  if (type_ != Type::Number || !integral_ || (negative_ && magnitude_ != 0)) return std::nullopt;
  return magnitude_;
}

std::optional<double> JsonValue::number() const {
  if (type_ != Type::Number) return std::nullopt;
  return number_;
}

const std::string* JsonValue::string() const {
  if (type_ != Type::String) return nullptr;
  if (viewed_ && string_.empty() && !view_.empty()) string_.assign(view_);
  return &string_;
}

std::optional<std::string_view> JsonValue::text() const {
  if (type_ != Type::String) return std::nullopt;
  return viewed_ ? view_ : std::string_view(string_);
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text, JsonStrings strings = JsonStrings::Copied)
      : text_(text), views_(strings == JsonStrings::Views) {}

  // Parses one value at the current position into `out`; false on error (see error()).
  bool value(JsonValue& out, size_t depth) {
    skip_space();
    if (pos_ >= text_.size()) return fail("unexpected end of input");
    switch (text_[pos_]) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': return string_value(out);
      case 't': return literal("true", out, JsonValue::Type::Bool, true);
      case 'f': return literal("false", out, JsonValue::Type::Bool, false);
      case 'n': return literal("null", out, JsonValue::Type::Null, false);
      default: return number(out);
    }
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool at_end() const { return pos_ >= text_.size(); }
  size_t position() const { return pos_; }
  const std::string& error() const { return error_; }
  bool fail(std::string_view what) {
    if (error_.empty()) error_ = fmt::format("{} at byte {}", what, pos_);
    return false;
  }

 private:
  bool literal(std::string_view word, JsonValue& out, JsonValue::Type type, bool flag) {
    if (text_.substr(pos_, word.size()) != word) return fail("unexpected character");
    pos_ += word.size();
    out.type_ = type;
    out.boolean_ = flag;
    return true;
  }

  bool object(JsonValue& out, size_t depth) {
    return items(out, depth, JsonValue::Type::Object, '}', [&] {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail("expected a member name");
      out.keys_.emplace_back();
      if (!string(out.keys_.back())) return false;
      skip_space();
      if (!accept(':')) return fail("expected ':'");
      out.items_.emplace_back();
      return value(out.items_.back(), depth);
    });
  }

  // An object's members or an array's elements, from the opening bracket at pos_: each read by
  // `item`, separated by ',' and ended by `close`. The one loop both containers share.
  template <typename Item>
  bool items(JsonValue& out, size_t depth, JsonValue::Type type, char close, Item item) {
    if (depth > kMaxJsonDepth) return fail(fmt::format("nesting deeper than {} levels", kMaxJsonDepth));
    out.type_ = type;
    ++pos_;  // '{' or '['
    skip_space();
    if (accept(close)) return true;
    for (;;) {
      if (!item()) return false;
      skip_space();
      if (accept(',')) continue;
      if (accept(close)) return true;
      return fail(fmt::format("expected ',' or '{}'", close));
    }
  }

  // Consumes `c` when it is the next character.
  bool accept(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool array(JsonValue& out, size_t depth) {
    return items(out, depth, JsonValue::Type::Array, ']', [&] {
      out.items_.emplace_back();
      return value(out.items_.back(), depth);
    });
  }

  bool hex4(uint32_t& out) {
    if (text_.size() - pos_ < 4) return fail("short \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') {
        out |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        out |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        out |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return fail("bad \\u escape");
      }
    }
    return true;
  }

  // A \u escape (the backslash and 'u' consumed), with surrogate pairs joined; a lone
  // surrogate becomes U+FFFD, as our writer never produces one.
  bool unicode_escape(std::string& out) {
    uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      pos_ += 2;
      uint32_t low = 0;
      if (!hex4(low)) return false;
      if (low >= 0xDC00 && low <= 0xDFFF) {
        render::append_utf8(out, 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00));
        return true;
      }
      render::append_utf8(out, 0xFFFD);
      cp = low;
    }
    render::append_utf8(out, cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp);
    return true;
  }

  // Where the run of plain characters (no quote, backslash or control character) that starts
  // at `from` ends: 32 bytes at a time where the CPU can (plain_run.h), then eight at a time
  // while none of them is special, since the long strings (exports carry ledgers as base64) are
  // nearly all plain.
  size_t plain_run_end(size_t from) const {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    auto has_byte = [](uint64_t w, unsigned char c) {
      uint64_t x = w ^ (kOnes * c);
      return ((x - kOnes) & ~x & kHighs) != 0;
    };
    size_t run = from + json::plain_prefix_avx2(text_.data() + from, text_.size() - from);
    while (run + 8 <= text_.size()) {
      uint64_t w;
      std::memcpy(&w, text_.data() + run, sizeof w);
      bool below_space = ((w - kOnes * 0x20) & ~w & kHighs) != 0;
      if (below_space || has_byte(w, '"') || has_byte(w, '\\')) break;
      run += 8;
    }
    while (run < text_.size() && text_[run] != '"' && text_[run] != '\\' &&
           static_cast<unsigned char>(text_[run]) >= 0x20) {
      ++run;
    }
    return run;
  }

  // A string value: kept as a view into the text when it may be and has no escapes (its plain
  // run ends at the closing quote), else copied (the run already scanned, then the rest).
  bool string_value(JsonValue& out) {
    out.type_ = JsonValue::Type::String;
    if (!views_) return string(out.string_);
    size_t run = plain_run_end(pos_ + 1);
    if (run < text_.size() && text_[run] == '"') {
      out.viewed_ = true;
      out.view_ = text_.substr(pos_ + 1, run - pos_ - 1);
      pos_ = run + 1;
      return true;
    }
    out.string_.assign(text_.substr(pos_ + 1, run - pos_ - 1));
    pos_ = run;
    return string_rest(out.string_);
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    return string_rest(out);
  }

  // The rest of a string from pos_ (inside it, past the opening quote and what `out` holds of it)
  // to its closing quote, escapes decoded.
  bool string_rest(std::string& out) {
    for (;;) {
      size_t run = plain_run_end(pos_);
      out.append(text_.substr(pos_, run - pos_));
      pos_ = run;
      if (pos_ >= text_.size()) return fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        --pos_;
        return fail("raw control character in a string");
      }
      if (pos_ >= text_.size()) return fail("unterminated string");
      const char escape = text_[pos_++];
      if (escape == 'u') {
        if (!unicode_escape(out)) return false;
      } else if (escape == '/') {
        out += '/';
      } else if (const auto character = render::json_escaped_character(escape)) {
        out += *character;
      } else {
        return fail("bad escape in a string");
      }
    }
  }

  // RFC 8259 grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(JsonValue& out) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    const size_t int_start = pos_;
    const size_t int_digits = digits();
    if (int_digits == 0) return fail("unexpected character");
    if (int_digits > 1 && text_[int_start] == '0') return fail("leading zero in a number");
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return fail("digits expected after '.'");
      integral = false;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return fail("digits expected in the exponent");
      integral = false;
    }
    out.type_ = JsonValue::Type::Number;
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    out.negative_ = *first == '-';
    if (integral) {
      auto [end, ec] = std::from_chars(text_.data() + int_start, last, out.magnitude_);
      out.integral_ = ec == std::errc() && end == last;
    }
    auto [end, ec] = std::from_chars(first, last, out.number_);
    if (ec == std::errc::result_out_of_range) {
      out.number_ = out.negative_ ? -HUGE_VAL : HUGE_VAL;
    } else if (ec != std::errc() || end != last) {
      return fail("bad number");
    }
    return true;
  }

  std::string_view text_;
  bool views_ = false;
  size_t pos_ = 0;
  std::string error_;
};

namespace {

Error parse_error(const JsonParser& parser) {
  return make_error(ErrorKind::Corrupt, fmt::format("not valid JSON: {}", parser.error()),
                    "pass a document written by pyframes --json");
}

}  // namespace

Result<JsonValue> parse_json(std::string_view text, JsonStrings strings) {
  JsonParser parser(text, strings);
  JsonValue value;
  if (!parser.value(value, 0)) return parse_error(parser);
  parser.skip_space();
  if (!parser.at_end()) {
    parser.fail("unexpected data after the document");
    return parse_error(parser);
  }
  return value;
}

Result<std::vector<JsonValue>> parse_json_stream(std::string_view text) {
  JsonParser parser(text);
  std::vector<JsonValue> documents;
  parser.skip_space();
  while (!parser.at_end()) {
    documents.emplace_back();
    if (!parser.value(documents.back(), 0)) return parse_error(parser);
    parser.skip_space();
  }
  if (documents.empty()) {
    return make_error(ErrorKind::Corrupt, "no JSON document (the input is empty)",
                      "pass a document written by pyframes --json");
  }
  return documents;
}

}  // namespace pyframes
