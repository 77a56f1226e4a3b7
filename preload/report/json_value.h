// A JSON reader for the files `hangshim report` accepts from elsewhere (exports of other nodes).
// The text is untrusted: nesting depth and size are bounded, every error is a value naming the
// byte offset, integers are kept exact (64-bit ids and nanosecond times do not fit a double).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pyframes/result.h"

namespace hangshim::report {

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::Object; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_string() const { return type_ == Type::String; }
  bool is_number() const { return type_ == Type::Number; }

  // Member `key` of an object, nullptr when absent or when this is not an object.
  const JsonValue* find(std::string_view key) const;
  const std::vector<JsonValue>& items() const { return array_; }  // empty unless an array
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return object_; }

  // Typed reads with a fallback for a missing or mistyped value.
  const std::string& str() const { return string_; }  // "" unless a string
  bool boolean(bool fallback = false) const { return type_ == Type::Bool ? bool_ : fallback; }
  // Exact integers; a number with a fraction, out of range or of the wrong sign gives `fallback`.
  uint64_t u64(uint64_t fallback = 0) const;
  int64_t i64(int64_t fallback = 0) const;

  // Convenience: member `key` as string / integer, fallback when missing or mistyped.
  std::string get_str(std::string_view key, std::string fallback = {}) const;
  uint64_t get_u64(std::string_view key, uint64_t fallback = 0) const;
  int64_t get_i64(std::string_view key, int64_t fallback = 0) const;
  bool get_bool(std::string_view key, bool fallback = false) const;

 private:
  friend class JsonParser;
  Type type_ = Type::Null;
  bool bool_ = false;
  bool integer_ = false;   // the number was written without fraction or exponent
  bool negative_ = false;
  uint64_t magnitude_ = 0;  // |value| of an integer
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> object_;
};

struct JsonLimits {
  size_t max_depth = 64;
};

// Parses one JSON document (RFC 8259; surrounding whitespace allowed). `source` names the text
// in error messages.
pyframes::Result<JsonValue> parse_json(std::string_view text, const std::string& source, const JsonLimits& limits = {});

}  // namespace hangshim::report
