#include "report/json_value.h"

#include <fmt/format.h>

#include <limits>

namespace hangshim::report {

using pyframes::ErrorKind;
using pyframes::make_error;

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [name, value] : object_) {
    if (name == key) return &value;
  }
  return nullptr;
}

uint64_t JsonValue::u64(uint64_t fallback) const {
  if (type_ != Type::Number || !integer_ || (negative_ && magnitude_ != 0)) return fallback;
  return magnitude_;
}

int64_t JsonValue::i64(int64_t fallback) const {
  if (type_ != Type::Number || !integer_) return fallback;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!negative_) return magnitude_ <= kMax ? static_cast<int64_t>(magnitude_) : fallback;
  if (magnitude_ <= kMax) return -static_cast<int64_t>(magnitude_);
  return magnitude_ == kMax + 1 ? std::numeric_limits<int64_t>::min() : fallback;
}

std::string JsonValue::get_str(std::string_view key, std::string fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr && v->is_string() ? v->str() : fallback;
}
uint64_t JsonValue::get_u64(std::string_view key, uint64_t fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr ? v->u64(fallback) : fallback;
}
int64_t JsonValue::get_i64(std::string_view key, int64_t fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr ? v->i64(fallback) : fallback;
}
bool JsonValue::get_bool(std::string_view key, bool fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr ? v->boolean(fallback) : fallback;
}

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& source, const JsonLimits& limits)
      : text_(text), source_(source), limits_(limits) {}

  pyframes::Result<JsonValue> parse() {
    JsonValue root;
    skip_space();
    if (!value(root, 0)) return fail();
    skip_space();
    if (pos_ != text_.size()) {
      error_ = "unexpected text after the document";
      return fail();
    }
    return root;
  }

 private:
  pyframes::Error fail() const {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: not valid JSON at byte {}: {}", source_, pos_, error_),
                      "the file was cut or damaged in transfer; export it again");
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      error_ = "unknown literal";
      return false;
    }
    pos_ += word.size();
    return true;
  }

  bool value(JsonValue& out, size_t depth) {
    if (depth > limits_.max_depth) {
      error_ = fmt::format("nested deeper than {} levels", limits_.max_depth);
      return false;
    }
    if (pos_ >= text_.size()) {
      error_ = "unexpected end";
      return false;
    }
    char c = text_[pos_];
    switch (c) {
      case '{': return object(out, depth);
      case '[': return array(out, depth);
      case '"': out.type_ = JsonValue::Type::String; return string(out.string_);
      case 't': out.type_ = JsonValue::Type::Bool; out.bool_ = true; return literal("true");
      case 'f': out.type_ = JsonValue::Type::Bool; out.bool_ = false; return literal("false");
      case 'n': out.type_ = JsonValue::Type::Null; return literal("null");
      default: return number(out);
    }
  }

  bool object(JsonValue& out, size_t depth) {
    out.type_ = JsonValue::Type::Object;
    ++pos_;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        error_ = "expected a member name";
        return false;
      }
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        error_ = "expected ':'";
        return false;
      }
      ++pos_;
      skip_space();
      out.object_.emplace_back(std::move(key), JsonValue());
      if (!value(out.object_.back().second, depth + 1)) return false;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      error_ = "expected ',' or '}'";
      return false;
    }
  }

  bool array(JsonValue& out, size_t depth) {
    out.type_ = JsonValue::Type::Array;
    ++pos_;
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      out.array_.emplace_back();
      if (!value(out.array_.back(), depth + 1)) return false;
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      error_ = "expected ',' or ']'";
      return false;
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t& out) {
    if (pos_ + 4 > text_.size()) {
      error_ = "short \\u escape";
      return false;
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') {
        out |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        out |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        out |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        error_ = "bad \\u escape";
        return false;
      }
    }
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    for (;;) {
      size_t run = pos_;
      while (run < text_.size() && text_[run] != '"' && text_[run] != '\\' && static_cast<unsigned char>(text_[run]) >= 0x20) {
        ++run;
      }
      out.append(text_.substr(pos_, run - pos_));
      pos_ = run;
      if (pos_ >= text_.size()) {
        error_ = "unterminated string";
        return false;
      }
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c != '\\') {
        error_ = "control character in a string";
        return false;
      }
      if (++pos_ >= text_.size()) {
        error_ = "unterminated escape";
        return false;
      }
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (text_.substr(pos_, 2) != "\\u") {
              cp = 0xFFFD;  // a lone high surrogate
            } else {
              pos_ += 2;
              if (!hex4(low)) return false;
              cp = low >= 0xDC00 && low <= 0xDFFF ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = 0xFFFD;
          }
          append_utf8(out, cp);
          break;
        }
        default: error_ = "unknown escape"; return false;
      }
    }
  }

  bool number(JsonValue& out) {
    out.type_ = JsonValue::Type::Number;
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      out.negative_ = true;
      ++pos_;
    }
    size_t digits = pos_;
    bool overflow = false;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t d = static_cast<uint64_t>(text_[pos_] - '0');
      if (out.magnitude_ > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      out.magnitude_ = out.magnitude_ * 10 + d;
      ++pos_;
    }
    if (pos_ == digits || (text_[digits] == '0' && pos_ - digits > 1)) {
      pos_ = start;
      error_ = "expected a value";
      return false;
    }
    out.integer_ = !overflow;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      out.integer_ = false;
      ++pos_;
      size_t fraction = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == fraction) {
        error_ = "digits expected after '.'";
        return false;
      }
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      out.integer_ = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      size_t exponent = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == exponent) {
        error_ = "digits expected in the exponent";
        return false;
      }
    }
    return true;
  }

  std::string_view text_;
  const std::string& source_;
  JsonLimits limits_;
  size_t pos_ = 0;
  std::string error_;
};

pyframes::Result<JsonValue> parse_json(std::string_view text, const std::string& source, const JsonLimits& limits) {
  return JsonParser(text, source, limits).parse();
}

}  // namespace hangshim::report
