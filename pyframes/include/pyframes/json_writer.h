// A small streaming JSON writer: objects, arrays, strings, integers, booleans, null. Strings are
// escaped per RFC 8259 (quote, backslash, every control character) and invalid UTF-8 is replaced
// by U+FFFD, so whatever bytes a target holds, the document stays valid. Non-ASCII text is
// written as UTF-8; U+2028/U+2029 are escaped so the output is also valid JavaScript.
// Misuse (a value where a key is expected, unbalanced ends) is a programming error: it asserts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pyframes {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = false) : pretty_(pretty) {}

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
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(unsigned number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  // key(name) followed by value(v), for chains of fields.
  template <class T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // Elements of the array this writer has open, written apart (on another thread) by a writer
  // from elements_of(*this), then added in their place with append_elements: the document comes
  // out byte for byte as if this writer had written them itself.
  JsonWriter elements_of() const;
  JsonWriter& append_elements(JsonWriter&& elements);

  // The document so far; complete once every begin_* has its end_*.
  const std::string& str() const { return out_; }
  // Room for a document of about `bytes`: one allocation instead of a growing string's copies
  // (each doubling holds the old and the new string at once). Pages never written cost nothing.
  void reserve(size_t bytes) { out_.reserve(bytes); }
  // The document, moved out (the writer is left empty): a large document is not copied again.
  std::string take() && { return std::move(out_); }
  bool complete() const { return stack_.empty() && !out_.empty(); }

 private:
  struct Level {
    bool is_object = false;
    bool empty = true;
  };
  void before_value();
  void newline_indent();
  void close(bool is_object, char bracket);

  bool pretty_ = false;
  bool after_key_ = false;
  std::string out_;
  std::vector<Level> stack_;
};

// Appends `text` as a quoted, escaped JSON string.
void append_json_string(std::string& out, std::string_view text);

}  // namespace pyframes
