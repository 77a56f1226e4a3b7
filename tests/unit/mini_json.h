// A strict little JSON parser for tests: checks that renderer output is valid JSON (RFC 8259)
// and gives it back as a tree, so tests compare values instead of formatted strings.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mini_json {

struct Value;
using Object = std::map<std::string, Value>;
using Array = std::vector<Value>;

struct Value {
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>> data;

  bool is_object() const { return data.index() == 5; }
  bool is_array() const { return data.index() == 4; }
  bool has(const std::string& key) const { return is_object() && object().count(key) != 0; }
  const Object& object() const { return *std::get<5>(data); }
  const Array& array() const { return *std::get<4>(data); }
  const std::string& str() const { return std::get<3>(data); }
  double number() const { return std::get<2>(data); }
  bool boolean() const { return std::get<1>(data); }
  const Value& operator[](const std::string& key) const { return object().at(key); }
  const Value& operator[](size_t index) const { return array().at(index); }
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value parse_document() {
    Value value = parse_value();
    skip_space();
    if (pos_ != text_.size()) fail("trailing characters");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("invalid JSON at " + std::to_string(pos_) + ": " + what);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  char peek() {
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected ") + c);
    ++pos_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Value parse_value() {
    skip_space();
    const char c = peek();
    if (c == '{') return parse_object();
    if (c == '[') return parse_array();
    if (c == '"') return Value{parse_string()};
    if (literal("true")) return Value{true};
    if (literal("false")) return Value{false};
    if (literal("null")) return Value{nullptr};
    return parse_number();
  }

  Value parse_object() {
    expect('{');
    auto object = std::make_shared<Object>();
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return Value{object};
    }
    for (;;) {
      skip_space();
      std::string key = parse_string();
      skip_space();
      expect(':');
      if (object->count(key)) fail("duplicate key " + key);
      (*object)[key] = parse_value();
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return Value{object};
    }
  }

  Value parse_array() {
    expect('[');
    auto array = std::make_shared<Array>();
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return Value{array};
    }
    for (;;) {
      array->push_back(parse_value());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return Value{array};
    }
  }

  Value parse_number() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < text_.size() && std::string_view("0123456789.eE+-").find(text_[pos_]) != std::string_view::npos) ++pos_;
    if (pos_ == start) fail("unexpected character");
    return Value{std::stod(std::string(text_.substr(start, pos_ - start)))};
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

  uint32_t parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("short \\u escape");
    uint32_t value = std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16);
    pos_ += 4;
    return value;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    for (;;) {
      const auto c = static_cast<unsigned char>(peek());
      ++pos_;
      if (c == '"') return out;
      if (c < 0x20) fail("raw control character in string");
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      const char e = peek();
      ++pos_;
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
          uint32_t cp = parse_hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            expect('\\');
            expect('u');
            cp = 0x10000 + ((cp - 0xD800) << 10) + (parse_hex4() - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

inline Value parse(std::string_view text) { return Parser(text).parse_document(); }

}  // namespace mini_json
