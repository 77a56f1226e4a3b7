// The values a pickle holds, as the bounded reader (pickle_reader.h) builds them: None, bool,
// int (64 bits), float, str, list, tuple and dict, in one arena addressed by ValueId.
//
// Pickles share values: the memo (BINPUT/BINGET) makes one list or dict reachable from many
// places, and a list memoized before its items were appended is filled in afterwards. So a
// container is one node that every reference points at, as in Python; what reaches it cannot
// copy it. The graph may be deep or even cyclic (a list appended to itself): whatever walks it
// bounds its depth (canonical_text does; the Flight Recorder schema only looks a fixed number
// of levels down).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hangshim::report::pickle {

enum class Kind : uint8_t { None, Bool, Int, Float, String, List, Tuple, Dict };
// Python's name of the type: "NoneType", "bool", "int", "float", "str", "list", "tuple", "dict".
const char* kind_name(Kind kind) noexcept;

using ValueId = uint32_t;

class Document {
 public:
  ValueId root() const { return root_; }
  size_t value_count() const { return nodes_.size(); }

  Kind kind(ValueId v) const { return nodes_[v].kind; }
  bool is(ValueId v, Kind k) const { return nodes_[v].kind == k; }
  // The scalar's value; the kind's zero for a value of another kind.
  bool boolean(ValueId v) const;
  int64_t integer(ValueId v) const;
  double real(ValueId v) const;
  std::string_view string(ValueId v) const;
  // A list's or tuple's items in order; a dict's keys and values alternating, in the order they
  // were set (a key set twice appears twice: find() and dict_entries() keep the last value, as
  // Python does). Empty for scalars.
  std::span<const ValueId> items(ValueId v) const;

  // The value of the string key `key` in dict `dict` (the last one set), nullopt when the dict
  // has none or `dict` is no dict.
  std::optional<ValueId> find(ValueId dict, std::string_view key) const;

  // Building (the reader's side). A dict key must be hashable (no list or dict inside); the
  // reader checks that with hashable() before calling set_item.
  ValueId add_none();
  ValueId add_bool(bool value);
  ValueId add_int(int64_t value);
  ValueId add_float(double value);
  ValueId add_string(std::string_view utf8);
  ValueId add_container(Kind kind);  // List, Tuple or Dict, empty
  ValueId add_tuple(std::span<const ValueId> items);
  void append(ValueId list, ValueId item);
  void set_item(ValueId dict, ValueId key, ValueId value);
  bool hashable(ValueId v) const;  // as a dict key: scalars, and tuples of hashables
  void set_root(ValueId v) { root_ = v; }

 private:
  struct Node {
    Kind kind = Kind::None;
    bool hashable = true;  // fixed at creation: a tuple's items never change
    uint32_t container = 0;  // List/Tuple/Dict: index into containers_
    uint64_t bits = 0;       // Bool/Int/Float: the value's bits; String: offset into text_ << 32 | length
  };
  std::vector<Node> nodes_;
  std::vector<std::vector<ValueId>> containers_;
  std::string text_;  // every string's bytes, one after another
  ValueId root_ = 0;
};

// A canonical text of a value, the same as tests/preload/unit/fixtures/pickle_oracle.py writes for the
// object Python's pickle.loads returns: None "N", bools "T"/"F", ints "I<decimal>", floats
// "D<16 hex digits of the IEEE bits>", strings "S<hex of the UTF-8 bytes>;", lists "L[a,b]",
// tuples "U(a,b)", dicts "M{k:v,...}" (keys in the order first set, each with its last value, as
// a Python dict keeps them; keys are compared by their canonical text, so 1 and True stay two
// keys here though Python merges them). nullopt when the value is nested deeper than
// `max_depth` or the text would pass `max_chars` (shared sub-values are written out each time).
std::optional<std::string> canonical_text(const Document& doc, ValueId v, size_t max_depth, size_t max_chars);

}  // namespace hangshim::report::pickle
