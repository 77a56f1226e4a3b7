// A small streaming JSON writer for the CLI's --json output: commas and nesting are tracked,
// strings are escaped and made valid UTF-8 (bytes that are not become U+FFFD), so output built
// from untrusted ledger bytes always parses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hangshim::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int32_t number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint32_t number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);
  JsonWriter& null();

  template <class T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  const std::string& str() const { return out_; }

 private:
  void separate();
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends `text` as a JSON string literal (quotes included) to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace hangshim::cli
