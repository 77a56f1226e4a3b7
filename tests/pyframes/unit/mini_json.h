// JSON for tests: checks that renderer output, a fixture or a target's report is valid JSON
// (RFC 8259, through the library's strict parser) and gives it back as a tree, so tests compare
// values instead of strings. Throws std::runtime_error on malformed input: a test failure.
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pyframes/json_reader.h"

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
  // A number that must be an integer (a line, a count): anything else is a bad fixture.
  int as_int() const {
    const double value = number();
    if (value != std::floor(value)) throw std::runtime_error("JSON: not an integer: " + std::to_string(value));
    return static_cast<int>(value);
  }
  const Value& operator[](const std::string& key) const { return object().at(key); }
  const Value& operator[](size_t index) const { return array().at(index); }
};

// The library's strict parser (pyframes/json_reader.h) does the reading; this turns its tree
// into maps for convenient lookups, and rejects duplicate keys (a renderer bug).
inline Value to_value(const pyframes::JsonValue& json) {
  using Type = pyframes::JsonValue::Type;
  switch (json.type()) {
    case Type::Null: return Value{nullptr};
    case Type::Bool: return Value{*json.boolean()};
    case Type::Number: return Value{*json.number()};
    case Type::String: return Value{*json.string()};
    case Type::Array: {
      auto array = std::make_shared<Array>();
      for (const auto& item : json.items()) array->push_back(to_value(item));
      return Value{array};
    }
    case Type::Object: {
      auto object = std::make_shared<Object>();
      for (size_t i = 0; i < json.keys().size(); ++i) {
        if (!object->emplace(json.keys()[i], to_value(json.items()[i])).second) {
          throw std::runtime_error("invalid JSON: duplicate key " + json.keys()[i]);
        }
      }
      return Value{object};
    }
  }
  throw std::runtime_error("invalid JSON: unknown value type");
}

inline Value parse(std::string_view text) {
  auto parsed = pyframes::parse_json(text);
  if (!parsed) throw std::runtime_error(parsed.error().message);
  return to_value(*parsed);
}

inline Value parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("JSON: cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

}  // namespace mini_json
