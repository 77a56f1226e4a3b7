#include "walk/thread_names.h"

namespace pyframes {

namespace {

constexpr size_t kMaxThreads = 4096;
constexpr size_t kMaxNameLength = 256;

}  // namespace

std::unordered_map<uint64_t, std::string> python_thread_names(const ObjectReader& reader, uint64_t interp) {
  std::unordered_map<uint64_t, std::string> names;
  const Layout& layout = reader.layout();
  if (layout.interpreter.modules < 0) return names;
  auto modules = reader.memory().read_pointer(interp + static_cast<uint64_t>(layout.interpreter.modules));
  if (!modules) return names;
  auto modules_view = reader.dict_view(*modules);
  if (!modules_view) return names;
  auto threading = reader.dict_get_str(*modules_view, "threading");
  if (!threading) return names;
  auto active = reader.instance_attribute(*threading, "_active");  // a module's __dict__
  if (!active) return names;
  auto active_view = reader.dict_view(*active);
  if (!active_view) return names;
  auto entries = reader.dict_entries(*active_view, kMaxThreads);
  if (!entries) return names;
  for (const auto& entry : *entries) {
    auto ident = reader.small_int(entry.key);
    if (!ident || ident->negative) continue;
    auto name_object = reader.instance_attribute(entry.value, "_name");
    if (!name_object) continue;
    auto name = reader.str(*name_object, kMaxNameLength, true);
    if (name) names.emplace(ident->magnitude, std::move(name.value()));
  }
  return names;
}

}  // namespace pyframes
