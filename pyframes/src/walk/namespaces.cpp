#include "walk/namespaces.h"

#include "objects/repr.h"

namespace pyframes {

namespace {

// A module with more names than this is cut there (a namespace is a lookup table for py-print,
// not a dump: the first names are the module's own, in definition order).
constexpr size_t kMaxNames = 4096;
constexpr size_t kMaxReadDicts = 256;  // distinct dicts kept per walk (a bound on memory)

}  // namespace

const std::vector<Local>& NamespaceReader::names_of(uint64_t dict) {
  static const std::vector<Local> kNone;
  if (auto it = read_.find(dict); it != read_.end()) return it->second;
  if (read_.size() >= kMaxReadDicts) return kNone;
  std::vector<Local> names;
  if (dict != 0 && reader_.has_type_flag(dict, kTpFlagDictSubclass)) {
    if (auto view = reader_.dict_view(dict)) {
      if (auto entries = reader_.dict_entries(*view, kMaxNames)) {
        names.reserve(entries->size());
        for (const DictEntry& entry : *entries) {
          auto name = reader_.str(entry.key, 256, true);
          if (!name || entry.value == 0) continue;  // a non-str key cannot be a Python name
          Local local;
          local.name = std::move(name.value());
          local.repr = repr_object(reader_, entry.value);
          local.address = entry.value;
          names.push_back(std::move(local));
        }
      }
    }
  }
  return read_.emplace(dict, std::move(names)).first->second;
}

void NamespaceReader::read(const RawFrame& raw, Frame& frame) {
  const Layout& layout = reader_.layout();
  bool old_frames = layout.frame_model == FrameModel::FrameObject;
  int globals_at = old_frames ? layout.frame_object.globals : layout.interpreter_frame.globals;
  int builtins_at = old_frames ? layout.frame_object.builtins : layout.interpreter_frame.builtins;
  if (globals_at < 0 || builtins_at < 0) return;
  const Memory& memory = reader_.memory();
  uint64_t globals = memory.read_pointer(raw.frame + static_cast<uint64_t>(globals_at)).value_or(0);
  uint64_t builtins = memory.read_pointer(raw.frame + static_cast<uint64_t>(builtins_at)).value_or(0);
  frame.globals = names_of(globals);
  frame.builtins = names_of(builtins);
}

}  // namespace pyframes
