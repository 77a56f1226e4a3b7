// The pyframes engine over a fuzzed address space: layout selection (including a target's own
// _Py_DebugOffsets on 3.13+), the runtime scan, the stack walk with locals (object reprs:
// strings, ints, floats, containers, dicts) and the shim's allocation-free call-site path.
// Seeds are images recorded from real interpreters (make_walker_seed); whatever the bytes,
// every call must return within bounds, without a crash, a leak or undefined behaviour.
#include <cstddef>
#include <cstdint>

#include "discovery/runtime_scan.h"
#include "fuzz_support.h"
#include "pyframes/callsite.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"

namespace {

void walk(const fuzz::ImageMemory& memory, const pyframes::PythonTarget& target, const pyframes::Layout& layout,
          uint8_t flags) {
  pyframes::ReadOptions options;
  options.locals = (flags & fuzz::kWalkerLocals) != 0;
  options.globals = options.locals;  // module globals and builtins: more dicts, more reprs
  options.max_frames = (flags & fuzz::kWalkerShallow) != 0 ? 16 : 4096;
  auto process = pyframes::read_stacks(memory, target, layout, options);
  (void)process;

  // The shim's path: thread states, raw code locations, then names and lines.
  pyframes::ThreadStateRef threads[64];
  size_t count = pyframes::list_thread_states(memory, layout, target, threads, 64);
  pyframes::CodeLocation locations[32];
  for (size_t t = 0; t < count; ++t) {
    size_t frames = pyframes::collect_code_locations(memory, layout, threads[t].tstate, locations, 32);
    for (size_t f = 0; f < frames; ++f) {
      auto frame = pyframes::describe_code_location(memory, layout, locations[f]);
      (void)frame;
    }
    (void)pyframes::find_thread_state(memory, layout, target, threads[t].thread_id);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::WalkerHeader header;
  std::vector<fuzz::Region> regions;
  if (!fuzz::parse_walker_input(data, size, header, regions)) return 0;
  fuzz::ImageMemory memory(std::move(regions));

  pyframes::PythonTarget target;
  target.version = pyframes::PyVersion{header.major, header.minor, header.micro, header.version_hex};
  target.python_module = "fuzzed";
  target.runtime_address = header.runtime_address;
  target.interp_head_address = header.interp_head_address;
  target.tstate_current_address = header.tstate_current_address;
  if (header.data_end > header.data_start) target.data_ranges.push_back({header.data_start, header.data_end});

  if ((header.flags & fuzz::kWalkerScan) != 0) {
    // Without symbols: every region is a readable, writable anonymous mapping.
    std::vector<pyframes::Mapping> mappings;
    for (const auto& r : memory.regions()) {
      mappings.push_back({r.address, r.address + r.bytes.size(), 0, true, true, false, ""});
    }
    pyframes::ModuleMap modules(std::move(mappings));
    // The scan starts from the version's table layout, as locate_python does.
    target.runtime_address = 0;
    target.interp_head_address = 0;
    auto selected = pyframes::select_layout(memory, target);
    if (!selected) return 0;
    if (!pyframes::scan_for_runtime(memory, modules, *selected, target)) return 0;
  }
  auto layout = pyframes::select_layout(memory, target);
  if (!layout) return 0;
  walk(memory, target, *layout, header.flags);
  return 0;
}
