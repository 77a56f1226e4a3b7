#include "objects/repr.h"

#include "objects/numpy_repr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace pyframes {

namespace {

constexpr size_t kMaxStrChars = 120;
constexpr size_t kMaxBytes = 64;

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

constexpr uint64_t kTpFlagHeapType = 1ull << 9;  // Py_TPFLAGS_HEAPTYPE

// The type as Python's default repr names it: a class defined in Python (a heap type) as
// module.name from its __module__ (torch.Tensor, __main__.Sampler), a C type by its tp_name
// (which carries the module already: numpy.ndarray).
std::string type_label(const ObjectReader& reader, uint64_t object) {
  auto name = reader.type_name(object);
  if (!name) return "?";
  auto type = reader.type_of(object);
  auto flags = type ? reader.type_flags(*type) : std::nullopt;
  if (!flags || (*flags & kTpFlagHeapType) == 0 || reader.layout().type.tp_dict < 0) return *name;
  auto dict = reader.memory().read_pointer(*type + static_cast<uint64_t>(reader.layout().type.tp_dict));
  auto view = dict && *dict ? reader.dict_view(*dict) : std::nullopt;
  auto module = view ? reader.dict_get_str(*view, "__module__") : std::nullopt;
  auto text = module ? reader.str(*module, 256) : Result<std::string>(std::string());
  if (!text || text->empty() || *text == "builtins") return *name;
  return *text + "." + *name;
}

std::string opaque(const ObjectReader& reader, uint64_t object) {
  return fmt::format("<{} object at {:#x}>", type_label(reader, object), object);
}

// Containers are cut by size, not by depth: each item gets what is left of the budget, and a
// container stops listing items when the next one would not fit (then ", ... (N items)"). A
// container already being printed further out (a list that contains itself) prints as Python
// prints it: [...], (...), {...}.
struct Budget {
  size_t room;                      // bytes this repr may still use
  std::vector<uint64_t>* ancestors;  // containers being printed around this one
};

std::string repr_at(const ObjectReader& reader, uint64_t object, Budget budget);

std::string count_note(int64_t total) { return fmt::format("... ({} {})", total, total == 1 ? "item" : "items"); }

// Room for ", ... (N items)" and the closing bracket, kept free while items are added.
size_t suffix_room(int64_t total) { return 2 + count_note(total).size() + 1; }

bool is_ancestor(const Budget& budget, uint64_t object) {
  return std::find(budget.ancestors->begin(), budget.ancestors->end(), object) != budget.ancestors->end();
}

// The length `out` may reach with item `shown` (of `total`) added: the suffix's room stays free,
// but the last item needs only the closing bracket's.
size_t item_limit(const Budget& budget, size_t reserve, size_t shown, int64_t total) {
  bool last = static_cast<int64_t>(shown) + 1 == total;
  return budget.room > reserve ? budget.room - (last ? 2 : reserve) : 0;
}

// What follows the items shown: ", ... (N items)" when some did not fit.
void close_items(std::string& out, size_t shown, int64_t total) {
  if (static_cast<int64_t>(shown) < total) out += (shown > 0 ? ", " : "") + count_note(total);
}

// At most this many items are read: each takes at least 3 bytes ("1, ").
size_t items_to_read(size_t room) { return std::max<size_t>(1, room / 3 + 1); }

std::string sequence_repr(const ObjectReader& reader, uint64_t object, bool tuple, Budget budget) {
  const char open = tuple ? '(' : '[';
  const char close = tuple ? ')' : ']';
  if (is_ancestor(budget, object)) return fmt::format("{}...{}", open, close);
  int64_t total = 0;
  auto items = reader.sequence_items(object, items_to_read(budget.room), &total);
  if (!items) return opaque(reader, object);
  budget.ancestors->push_back(object);
  std::string out(1, open);
  size_t shown = 0;
  const size_t reserve = suffix_room(total);
  for (; shown < items->size(); ++shown) {
    size_t used = out.size() + (shown > 0 ? 2 : 0);
    size_t limit = item_limit(budget, reserve, shown, total);
    if (used >= limit) break;
    std::string item = repr_at(reader, (*items)[shown], Budget{limit - used, budget.ancestors});
    if (used + item.size() > limit) break;
    if (shown > 0) out += ", ";
    out += item;
  }
  budget.ancestors->pop_back();
  close_items(out, shown, total);
  if (tuple && total == 1 && shown == 1) out += ',';
  out += close;
  return out;
}

std::string dict_repr(const ObjectReader& reader, uint64_t object, Budget budget) {
  if (is_ancestor(budget, object)) return "{...}";
  auto view = reader.dict_view(object);
  int64_t total = reader.dict_size(object).value_or(0);
  if (!view) return opaque(reader, object);
  auto entries = reader.dict_entries(*view, items_to_read(budget.room / 2));
  if (!entries) return opaque(reader, object);
  budget.ancestors->push_back(object);
  std::string out = "{";
  size_t shown = 0;
  const size_t reserve = suffix_room(total);
  for (; shown < entries->size(); ++shown) {
    size_t used = out.size() + (shown > 0 ? 2 : 0);
    size_t limit = item_limit(budget, reserve, shown, total);
    if (used + 2 >= limit) break;
    std::string key = repr_at(reader, (*entries)[shown].key, Budget{limit - used - 2, budget.ancestors});
    if (used + key.size() + 2 >= limit) break;
    std::string value =
        repr_at(reader, (*entries)[shown].value, Budget{limit - used - key.size() - 2, budget.ancestors});
    if (used + key.size() + 2 + value.size() > limit) break;
    if (shown > 0) out += ", ";
    out += key + ": " + value;
  }
  budget.ancestors->pop_back();
  close_items(out, shown, total);
  out += '}';
  return out;
}

// Python's repr of a builtin_function_or_method (PyCFunctionObject: the object header, then
// m_ml (PyMethodDef*, whose first field is ml_name) and m_self): "<built-in function len>" for a
// module's function, "<built-in method append of list object at 0x...>" for a bound one.
std::string builtin_repr(const ObjectReader& reader, uint64_t object) {
  const Memory& memory = reader.memory();
  auto method_def = memory.read_pointer(object + static_cast<uint64_t>(cfunction_m_ml(reader.layout())));
  auto self = memory.read_pointer(object + static_cast<uint64_t>(cfunction_m_self(reader.layout())));
  auto name_at = method_def ? memory.read_pointer(*method_def) : std::nullopt;
  auto name = name_at ? memory.read_c_string(*name_at, 128) : std::nullopt;
  if (!self || !name || name->empty()) return opaque(reader, object);
  auto self_type = *self != 0 ? reader.type_name(*self) : std::nullopt;
  if (*self == 0 || (self_type && *self_type == "module")) return fmt::format("<built-in function {}>", *name);
  return fmt::format("<built-in method {} of {} object at {:#x}>", *name, self_type ? *self_type : "?", *self);
}

std::string repr_at(const ObjectReader& reader, uint64_t object, Budget budget) {
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
    size_t chars = std::min(kMaxStrChars, budget.room);  // inside a container: what is left of its room
    auto text = reader.str(object, chars, true);
    return text ? quote_str(*text, length && static_cast<size_t>(*length) > chars) : opaque(reader, object);
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
  if (type == "tuple") return sequence_repr(reader, object, true, budget);
  if (type == "list") return sequence_repr(reader, object, false, budget);
  if (type == "dict") return dict_repr(reader, object, budget);
  if (type == "builtin_function_or_method") return builtin_repr(reader, object);
  if (auto numpy = numpy_repr(reader, object, type)) return *numpy;
  return opaque(reader, object);
}

}  // namespace

std::string repr_object(const ObjectReader& reader, uint64_t object) {
  if (object == 0) return "<NULL>";
  std::vector<uint64_t> ancestors;
  std::string out = repr_at(reader, object, Budget{kMaxRepr, &ancestors});
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
