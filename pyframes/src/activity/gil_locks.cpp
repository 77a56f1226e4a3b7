#include "activity/gil_locks.h"

#include <pthread.h>

#include <array>
#include <string_view>

#include "elf/loaded_module.h"
#include "walk/gil.h"
#include "walk/interpreters.h"

namespace pyframes {

namespace {

// The locks follow `locked` (an int, padded to 8 bytes) and `switch_number` (unsigned long).
// pyframes reads live processes of its own architecture and C library, so the pthread sizes
// here are the target's.
constexpr uint64_t kLocksAfterLocked = 16;
constexpr uint64_t kLocksSize = 2 * (sizeof(pthread_cond_t) + sizeof(pthread_mutex_t));

GilLockRanges static_gil_locks(const ModuleMap& modules, const PythonTarget& target, const FileResolver& resolve) {
  GilLockRanges ranges;
  auto module = LoadedModule::open(modules, target.python_module, resolve);
  if (!module) return ranges;
  constexpr std::array<std::string_view, 4> kNames = {"gil_cond", "gil_mutex", "switch_cond", "switch_mutex"};
  for (std::string_view name : kNames) {
    auto symbol = module->elf().find_symbol(name);
    if (!symbol || symbol->size == 0) continue;
    const uint64_t start = symbol->value + module->bias();
    ranges.push_back(AddressRange{start, start + symbol->size});
  }
  return ranges;
}

}  // namespace

GilLockRanges gil_lock_ranges(const Memory& memory, const ModuleMap& modules, const PythonTarget& target,
                              const Layout& layout, const FileResolver& resolve) {
  if (!target.version.at_least(3, 7)) return static_gil_locks(modules, target, resolve);
  GilLockRanges ranges;
  if (layout.gil.locked < 0) return ranges;
  for_each_interpreter(memory, layout, target, [&](uint64_t interp) {
    const uint64_t gil = gil_state_address(memory, layout, target, interp);
    if (gil == 0) return true;
    const uint64_t start = gil + static_cast<uint64_t>(layout.gil.locked) + kLocksAfterLocked;
    const AddressRange range{start, start + kLocksSize};
    for (const AddressRange& known : ranges) {
      if (known.start == range.start) return true;  // interpreters sharing the main GIL
    }
    ranges.push_back(range);
    return true;
  });
  return ranges;
}

}  // namespace pyframes
