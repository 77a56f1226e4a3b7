#include "pyframes/module_map.h"

#include <algorithm>

namespace pyframes {

ModuleMap::ModuleMap(std::vector<Mapping> mappings) : mappings_(std::move(mappings)) {
  std::sort(mappings_.begin(), mappings_.end(), [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
}

const Mapping* ModuleMap::find(uint64_t address) const {
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == mappings_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

static bool is_file_path(const std::string& path) { return !path.empty() && path.front() == '/'; }

std::vector<std::string> ModuleMap::files() const {
  std::vector<std::string> out;
  for (const auto& m : mappings_) {
    if (is_file_path(m.path) && std::find(out.begin(), out.end(), m.path) == out.end()) out.push_back(m.path);
  }
  return out;
}

std::vector<Mapping> ModuleMap::mappings_of(const std::string& path) const {
  std::vector<Mapping> out;
  for (const auto& m : mappings_) {
    if (m.path == path) out.push_back(m);
  }
  return out;
}

std::optional<std::string> ModuleMap::find_file(const std::function<bool(const std::string&)>& predicate) const {
  for (const auto& path : files()) {
    auto slash = path.rfind('/');
    if (predicate(slash == std::string::npos ? path : path.substr(slash + 1))) return path;
  }
  return std::nullopt;
}

}  // namespace pyframes
