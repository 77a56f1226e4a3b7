// A minimal JSON reader for test fixtures (objects, arrays, strings with \u escapes and
// surrogate pairs, numbers, booleans, null). Throws std::runtime_error on malformed input: fixtures are
// our own files, so a parse error is a test failure.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "pyframes/utf8.h"

namespace json_lite {

struct Value {
  enum class Type { Null, Bool, Number, String, Array, Object } type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  const Value& operator[](const std::string& key) const {
    auto it = object.find(key);
    if (it == object.end()) throw std::runtime_error("json: no key " + key);
    return it->second;
  }
  const Value& operator[](size_t index) const { return array.at(index); }
  int as_int() const { return static_cast<int>(number); }
};

class Parser {
 public:
  explicit Parser(std::string text) : text_(std::move(text)) {}
  Value parse() {
    Value v = value();
    space();
    if (at_ != text_.size()) fail("trailing data");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string("json: ") + what + " at " + std::to_string(at_));
  }
  void space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  char next() {
    space();
    if (at_ >= text_.size()) fail("unexpected end");
    return text_[at_];
  }
  void expect(char c) {
    if (next() != c) fail("unexpected character");
    ++at_;
  }
  std::string string_value() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) fail("bad escape");
        char e = text_[at_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned code = static_cast<unsigned>(std::stoul(text_.substr(at_, 4), nullptr, 16));
            at_ += 4;
            // A UTF-16 surrogate pair (json.dumps writes characters beyond U+FFFF that way).
            if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
              unsigned low = static_cast<unsigned>(std::stoul(text_.substr(at_ + 2, 4), nullptr, 16));
              at_ += 6;
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            }
            pyframes::render::append_utf8(out, code);
            break;
          }
          default: out += e; break;
        }
      } else {
        out += c;
      }
    }
    if (at_ >= text_.size()) fail("unterminated string");
    ++at_;
    return out;
  }
  Value value() {
    Value v;
    char c = next();
    if (c == '{') {
      ++at_;
      v.type = Value::Type::Object;
      if (next() == '}') {
        ++at_;
        return v;
      }
      for (;;) {
        std::string key = string_value();
        expect(':');
        v.object.emplace(std::move(key), value());
        if (next() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      ++at_;
      v.type = Value::Type::Array;
      if (next() == ']') {
        ++at_;
        return v;
      }
      for (;;) {
        v.array.push_back(value());
        if (next() == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.type = Value::Type::String;
      v.string = string_value();
      return v;
    }
    if (text_.compare(at_, 4, "true") == 0 || text_.compare(at_, 5, "false") == 0) {
      v.type = Value::Type::Bool;
      v.boolean = text_[at_] == 't';
      at_ += v.boolean ? 4 : 5;
      return v;
    }
    if (text_.compare(at_, 4, "null") == 0) {
      at_ += 4;
      return v;
    }
    char* end = nullptr;
    v.number = std::strtod(text_.c_str() + at_, &end);
    if (end == text_.c_str() + at_) fail("bad value");
    v.type = Value::Type::Number;
    at_ = static_cast<size_t>(end - text_.c_str());
    return v;
  }

  std::string text_;
  size_t at_ = 0;
};

inline Value parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("json: cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return Parser(buffer.str()).parse();
}

}  // namespace json_lite
