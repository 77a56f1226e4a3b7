// Reading JSON: a small strict parser (RFC 8259) with errors as values, and the inverse of
// render_json, which turns saved `pyframes --json` documents back into the model so that dumps
// taken on many nodes can be merged later (`pyframes --merge-json`), or by other tools (the
// hangshim report). Input is untrusted: nesting depth is bounded, every error says where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pyframes/model.h"
#include "pyframes/module_map.h"
#include "pyframes/render.h"
#include "pyframes/result.h"

namespace pyframes {

class JsonValue {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_object() const { return type_ == Type::Object; }
  bool is_array() const { return type_ == Type::Array; }

  std::optional<bool> boolean() const;
  // Numbers: integers keep all 64 bits; nullopt when the value is not a number of that kind
  // (a fraction, out of range, or not a number at all).
  std::optional<int64_t> int64() const;
  std::optional<uint64_t> uint64() const;
  std::optional<double> number() const;
  // nullptr unless a string. A string a JsonStrings::Views parse kept as a view is copied into
  // the value the first time it is asked for this way (so one document is one thread's).
  const std::string* string() const;
  // The string's characters without a copy: a view into the parsed text for a string kept as
  // one, else into the value; nullopt unless a string.
  std::optional<std::string_view> text() const;

  // Arrays and objects: items in document order (an object's values, keys alongside).
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }
  // The first member named `key`, nullptr when absent or not an object.
  const JsonValue* find(std::string_view key) const;

 private:
  friend class JsonParser;
  Type type_ = Type::Null;
  bool boolean_ = false;
  bool integral_ = false;  // the literal had no fraction or exponent and fits 64 bits
  bool negative_ = false;
  uint64_t magnitude_ = 0;
  double number_ = 0;
  bool viewed_ = false;          // the string is view_, not (yet) string_
  std::string_view view_;        // into the parsed text
  mutable std::string string_;   // or filled from view_ by string()
  std::vector<JsonValue> items_;
  std::vector<std::string> keys_;
};

inline constexpr size_t kMaxJsonDepth = 256;

// How a parse keeps string values. Copied: each in its value. Views: a string without escapes
// as a view into the text, which must then outlive the document; the long plain strings of a
// large document (an export's ledgers, as base64) are then never copied.
enum class JsonStrings { Copied, Views };

// One document; anything but whitespace after it is an error.
Result<JsonValue> parse_json(std::string_view text, JsonStrings strings = JsonStrings::Copied);
// Whitespace-separated documents one after another (`pyframes --json` outputs concatenated).
Result<std::vector<JsonValue>> parse_json_stream(std::string_view text);

// What a `pyframes --json` document holds.
struct JsonDump {
  std::vector<Process> processes;
  std::vector<FailedTarget> failures;
  // Per process: the target's mappings a debugger sent with its native frames ("mappings":
  // [{"start", "end", "offset", "path"}], gdb's `info proc mappings`), to name the frames it
  // could not; empty when the document has none. pyframes itself does not write them.
  std::vector<std::vector<Mapping>> mappings;
};

// The processes and errors of one document written by render_json (fields it does not know are
// ignored, so later additions stay readable). Errors name the bad field: "processes[2].threads
// [0].frames[5].line is not an integer".
Result<JsonDump> dump_from_json(const JsonValue& document);

}  // namespace pyframes
