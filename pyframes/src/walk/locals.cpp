// Locals of a frame. Names and values by frame model:
//   <= 3.10  co_varnames[0:co_nlocals], then co_cellvars and co_freevars; values in
//            f_localsplus, cells and free variables as cell objects
//   3.11+    co_localsplusnames with a kind byte each (co_localspluskinds); values in the
//            _PyInterpreterFrame's localsplus; cells are cell objects once MAKE_CELL ran
// Arguments come first: co_argcount (positional-only included from 3.8), co_kwonlyargcount,
// then *args and **kwargs when co_flags has CO_VARARGS / CO_VARKEYWORDS.
#include "walk/locals.h"

#include "objects/repr.h"

namespace pyframes {

namespace {

constexpr int64_t kMaxLocals = 4096;
constexpr uint32_t kCoVarargs = 0x4;
constexpr uint32_t kCoVarkeywords = 0x8;
constexpr uint8_t kFastHidden = 0x10;  // 3.12+: inlined comprehension temporaries (PEP 709)
constexpr uint8_t kFastCell = 0x40;
constexpr uint8_t kFastFree = 0x80;

int read_int(const ObjectReader& reader, uint64_t code, int offset) {
  if (offset < 0) return 0;
  return reader.memory().read_value<int32_t>(code + static_cast<uint64_t>(offset)).value_or(0);
}

std::vector<uint64_t> tuple_items(const ObjectReader& reader, uint64_t code, int offset) {
  if (offset < 0) return {};
  auto tuple = reader.memory().read_pointer(code + static_cast<uint64_t>(offset));
  if (!tuple) return {};
  auto items = reader.sequence_items(*tuple, kMaxLocals);
  return items ? std::move(items.value()) : std::vector<uint64_t>{};
}

// The value of a cell, or the object itself when it is not (yet) a cell.
uint64_t through_cell(const ObjectReader& reader, uint64_t object) {
  if (object == 0 || !reader.has_type_name(object, "cell")) return object;
  return reader.memory().read_pointer(object + static_cast<uint64_t>(reader.layout().cell.ob_ref)).value_or(0);
}

}  // namespace

std::vector<Local> read_locals(const ObjectReader& reader, const RawFrame& frame) {
  const Layout& layout = reader.layout();
  std::vector<Local> out;
  uint64_t code = frame.code;
  uint32_t flags = static_cast<uint32_t>(read_int(reader, code, layout.code.flags));
  // Summed in 64 bits: the counts come from the target and may be garbage.
  int64_t arguments = int64_t{read_int(reader, code, layout.code.argcount)} +
                      read_int(reader, code, layout.code.kwonlyargcount) + ((flags & kCoVarargs) != 0 ? 1 : 0) +
                      ((flags & kCoVarkeywords) != 0 ? 1 : 0);

  std::vector<uint64_t> names;
  std::string kinds;
  uint64_t values_at = 0;
  size_t plain_locals = 0;  // <= 3.10: entries before the cells and free variables
  if (layout.frame_model == FrameModel::FrameObject) {
    names = tuple_items(reader, code, layout.code.varnames);
    plain_locals = names.size();
    for (int field : {layout.code.cellvars, layout.code.freevars}) {
      auto more = tuple_items(reader, code, field);
      names.insert(names.end(), more.begin(), more.end());
    }
    values_at = frame.frame + static_cast<uint64_t>(layout.frame_object.localsplus);
  } else {
    names = tuple_items(reader, code, layout.code.localsplusnames);
    if (auto kinds_object = reader.memory().read_pointer(code + static_cast<uint64_t>(layout.code.localspluskinds))) {
      auto bytes = reader.bytes(*kinds_object, kMaxLocals);
      if (bytes) kinds = std::move(bytes.value());
    }
    values_at = frame.frame + static_cast<uint64_t>(layout.interpreter_frame.localsplus);
  }
  if (names.empty()) return out;
  std::vector<uint64_t> values(names.size());
  if (reader.memory().read(values_at, values.data(), values.size() * sizeof(uint64_t)) != ReadStatus::Ok) return out;

  for (size_t i = 0; i < names.size(); ++i) {
    uint8_t kind = i < kinds.size() ? static_cast<uint8_t>(kinds[i]) : 0;
    if ((kind & kFastHidden) != 0) continue;
    uint64_t value = values[i] & ~layout.stackref_tag_mask;  // 3.14: _PyStackRef
    bool is_cell = layout.frame_model == FrameModel::FrameObject ? i >= plain_locals : (kind & (kFastCell | kFastFree)) != 0;
    if (is_cell) value = through_cell(reader, value);
    if (value == 0) continue;  // unbound: not a local yet (or any more)
    auto name = reader.str(names[i], 256, true);
    if (!name) continue;
    Local local;
    local.name = std::move(name.value());
    local.repr = repr_object(reader, value);
    local.is_argument = static_cast<int64_t>(i) < arguments;
    local.address = value;
    out.push_back(std::move(local));
  }
  return out;
}

}  // namespace pyframes
