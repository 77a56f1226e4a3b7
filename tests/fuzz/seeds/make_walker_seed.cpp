// Records a walker seed from a real interpreter: every range of memory that select_layout,
// read_stacks (with locals) and the call-site API read from process PID is saved, with the
// target's version and runtime addresses, in the format of fuzz_support.h. The fuzzer then
// mutates real code objects, frames, dicts and strings instead of random bytes.
//   make_walker_seed PID OUT
// Writes OUT (locals on) and OUT.scan (same image, runtime found by the data scan).
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "../fuzz_support.h"
#include "memory/process_memory.h"
#include "pyframes/proc_maps.h"
#include "pyframes/callsite.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "recording_memory.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "make_walker_seed: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: make_walker_seed PID OUT");
  pid_t pid = static_cast<pid_t>(std::atoi(argv[1]));
  std::string out_path = argv[2];
  auto modules = pyframes::read_proc_maps(pid);
  if (!modules) return fail(modules.error().message);
  pyframes::ProcessMemory process(pid, false);
  pyframes::ReadOptions options;
  options.resolve_file = pyframes::proc_root_resolver(pid);
  auto target = pyframes::locate_python(process, *modules, options);
  if (!target) return fail(target.error().message);

  RecordingMemory memory(process);
  auto layout = pyframes::select_layout(memory, *target);
  if (!layout) return fail(layout.error().message);
  options.locals = true;
  options.globals = true;  // the image holds the globals' and builtins' dicts too
  auto stacks = pyframes::read_stacks(memory, *target, *layout, options);
  if (!stacks) return fail(stacks.error().message);
  pyframes::ThreadStateRef threads[64];
  size_t count = pyframes::list_thread_states(memory, *layout, *target, threads, 64);
  pyframes::CodeLocation locations[32];
  for (size_t t = 0; t < count; ++t) {
    size_t frames = pyframes::collect_code_locations(memory, *layout, threads[t].tstate, locations, 32);
    for (size_t f = 0; f < frames; ++f) (void)pyframes::describe_code_location(memory, *layout, locations[f]);
  }

  fuzz::WalkerHeader header{};
  std::memcpy(header.magic, "PFW1", 4);
  header.major = static_cast<uint8_t>(target->version.major);
  header.minor = static_cast<uint8_t>(target->version.minor);
  header.micro = static_cast<uint8_t>(target->version.micro);
  header.flags = fuzz::kWalkerLocals;
  header.version_hex = target->version.hex;
  header.runtime_address = target->runtime_address;
  header.interp_head_address = target->interp_head_address;
  header.tstate_current_address = target->tstate_current_address;

  std::vector<uint8_t> image;
  uint64_t anchor = target->runtime_address != 0 ? target->runtime_address : target->interp_head_address;
  for (const auto& [start, end] : memory.merged(64)) {
    std::vector<uint8_t> bytes(end - start);
    if (process.read(start, bytes.data(), bytes.size()) != pyframes::ReadStatus::Ok) continue;
    fuzz::append_region(image, start, bytes.data(), static_cast<uint32_t>(bytes.size()));
    if (anchor >= start && anchor < end) {
      header.data_start = start;  // the scan seed looks for the runtime in its own region
      header.data_end = end;
    }
  }
  for (bool scan : {false, true}) {
    fuzz::WalkerHeader h = header;
    if (scan) h.flags = fuzz::kWalkerScan | fuzz::kWalkerShallow;
    std::ofstream out(scan ? out_path + ".scan" : out_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!out) return fail("cannot write " + out_path);
  }
  std::printf("%s: Python %s, %zu thread(s), %zu bytes of memory\n", out_path.c_str(), target->version.str().c_str(),
              stacks->threads.size(), image.size());
  return 0;
}
