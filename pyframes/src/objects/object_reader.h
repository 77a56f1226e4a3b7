// Bounded readers for the CPython objects the engine needs: type checks, str (every PEP 393
// kind), bytes, int, float, tuple, list and dict (every keys layout from 3.6 on), and instance
// dicts (tp_dictoffset, 3.11+ managed dicts, 3.12 tagged dict-or-values, 3.13 inline values).
// Every read goes through Memory and is size-bounded; anything that fails validation is an
// error value, never a crash or a long loop. One reader serves one walk (not thread-safe: it
// caches type names).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/result.h"

namespace pyframes {

// Py_TPFLAGS_*_SUBCLASS bits: the same in every CPython 3.
inline constexpr uint64_t kTpFlagLongSubclass = 1ull << 24;
inline constexpr uint64_t kTpFlagListSubclass = 1ull << 25;
inline constexpr uint64_t kTpFlagTupleSubclass = 1ull << 26;
inline constexpr uint64_t kTpFlagBytesSubclass = 1ull << 27;
inline constexpr uint64_t kTpFlagUnicodeSubclass = 1ull << 28;
inline constexpr uint64_t kTpFlagDictSubclass = 1ull << 29;

// The (keys, values) pair behind a dict: a dict object's own, or a split instance dict's
// shared keys with the object's values (3.11+ objects without a materialised __dict__).
struct DictView {
  uint64_t keys = 0;
  uint64_t values = 0;  // 0 for combined tables
};

struct DictEntry {
  uint64_t key = 0;
  uint64_t value = 0;
};

// A Python int's magnitude and sign, when it fits in 64 bits.
struct SmallInt {
  bool negative = false;
  uint64_t magnitude = 0;
};

class ObjectReader {
 public:
  ObjectReader(const Memory& memory, const Layout& layout) : memory_(memory), layout_(layout) {}

  const Memory& memory() const { return memory_; }
  const Layout& layout() const { return layout_; }

  std::optional<uint64_t> type_of(uint64_t object) const;
  std::optional<uint64_t> type_flags(uint64_t type) const;
  // The type's tp_name (cached per type), nullopt when unreadable.
  std::optional<std::string> type_name(uint64_t object) const;
  bool has_type_name(uint64_t object, std::string_view name) const;
  bool has_type_flag(uint64_t object, uint64_t flag) const;

  // str -> UTF-8, at most `max_chars` code points (longer strings are an error unless
  // `truncate` is set, when the prefix is returned).
  Result<std::string> str(uint64_t object, size_t max_chars = 4096, bool truncate = false) const;
  Result<std::string> bytes(uint64_t object, size_t max_size) const;
  Result<int64_t> var_size(uint64_t object) const;  // ob_size of a PyVarObject
  std::optional<SmallInt> small_int(uint64_t object) const;
  // Decimal digits of any int (bounded: at most `max_digits` 30-bit digits are read).
  Result<std::string> int_decimal(uint64_t object, size_t max_digits = 40) const;
  std::optional<double> float_value(uint64_t object) const;
  // Items of a tuple or list (at most `max_items`; `total` gets the real length).
  Result<std::vector<uint64_t>> sequence_items(uint64_t object, size_t max_items, int64_t* total = nullptr) const;

  std::optional<DictView> dict_view(uint64_t dict) const;
  Result<std::vector<DictEntry>> dict_entries(const DictView& view, size_t max_entries) const;
  std::optional<int64_t> dict_size(uint64_t dict) const;  // ma_used
  std::optional<uint64_t> dict_get_str(const DictView& view, std::string_view key) const;
  std::optional<uint64_t> dict_get_int(const DictView& view, uint64_t key) const;
  // The instance dict of an object (nullopt when it has none or it cannot be read).
  std::optional<DictView> instance_dict(uint64_t object) const;
  std::optional<uint64_t> instance_attribute(uint64_t object, std::string_view name) const;

 private:
  std::optional<std::string_view> cached_type_name(uint64_t type) const;

  const Memory& memory_;
  const Layout& layout_;
  mutable std::unordered_map<uint64_t, std::optional<std::string>> type_names_;
};

}  // namespace pyframes
