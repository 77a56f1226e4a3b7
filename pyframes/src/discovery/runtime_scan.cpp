#include "discovery/runtime_scan.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "layout/debug_offsets.h"
#include "objects/object_reader.h"

namespace pyframes {

namespace {

constexpr size_t kChunk = 1 << 16;
constexpr uint64_t kMaxScanBytes = 64ull << 20;

bool writable_pointer(const ModuleMap& modules, uint64_t value) {
  if (value < 0x10000 || (value & 7) != 0) return false;
  const Mapping* m = modules.find(value);
  return m != nullptr && m->readable && m->writable;
}

// Calls visit(address, word) for every 8-byte word of the ranges (reading chunk by chunk,
// skipping what cannot be read); stops when visit returns true.
template <class Visitor>
bool for_each_word(const Memory& memory, const std::vector<AddressRange>& ranges, Visitor&& visit) {
  std::vector<uint64_t> buffer(kChunk / 8);
  uint64_t scanned = 0;
  for (const auto& range : ranges) {
    for (uint64_t at = range.start & ~7ull; at < range.end && scanned < kMaxScanBytes; at += kChunk) {
      size_t size = static_cast<size_t>(std::min<uint64_t>(kChunk, range.end - at)) & ~size_t{7};
      scanned += size;
      if (memory.read(at, buffer.data(), size) != ReadStatus::Ok) continue;
      for (size_t i = 0; i < size / 8; ++i) {
        if (visit(at + i * 8, buffer[i])) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool plausible_interpreter(const Memory& memory, const ModuleMap& modules, const Layout& layout, uint64_t interp) {
  if (!writable_pointer(modules, interp)) return false;
  uint64_t tstate = 0;
  if (memory.read(interp + static_cast<uint64_t>(layout.interpreter.tstate_head), &tstate, 8) != ReadStatus::Ok) {
    return false;
  }
  if (tstate == 0 || !writable_pointer(modules, tstate)) return false;
  uint64_t back = 0;
  if (memory.read(tstate + static_cast<uint64_t>(layout.thread_state.interp), &back, 8) != ReadStatus::Ok ||
      back != interp) {
    return false;
  }
  // Its thread id is a pthread_t: on glibc the address of the thread's descriptor.
  uint64_t thread_id = 0;
  if (memory.read(tstate + static_cast<uint64_t>(layout.thread_state.thread_id), &thread_id, 8) != ReadStatus::Ok ||
      modules.find(thread_id) == nullptr) {
    return false;
  }
  // Decisive, and costly enough to come last: sys.modules is a dict that holds "sys".
  uint64_t sys_modules = 0;
  if (layout.interpreter.modules < 0 ||
      memory.read(interp + static_cast<uint64_t>(layout.interpreter.modules), &sys_modules, 8) != ReadStatus::Ok) {
    return false;
  }
  ObjectReader reader(memory, layout);
  auto view = reader.dict_view(sys_modules);
  return view && reader.dict_get_str(*view, "sys").has_value();
}

Result<void> scan_for_runtime(const Memory& memory, const ModuleMap& modules, const Layout& layout,
                              PythonTarget& target) {
  const PyVersion& version = target.version;
  if (target.data_ranges.empty()) {
    return make_error(ErrorKind::NotPython, fmt::format("{}: no writable data to scan in {}", memory.describe(),
                                                        target.python_module));
  }
  bool found = false;
  if (version.at_least(3, 13)) {
    uint64_t cookie;
    std::memcpy(&cookie, kDebugCookie, 8);
    found = for_each_word(memory, target.data_ranges, [&](uint64_t at, uint64_t word) {
      if (word != cookie) return false;
      if (!read_debug_offsets_version(memory, at)) return false;
      target.runtime_address = at;
      return true;
    });
  } else if (version.at_least(3, 7)) {
    int head = layout.runtime.interpreters_head, main = layout.runtime.interpreters_main;
    found = for_each_word(memory, target.data_ranges, [&](uint64_t at, uint64_t word) {
      if (at < static_cast<uint64_t>(head) || !writable_pointer(modules, word)) return false;
      uint64_t runtime = at - static_cast<uint64_t>(head);
      uint64_t main_interp = 0;
      if (memory.read(runtime + static_cast<uint64_t>(main), &main_interp, 8) != ReadStatus::Ok) return false;
      if (!plausible_interpreter(memory, modules, layout, word)) return false;
      if (main_interp != word && !plausible_interpreter(memory, modules, layout, main_interp)) return false;
      target.runtime_address = runtime;
      return true;
    });
  } else {
    found = for_each_word(memory, target.data_ranges, [&](uint64_t at, uint64_t word) {
      if (!plausible_interpreter(memory, modules, layout, word)) return false;
      target.interp_head_address = at;
      return true;
    });
  }
  if (!found) {
    return make_error(ErrorKind::NotPython,
                      fmt::format("{}: no CPython {} runtime found in the data of {} (not initialised yet, or not "
                                  "the interpreter in use)",
                                  memory.describe(), version.str(), target.python_module),
                      "if the binary is stripped, check that it is the Python the process runs");
  }
  return {};
}

}  // namespace pyframes
