#include "shim/real_nccl.h"

#include <dlfcn.h>

#include <string>

#include "shim/core/log.h"

namespace hangshim::shim {

std::atomic<void*> g_real[static_cast<int>(Entry::Count)];

namespace {

void* usable(void* fn, const void* self) { return fn == self ? nullptr : fn; }

// NCCL's profiling name of an entry point, "pncclAllReduce". Built by appending: GCC 12 at -O3
// (Release) takes `"p" + std::string(name)` for an overlapping memcpy (-Wrestrict, an error with
// HANGSHIM_WERROR).
std::string profiling_name(const char* name) {
  std::string out = "p";
  out += name;
  return out;
}

void* from_handle(void* handle, const char* name, const void* self) {
  if (handle == nullptr) return nullptr;
  void* fn = usable(dlsym(handle, name), self);
  if (fn == nullptr) fn = usable(dlsym(handle, profiling_name(name).c_str()), self);
  return fn;
}

}  // namespace

void* resolve_real(Entry entry, const char* name, const void* self) noexcept {
  try {
    void* fn = usable(dlsym(RTLD_NEXT, name), self);
    if (fn == nullptr) fn = usable(dlsym(RTLD_NEXT, profiling_name(name).c_str()), self);
    if (fn == nullptr) {
      // Loaded already, but not in the global scope (dlopen RTLD_LOCAL, e.g. by a Python
      // extension): RTLD_NOLOAD finds it without loading anything.
      fn = from_handle(dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD), name, self);
      if (fn == nullptr) fn = from_handle(dlopen("libnccl.so", RTLD_LAZY | RTLD_NOLOAD), name, self);
    }
    if (fn == nullptr) {
      // The program calls NCCL but no NCCL is loaded: load the one the linker would find.
      fn = from_handle(dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL), name, self);
    }
    if (fn != nullptr) g_real[static_cast<int>(entry)].store(fn, std::memory_order_release);
    return fn;
  } catch (...) {
    return nullptr;
  }
}

ncclResult_t missing_nccl(const char* name) noexcept {
  try {
    warn_once(std::string("the NCCL library in this process has no ") + name +
              " (or none was found: check LD_LIBRARY_PATH); returning ncclInvalidUsage");
  } catch (...) {
  }
  return ncclInvalidUsage;
}

}  // namespace hangshim::shim

namespace hangshim::shim {
// Every entry point of the table must have a wrapper in this library: taking their addresses
// makes a missing one a link error (the library links with --no-undefined).
#define HANGSHIM_ENTRY_ADDRESS(name, ...) reinterpret_cast<const void*>(&::name),
extern const void* const kWrapperAddresses[];
const void* const kWrapperAddresses[] = {HANGSHIM_NCCL_ENTRY_POINTS(HANGSHIM_ENTRY_ADDRESS)};
#undef HANGSHIM_ENTRY_ADDRESS
}  // namespace hangshim::shim
