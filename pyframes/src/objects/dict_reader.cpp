// Dicts and instance dicts. Keys layouts:
//   3.6-3.10  dk_size (entries follow an index table of dk_size slots, 1/2/4/8 bytes each
//             by dk_size), entries {hash, key, value}; split tables keep values in ma_values[i]
//   3.11+     dk_log2_size / dk_log2_index_bytes / dk_kind; "unicode" keys use {key, value}
//             entries, general keys {hash, key, value}; split values in PyDictValues.values[i]
// Instance dicts: tp_dictoffset (<= 3.10 and non-managed types); managed dicts (3.11+) live at
// a fixed negative offset: 3.11 a dict pointer plus a values pointer, 3.12 one word that is a
// dict or (low bit set) values - 1, 3.13+ a dict pointer with the values inline after the object.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "objects/object_reader.h"

namespace pyframes {

namespace {

constexpr int64_t kMaxEntries = 1 << 20;

struct KeysShape {
  uint64_t entries = 0;  // address of entry 0
  int64_t nentries = 0;
  int entry_size = 0;
  int key_at = 0;  // offset of the key pointer in an entry
};

std::optional<KeysShape> keys_shape(const Memory& memory, const Layout& layout, uint64_t keys) {
  const auto& k = layout.dict_keys;
  KeysShape shape;
  auto nentries = memory.read_value<int64_t>(keys + static_cast<uint64_t>(k.dk_nentries));
  if (!nentries || *nentries < 0 || *nentries > kMaxEntries) return std::nullopt;
  shape.nentries = *nentries;
  uint64_t index_bytes = 0;
  bool general = true;
  if (k.dk_size >= 0) {
    auto size = memory.read_value<int64_t>(keys + static_cast<uint64_t>(k.dk_size));
    if (!size || *size <= 0 || *size > 4 * kMaxEntries || (*size & (*size - 1)) != 0) return std::nullopt;
    int width = *size <= 0xff ? 1 : *size <= 0xffff ? 2 : *size <= 0xffffffffll ? 4 : 8;
    index_bytes = static_cast<uint64_t>(*size) * static_cast<uint64_t>(width);
  } else {
    uint8_t header[3];
    // dk_log2_size, dk_log2_index_bytes and dk_kind are consecutive bytes.
    if (k.dk_log2_index_bytes != k.dk_log2_size + 1 || k.dk_kind != k.dk_log2_size + 2) return std::nullopt;
    if (memory.read(keys + static_cast<uint64_t>(k.dk_log2_size), header, sizeof header) != ReadStatus::Ok) {
      return std::nullopt;
    }
    if (header[0] > 24 || header[1] > 27) return std::nullopt;
    index_bytes = uint64_t{1} << header[1];
    general = header[2] == k.dk_kind_general;
  }
  shape.entries = keys + static_cast<uint64_t>(k.dk_indices) + index_bytes;
  shape.entry_size = general ? k.entry_size : k.unicode_entry_size;
  shape.key_at = general ? 8 : 0;
  if (shape.entry_size <= 0) return std::nullopt;
  return shape;
}

}  // namespace

std::optional<DictView> ObjectReader::dict_view(uint64_t dict) const {
  if (!has_type_flag(dict, kTpFlagDictSubclass)) return std::nullopt;
  auto keys = memory_.read_pointer(dict + static_cast<uint64_t>(layout_.dict.ma_keys));
  auto values = memory_.read_pointer(dict + static_cast<uint64_t>(layout_.dict.ma_values));
  if (!keys || *keys == 0 || !values) return std::nullopt;
  return DictView{*keys, *values};
}

std::optional<int64_t> ObjectReader::dict_size(uint64_t dict) const {
  return memory_.read_value<int64_t>(dict + static_cast<uint64_t>(layout_.dict.ma_used));
}

Result<std::vector<DictEntry>> ObjectReader::dict_entries(const DictView& view, size_t max_entries) const {
  auto shape = keys_shape(memory_, layout_, view.keys);
  if (!shape) {
    return make_error(ErrorKind::Corrupt, fmt::format("malformed dict keys at {:#x} in {}", view.keys, memory_.describe()));
  }
  size_t count = static_cast<size_t>(shape->nentries);
  std::vector<uint8_t> raw(count * static_cast<size_t>(shape->entry_size));
  if (count > 0) {
    ReadStatus status = memory_.read(shape->entries, raw.data(), raw.size());
    if (status != ReadStatus::Ok) return memory_.read_error(status, shape->entries, "dict entries");
  }
  std::vector<uint64_t> split_values;
  if (view.values != 0 && count > 0) {
    split_values.resize(count);
    uint64_t at = view.values + static_cast<uint64_t>(std::max(layout_.dict_values.values, 0));
    ReadStatus status = memory_.read(at, split_values.data(), count * sizeof(uint64_t));
    if (status != ReadStatus::Ok) return memory_.read_error(status, at, "split dict values");
  }
  std::vector<DictEntry> out;
  for (size_t i = 0; i < count && out.size() < max_entries; ++i) {
    const uint8_t* entry = raw.data() + i * static_cast<size_t>(shape->entry_size);
    DictEntry e;
    std::memcpy(&e.key, entry + shape->key_at, 8);
    if (view.values != 0) {
      e.value = split_values[i];
    } else {
      std::memcpy(&e.value, entry + shape->key_at + 8, 8);
    }
    if (e.key != 0 && e.value != 0) out.push_back(e);  // deleted slots keep a key, lose the value
  }
  return out;
}

std::optional<uint64_t> ObjectReader::dict_get_str(const DictView& view, std::string_view key) const {
  auto entries = dict_entries(view, static_cast<size_t>(kMaxEntries));
  if (!entries) return std::nullopt;
  for (const auto& e : *entries) {
    // Compare the length first: most keys are rejected without reading their characters.
    auto length = memory_.read_value<int64_t>(e.key + static_cast<uint64_t>(layout_.unicode.length));
    if (!length || static_cast<uint64_t>(*length) != key.size()) continue;
    auto text = str(e.key, key.size());
    if (text && *text == key) return e.value;
  }
  return std::nullopt;
}

std::optional<uint64_t> ObjectReader::dict_get_int(const DictView& view, uint64_t key) const {
  auto entries = dict_entries(view, static_cast<size_t>(kMaxEntries));
  if (!entries) return std::nullopt;
  for (const auto& e : *entries) {
    auto value = small_int(e.key);
    if (value && !value->negative && value->magnitude == key) return e.value;
  }
  return std::nullopt;
}

std::optional<DictView> ObjectReader::instance_dict(uint64_t object) const {
  auto type = type_of(object);
  if (!type) return std::nullopt;
  auto flags = type_flags(*type).value_or(0);
  const auto& t = layout_.type;
  bool managed = t.flag_managed_dict >= 0 && (flags & static_cast<uint64_t>(t.flag_managed_dict)) != 0;
  if (!managed) {
    auto offset = memory_.read_value<int64_t>(*type + static_cast<uint64_t>(t.tp_dictoffset));
    if (!offset || *offset <= 0 || *offset > (1 << 20)) return std::nullopt;
    auto dict = memory_.read_pointer(object + static_cast<uint64_t>(*offset));
    if (!dict || *dict == 0) return std::nullopt;
    return dict_view(*dict);
  }
  auto cached_keys = [&]() -> std::optional<uint64_t> {
    auto keys = memory_.read_pointer(*type + static_cast<uint64_t>(t.ht_cached_keys));
    if (!keys || *keys == 0) return std::nullopt;
    return keys;
  };
  auto word = memory_.read_pointer(object + static_cast<uint64_t>(static_cast<int64_t>(t.managed_dict_offset)));
  if (!word) return std::nullopt;
  if (layout_.version.at_least(3, 12) && !layout_.version.at_least(3, 13)) {
    // 3.12: one word, tagged: low bit set = (char*)PyDictValues* - 1, else PyDictObject*.
    if ((*word & 1) != 0) {
      auto keys = cached_keys();
      if (!keys) return std::nullopt;
      return DictView{*keys, *word + 1};
    }
    return *word != 0 ? dict_view(*word) : std::nullopt;
  }
  if (*word != 0) return dict_view(*word);
  if (layout_.version.at_least(3, 13)) {
    // 3.13+: no dict yet; the values live inline right after the object's basic size.
    bool inline_values = t.flag_inline_values >= 0 && (flags & static_cast<uint64_t>(t.flag_inline_values)) != 0;
    auto basic = memory_.read_value<int64_t>(*type + static_cast<uint64_t>(t.tp_basicsize));
    if (!inline_values || !basic || *basic <= 0 || *basic > (1 << 20)) return std::nullopt;
    uint64_t values = object + static_cast<uint64_t>(*basic);
    if (layout_.dict_values.valid >= 0) {
      auto valid = memory_.read_value<uint8_t>(values + static_cast<uint64_t>(layout_.dict_values.valid));
      if (!valid || *valid == 0) return std::nullopt;
    }
    auto keys = cached_keys();
    if (!keys) return std::nullopt;
    return DictView{*keys, values};
  }
  // 3.11: no dict yet; a separate values pointer next to the dict pointer.
  auto values = memory_.read_pointer(object + static_cast<uint64_t>(static_cast<int64_t>(t.managed_values_offset)));
  auto keys = cached_keys();
  if (!values || *values == 0 || !keys) return std::nullopt;
  return DictView{*keys, *values};
}

std::optional<uint64_t> ObjectReader::instance_attribute(uint64_t object, std::string_view name) const {
  auto view = instance_dict(object);
  if (!view) return std::nullopt;
  return dict_get_str(*view, name);
}

}  // namespace pyframes
