#include "native/module_cache.h"

namespace pyframes::native {

bool is_file_mapping(const Mapping& mapping) { return !mapping.path.empty() && mapping.path.front() == '/'; }

ModuleCache::ModuleCache(const ModuleMap& modules, FileResolver resolve)
    : modules_(modules), resolve_(std::move(resolve)) {}

const LoadedModule* ModuleCache::module(const std::string& target_path) {
  auto [it, inserted] = opened_.try_emplace(target_path);
  if (inserted) {
    auto opened = LoadedModule::open(modules_, target_path, resolve_);
    if (opened) it->second = std::make_unique<LoadedModule>(std::move(opened.value()));
  }
  return it->second.get();
}

const LoadedModule* ModuleCache::module_at(uint64_t address) {
  const Mapping* mapping = modules_.find(address);
  if (mapping == nullptr || !is_file_mapping(*mapping)) return nullptr;
  return module(mapping->path);
}

}  // namespace pyframes::native
