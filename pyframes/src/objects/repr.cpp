#include "objects/repr.h"

#include <fmt/format.h>

#include <cmath>

namespace pyframes {

namespace {

constexpr size_t kMaxStrChars = 120;
constexpr size_t kMaxBytes = 64;
constexpr size_t kMaxItems = 8;
constexpr int kMaxDepth = 2;

std::string quote_str(const std::string& utf8, bool truncated) {
  // Python's repr: single quotes unless the text holds a single quote and no double quote.
  bool single = utf8.find('\'') == std::string::npos || utf8.find('"') != std::string::npos;
  char quote = single ? '\'' : '"';
  std::string out(1, quote);
  for (unsigned char c : utf8) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through, as Python prints printable text
        }
    }
  }
  out += quote;
  if (truncated) out += "...";
  return out;
}

std::string quote_bytes(const std::string& raw, bool truncated) {
  // Same quote choice as str: double quotes when there is a ' and no ".
  bool single = raw.find('\'') == std::string::npos || raw.find('"') != std::string::npos;
  char quote = single ? '\'' : '"';
  std::string out = "b";
  out += quote;
  for (unsigned char c : raw) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  if (truncated) out += "...";
  return out;
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", value);  // shortest round-trip, like Python's repr
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string opaque(const ObjectReader& reader, uint64_t object) {
  auto name = reader.type_name(object);
  return fmt::format("<{} object at {:#x}>", name ? *name : std::string("?"), object);
}

std::string repr_at(const ObjectReader& reader, uint64_t object, int depth);

std::string sequence_repr(const ObjectReader& reader, uint64_t object, bool tuple, int depth) {
  int64_t total = 0;
  auto items = reader.sequence_items(object, kMaxItems, &total);
  if (!items) return opaque(reader, object);
  if (depth >= kMaxDepth) return fmt::format("{}...{} ({} items)", tuple ? '(' : '[', tuple ? ')' : ']', total);
  std::string out(1, tuple ? '(' : '[');
  for (size_t i = 0; i < items->size(); ++i) {
    if (i > 0) out += ", ";
    out += repr_at(reader, (*items)[i], depth + 1);
  }
  if (static_cast<int64_t>(items->size()) < total) out += fmt::format(", ... ({} items)", total);
  if (tuple && total == 1) out += ',';
  out += tuple ? ')' : ']';
  return out;
}

std::string dict_repr(const ObjectReader& reader, uint64_t object, int depth) {
  auto view = reader.dict_view(object);
  int64_t total = reader.dict_size(object).value_or(0);
  if (!view) return opaque(reader, object);
  if (depth >= kMaxDepth) return fmt::format("{{...}} ({} items)", total);
  auto entries = reader.dict_entries(*view, kMaxItems);
  if (!entries) return opaque(reader, object);
  std::string out = "{";
  for (size_t i = 0; i < entries->size(); ++i) {
    if (i > 0) out += ", ";
    out += repr_at(reader, (*entries)[i].key, depth + 1);
    out += ": ";
    out += repr_at(reader, (*entries)[i].value, depth + 1);
  }
  if (static_cast<int64_t>(entries->size()) < total) out += fmt::format(", ... ({} items)", total);
  out += '}';
  return out;
}

// Python's repr of a builtin_function_or_method (PyCFunctionObject: the object header, then
// m_ml (PyMethodDef*, whose first field is ml_name) and m_self): "<built-in function len>" for a
// module's function, "<built-in method append of list object at 0x...>" for a bound one.
std::string builtin_repr(const ObjectReader& reader, uint64_t object) {
  const Memory& memory = reader.memory();
  uint64_t head = static_cast<uint64_t>(reader.layout().object.ob_type) + 8;
  auto method_def = memory.read_pointer(object + head);
  auto self = memory.read_pointer(object + head + 8);
  auto name_at = method_def ? memory.read_pointer(*method_def) : std::nullopt;
  auto name = name_at ? memory.read_c_string(*name_at, 128) : std::nullopt;
  if (!self || !name || name->empty()) return opaque(reader, object);
  auto self_type = *self != 0 ? reader.type_name(*self) : std::nullopt;
  if (*self == 0 || (self_type && *self_type == "module")) return fmt::format("<built-in function {}>", *name);
  return fmt::format("<built-in method {} of {} object at {:#x}>", *name, self_type ? *self_type : "?", *self);
}

std::string repr_at(const ObjectReader& reader, uint64_t object, int depth) {
  auto name = reader.type_name(object);
  if (!name) return fmt::format("<unreadable object at {:#x}>", object);
  const std::string& type = *name;
  if (type == "NoneType") return "None";
  if (type == "bool") {
    auto value = reader.small_int(object);
    return value ? (value->magnitude != 0 ? "True" : "False") : opaque(reader, object);
  }
  if (type == "int") {
    auto text = reader.int_decimal(object);
    return text ? *text : opaque(reader, object);
  }
  if (type == "float") {
    auto value = reader.float_value(object);
    return value ? float_repr(*value) : opaque(reader, object);
  }
  if (type == "str") {
    auto length = reader.memory().read_value<int64_t>(object + static_cast<uint64_t>(reader.layout().unicode.length));
    auto text = reader.str(object, kMaxStrChars, true);
    return text ? quote_str(*text, length && static_cast<size_t>(*length) > kMaxStrChars) : opaque(reader, object);
  }
  if (type == "bytes") {
    auto size = reader.var_size(object);
    if (!size || *size < 0) return opaque(reader, object);
    bool truncated = static_cast<size_t>(*size) > kMaxBytes;
    auto prefix = truncated ? Result<std::string>(std::string()) : reader.bytes(object, kMaxBytes);
    if (truncated) {
      std::string raw(kMaxBytes, '\0');
      uint64_t data = object + static_cast<uint64_t>(reader.layout().bytes.ob_sval);
      if (reader.memory().read(data, raw.data(), raw.size()) != ReadStatus::Ok) return opaque(reader, object);
      return quote_bytes(raw, true);
    }
    return prefix ? quote_bytes(*prefix, false) : opaque(reader, object);
  }
  if (type == "tuple") return sequence_repr(reader, object, true, depth);
  if (type == "list") return sequence_repr(reader, object, false, depth);
  if (type == "dict") return dict_repr(reader, object, depth);
  if (type == "builtin_function_or_method") return builtin_repr(reader, object);
  return opaque(reader, object);
}

}  // namespace

std::string repr_object(const ObjectReader& reader, uint64_t object) {
  if (object == 0) return "<NULL>";
  std::string out = repr_at(reader, object, 0);
  if (out.size() > kMaxRepr) {
    // Cut on a UTF-8 boundary.
    size_t cut = kMaxRepr;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

}  // namespace pyframes
