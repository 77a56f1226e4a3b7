#include "objects/object_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "pyframes/utf8.h"

namespace pyframes {

namespace {

constexpr size_t kMaxTypeName = 256;

Error corrupt(const Memory& memory, uint64_t object, const std::string& what) {
  return make_error(ErrorKind::Corrupt, fmt::format("{} at {:#x} in {}", what, object, memory.describe()));
}

}  // namespace

std::optional<uint64_t> ObjectReader::type_of(uint64_t object) const {
  if (object == 0 || (object & 7) != 0) return std::nullopt;
  auto type = memory_.read_pointer(object + static_cast<uint64_t>(layout_.object.ob_type));
  if (!type || *type == 0 || (*type & 7) != 0) return std::nullopt;
  return type;
}

std::optional<uint64_t> ObjectReader::type_flags(uint64_t type) const {
  if (layout_.type.tp_flags < 0) return std::nullopt;
  return memory_.read_value<uint64_t>(type + static_cast<uint64_t>(layout_.type.tp_flags));
}

std::optional<std::string_view> ObjectReader::cached_type_name(uint64_t type) const {
  auto it = type_names_.find(type);
  if (it == type_names_.end()) {
    std::optional<std::string> name;
    if (auto name_ptr = memory_.read_pointer(type + static_cast<uint64_t>(layout_.type.tp_name)); name_ptr && *name_ptr) {
      name = memory_.read_c_string(*name_ptr, kMaxTypeName);
    }
    it = type_names_.emplace(type, std::move(name)).first;
  }
  if (!it->second) return std::nullopt;
  return std::string_view(*it->second);
}

std::optional<std::string> ObjectReader::type_name(uint64_t object) const {
  auto type = type_of(object);
  if (!type) return std::nullopt;
  auto name = cached_type_name(*type);
  if (!name) return std::nullopt;
  return std::string(*name);
}

bool ObjectReader::has_type_name(uint64_t object, std::string_view name) const {
  auto type = type_of(object);
  if (!type) return false;
  auto actual = cached_type_name(*type);
  return actual && *actual == name;
}

bool ObjectReader::has_type_flag(uint64_t object, uint64_t flag) const {
  auto type = type_of(object);
  if (!type) return false;
  auto flags = type_flags(*type);
  return flags && (*flags & flag) != 0;
}

Result<int64_t> ObjectReader::var_size(uint64_t object) const {
  auto size = memory_.read_value<int64_t>(object + static_cast<uint64_t>(layout_.object.ob_size));
  if (!size) return memory_.read_error(ReadStatus::Unmapped, object, "object size");
  return *size;
}

Result<std::string> ObjectReader::str(uint64_t object, size_t max_chars, bool truncate) const {
  if (!has_type_flag(object, kTpFlagUnicodeSubclass)) return corrupt(memory_, object, "not a str");
  const auto& u = layout_.unicode;
  auto state = memory_.read_value<uint32_t>(object + static_cast<uint64_t>(u.state));
  auto length = memory_.read_value<int64_t>(object + static_cast<uint64_t>(u.length));
  if (!state || !length) return corrupt(memory_, object, "unreadable str");
  unsigned kind = (*state >> u.kind_shift) & 7;
  bool compact = ((*state >> u.compact_shift) & 1) != 0;
  bool ascii = ((*state >> u.ascii_shift) & 1) != 0;
  if (u.ready_shift >= 0 && ((*state >> u.ready_shift) & 1) == 0) {
    return corrupt(memory_, object, "str not ready (legacy wstr-only string)");
  }
  if ((kind != 1 && kind != 2 && kind != 4) || *length < 0) return corrupt(memory_, object, "malformed str");
  size_t count = static_cast<size_t>(*length);
  if (count > max_chars) {
    if (!truncate) return corrupt(memory_, object, fmt::format("str of {} characters (limit {})", count, max_chars));
    count = max_chars;
  }
  uint64_t data = 0;
  if (compact) {
    data = object + static_cast<uint64_t>(ascii ? u.ascii_size : u.compact_size);
  } else {
    auto pointer = memory_.read_pointer(object + static_cast<uint64_t>(u.data_any));
    if (!pointer || *pointer == 0) return corrupt(memory_, object, "str without data");
    data = *pointer;
  }
  std::string raw(count * kind, '\0');
  if (count > 0) {
    ReadStatus status = memory_.read(data, raw.data(), raw.size());
    if (status != ReadStatus::Ok) return memory_.read_error(status, data, "str data");
  }
  if (kind == 1 && ascii) return raw;
  std::string out;
  out.reserve(count + count / 2);
  for (size_t i = 0; i < count; ++i) {
    uint32_t code = 0;
    if (kind == 1) {
      code = static_cast<uint8_t>(raw[i]);
    } else if (kind == 2) {
      uint16_t c16;
      std::memcpy(&c16, raw.data() + i * 2, 2);
      code = c16;
    } else {
      std::memcpy(&code, raw.data() + i * 4, 4);
    }
    render::append_utf8(out, code);
  }
  return out;
}

Result<std::string> ObjectReader::bytes(uint64_t object, size_t max_size) const {
  if (!has_type_flag(object, kTpFlagBytesSubclass)) return corrupt(memory_, object, "not a bytes object");
  PYFRAMES_TRY(size, var_size(object));
  if (size < 0 || static_cast<uint64_t>(size) > max_size) {
    return corrupt(memory_, object, fmt::format("bytes of size {} (limit {})", size, max_size));
  }
  std::string out(static_cast<size_t>(size), '\0');
  if (size > 0) {
    uint64_t data = object + static_cast<uint64_t>(layout_.bytes.ob_sval);
    ReadStatus status = memory_.read(data, out.data(), out.size());
    if (status != ReadStatus::Ok) return memory_.read_error(status, data, "bytes data");
  }
  return out;
}

namespace {

// Sign and digit count of an int: 3.12+ keep them in lv_tag, earlier versions in ob_size.
struct IntShape {
  bool negative = false;
  uint64_t digits = 0;
};

std::optional<IntShape> int_shape(const Memory& memory, const Layout& layout, uint64_t object) {
  if (layout.long_.lv_tag >= 0) {
    auto tag = memory.read_value<uint64_t>(object + static_cast<uint64_t>(layout.long_.lv_tag));
    if (!tag) return std::nullopt;
    return IntShape{(*tag & 3) == 2, *tag >> 3};
  }
  auto size = memory.read_value<int64_t>(object + static_cast<uint64_t>(layout.object.ob_size));
  if (!size) return std::nullopt;
  // The magnitude in unsigned arithmetic: a garbage INT64_MIN must not overflow the negation.
  uint64_t magnitude = *size < 0 ? 0 - static_cast<uint64_t>(*size) : static_cast<uint64_t>(*size);
  return IntShape{*size < 0, magnitude};
}

std::optional<std::vector<uint32_t>> int_digits(const Memory& memory, const Layout& layout, uint64_t object,
                                                uint64_t count) {
  std::vector<uint32_t> digits(count);
  int width = layout.long_.digit_size;
  if (width != 4 && width != 2) return std::nullopt;
  std::vector<uint8_t> raw(count * static_cast<size_t>(width));
  if (count > 0 && memory.read(object + static_cast<uint64_t>(layout.long_.ob_digit), raw.data(), raw.size()) !=
                       ReadStatus::Ok) {
    return std::nullopt;
  }
  for (size_t i = 0; i < count; ++i) {
    if (width == 4) {
      std::memcpy(&digits[i], raw.data() + i * 4, 4);
    } else {
      uint16_t d;
      std::memcpy(&d, raw.data() + i * 2, 2);
      digits[i] = d;
    }
  }
  return digits;
}

}  // namespace

std::optional<SmallInt> ObjectReader::small_int(uint64_t object) const {
  if (!has_type_flag(object, kTpFlagLongSubclass)) return std::nullopt;
  auto shape = int_shape(memory_, layout_, object);
  int bits = layout_.long_.digit_bits;
  // Compared by division: a garbage digit count times the bits per digit could wrap around.
  if (!shape || bits <= 0 || shape->digits > (64 + static_cast<uint64_t>(bits)) / static_cast<uint64_t>(bits)) {
    return std::nullopt;
  }
  auto digits = int_digits(memory_, layout_, object, shape->digits);
  if (!digits) return std::nullopt;
  uint64_t magnitude = 0;
  for (size_t i = digits->size(); i-- > 0;) {
    if (magnitude >> (64 - bits) != 0) return std::nullopt;  // would overflow 64 bits
    magnitude = (magnitude << bits) | (*digits)[i];
  }
  return SmallInt{shape->negative, magnitude};
}

Result<std::string> ObjectReader::int_decimal(uint64_t object, size_t max_digits) const {
  if (!has_type_flag(object, kTpFlagLongSubclass)) return corrupt(memory_, object, "not an int");
  auto shape = int_shape(memory_, layout_, object);
  if (!shape) return corrupt(memory_, object, "unreadable int");
  if (shape->digits > max_digits) return fmt::format("<int of {} digits>", shape->digits * 30 * 3 / 10);
  auto digits = int_digits(memory_, layout_, object, shape->digits);
  if (!digits) return corrupt(memory_, object, "unreadable int digits");
  // Repeated division of the base-2^bits number by 10^9 (schoolbook, small sizes only).
  uint32_t bits = static_cast<uint32_t>(layout_.long_.digit_bits);
  std::vector<uint32_t> number(digits->rbegin(), digits->rend());  // most significant first
  std::vector<uint32_t> chunks;                                      // base 10^9, least first
  while (!number.empty()) {
    uint64_t remainder = 0;
    std::vector<uint32_t> quotient;
    for (uint32_t d : number) {
      uint64_t current = (remainder << bits) | d;
      uint32_t q = static_cast<uint32_t>(current / 1000000000u);
      remainder = current % 1000000000u;
      if (!quotient.empty() || q != 0) quotient.push_back(q);
    }
    chunks.push_back(static_cast<uint32_t>(remainder));
    number.swap(quotient);
  }
  std::string out = shape->negative ? "-" : "";
  if (chunks.empty()) return std::string("0");
  out += fmt::format("{}", chunks.back());
  for (size_t i = chunks.size() - 1; i-- > 0;) out += fmt::format("{:09}", chunks[i]);
  return out;
}

std::optional<double> ObjectReader::float_value(uint64_t object) const {
  if (!has_type_name(object, "float")) return std::nullopt;
  return memory_.read_value<double>(object + static_cast<uint64_t>(layout_.float_.ob_fval));
}

Result<std::vector<uint64_t>> ObjectReader::sequence_items(uint64_t object, size_t max_items, int64_t* total) const {
  bool is_tuple = has_type_flag(object, kTpFlagTupleSubclass);
  bool is_list = !is_tuple && has_type_flag(object, kTpFlagListSubclass);
  if (!is_tuple && !is_list) return corrupt(memory_, object, "not a tuple or list");
  PYFRAMES_TRY(size, var_size(object));
  if (size < 0 || size > (1ll << 40)) return corrupt(memory_, object, "sequence with a bad size");
  if (total != nullptr) *total = size;
  size_t count = std::min<size_t>(static_cast<size_t>(size), max_items);
  uint64_t items = object + static_cast<uint64_t>(layout_.tuple.ob_item);
  if (is_list) {
    auto pointer = memory_.read_pointer(object + static_cast<uint64_t>(layout_.list.ob_item));
    if (!pointer) return corrupt(memory_, object, "unreadable list");
    items = *pointer;
  }
  std::vector<uint64_t> out(count);
  if (count > 0) {
    ReadStatus status = memory_.read(items, out.data(), count * sizeof(uint64_t));
    if (status != ReadStatus::Ok) return memory_.read_error(status, items, "sequence items");
  }
  return out;
}

}  // namespace pyframes
