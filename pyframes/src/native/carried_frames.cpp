#include "native/carried_frames.h"

#include "native/module_cache.h"
#include "native/symbolizer.h"

namespace pyframes::native {

void name_carried_native_frames(Process& process, const std::vector<Mapping>& mappings) {
  if (mappings.empty()) return;
  const ModuleMap map(mappings);
  ModuleCache modules(map, [](const std::string& path) { return path; });
  Symbolizer symbolizer(modules);
  for (Thread& thread : process.threads) {
    for (size_t i = 0; i < thread.native_frames.size(); ++i) {
      Frame& frame = thread.native_frames[i];
      if (!frame.function.empty() || frame.address == 0) continue;
      // The innermost frame's pc is where it stopped; a caller's is a return address.
      const Frame named = symbolizer.frame(RawFrame{frame.address, i > 0});
      frame.function = named.function;
      if (frame.module.empty()) frame.module = named.module;
      if (frame.offset == 0) frame.offset = named.offset;
    }
  }
}

}  // namespace pyframes::native
