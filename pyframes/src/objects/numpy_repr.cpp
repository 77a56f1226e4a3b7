#include "objects/numpy_repr.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace pyframes {

namespace {

enum class Kind { Signed, Unsigned, Float, Bool };

struct ScalarType {
  std::string_view name;  // tp_name
  Kind kind;
  int size;
};

// The scalar types whose value is a plain C number (float16, long double and complex are not
// decoded: they show as type and address).
constexpr std::array<ScalarType, 18> kScalars{{
    {"numpy.int8", Kind::Signed, 1},     {"numpy.int16", Kind::Signed, 2},      {"numpy.int32", Kind::Signed, 4},
    {"numpy.int64", Kind::Signed, 8},    {"numpy.longlong", Kind::Signed, 8},   {"numpy.intc", Kind::Signed, 4},
    {"numpy.uint8", Kind::Unsigned, 1},  {"numpy.uint16", Kind::Unsigned, 2},   {"numpy.uint32", Kind::Unsigned, 4},
    {"numpy.uint64", Kind::Unsigned, 8}, {"numpy.ulonglong", Kind::Unsigned, 8}, {"numpy.uintc", Kind::Unsigned, 4},
    {"numpy.float32", Kind::Float, 4},   {"numpy.float64", Kind::Float, 8},     {"numpy.double", Kind::Float, 8},
    {"numpy.single", Kind::Float, 4},    {"numpy.bool_", Kind::Bool, 1},        {"numpy.bool", Kind::Bool, 1},
}};

// NPY_TYPES (numpy/ndarraytypes.h): type_num -> the dtype's name on LP64 Linux.
constexpr std::array<std::string_view, 24> kDtypeNames{
    "bool",    "int8",    "uint8",   "int16",      "uint16",    "int32",      "uint32",     "int64",
    "uint64",  "int64",   "uint64",  "float32",    "float64",   "float128",   "complex64",  "complex128",
    "complex256", "object", "",      "",           "",          "",           "",           "float16"};

constexpr int kMaxDims = 64;  // NPY_MAXDIMS: 32 in numpy 1, 64 in numpy 2

// The shortest text that reads back as the same float (what numpy's str() prints), as Python
// prints floats: with ".0" when it would read as an integer.
template <typename F>
std::string shortest(F value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::optional<std::string> scalar_value(const Memory& memory, uint64_t at, const ScalarType& type) {
  uint8_t raw[8] = {};
  if (memory.read(at, raw, static_cast<size_t>(type.size)) != ReadStatus::Ok) return std::nullopt;
  switch (type.kind) {
    case Kind::Bool: return raw[0] != 0 ? "True" : "False";
    case Kind::Float: {
      if (type.size == 4) {
        float value;
        std::memcpy(&value, raw, 4);
        return shortest(value);
      }
      double value;
      std::memcpy(&value, raw, 8);
      return shortest(value);
    }
    case Kind::Signed: {
      int64_t value = 0;
      switch (type.size) {
        case 1: value = static_cast<int8_t>(raw[0]); break;
        case 2: { int16_t v; std::memcpy(&v, raw, 2); value = v; break; }
        case 4: { int32_t v; std::memcpy(&v, raw, 4); value = v; break; }
        default: std::memcpy(&value, raw, 8);
      }
      return fmt::format("{}", value);
    }
    case Kind::Unsigned: {
      uint64_t value = 0;
      std::memcpy(&value, raw, static_cast<size_t>(type.size));  // little-endian: the low bytes
      return fmt::format("{}", value);
    }
  }
  return std::nullopt;
}

std::optional<std::string> array_repr(const ObjectReader& reader, uint64_t object) {
  const Memory& memory = reader.memory();
  const uint64_t head = static_cast<uint64_t>(reader.layout().object.ob_type) + 8;  // after PyObject_HEAD
  auto nd = memory.read_value<int32_t>(object + head + 8);
  auto dimensions = memory.read_pointer(object + head + 16);
  auto descr = memory.read_pointer(object + head + 40);
  if (!nd || *nd < 0 || *nd > kMaxDims || !dimensions || !descr || *descr == 0) return std::nullopt;
  std::vector<int64_t> shape(static_cast<size_t>(*nd));
  if (*nd > 0 && memory.read(*dimensions, shape.data(), shape.size() * sizeof(int64_t)) != ReadStatus::Ok) {
    return std::nullopt;
  }
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i) dims += fmt::format("{}{}", i > 0 ? ", " : "", shape[i]);
  dims += shape.size() == 1 ? ",)" : ")";
  auto type_num = memory.read_value<int32_t>(*descr + head + 12);
  std::string dtype;
  if (type_num && *type_num >= 0 && static_cast<size_t>(*type_num) < kDtypeNames.size()) {
    dtype = kDtypeNames[static_cast<size_t>(*type_num)];
  }
  if (dtype.empty()) {  // strings, records, datetimes: their sizes and units are not read; the scalar type is
    auto typeobj = memory.read_pointer(*descr + head);
    auto name_at = typeobj ? memory.read_pointer(*typeobj + static_cast<uint64_t>(reader.layout().type.tp_name))
                           : std::nullopt;
    auto name = name_at ? memory.read_c_string(*name_at, 128) : std::nullopt;
    dtype = name ? *name : "?";
  }
  return fmt::format("numpy.ndarray(shape={}, dtype={})", dims, dtype);
}

}  // namespace

std::optional<std::string> numpy_repr(const ObjectReader& reader, uint64_t object, std::string_view type) {
  if (type.substr(0, 6) != "numpy.") return std::nullopt;
  if (type == "numpy.ndarray") return array_repr(reader, object);
  for (const ScalarType& scalar : kScalars) {
    if (scalar.name != type) continue;
    const uint64_t value_at = object + static_cast<uint64_t>(reader.layout().object.ob_type) + 8;
    auto value = scalar_value(reader.memory(), value_at, scalar);
    if (!value) return std::nullopt;
    return fmt::format("{}({})", type, *value);
  }
  return std::nullopt;
}

}  // namespace pyframes
