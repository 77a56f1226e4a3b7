// _dl_find_object for the portable libhangshim.so. The static libgcc_eh linked into the shim
// (gcc 12, built against glibc 2.36) finds the unwind tables of a frame with _dl_find_object,
// which glibc only has from 2.35 on, and does not fall back when it is missing: the shim could
// not load on an older glibc. This one answers the same from dl_iterate_phdr (what libgcc did
// before 2.35), is hidden, and is the one the shim's own unwinder binds to on every glibc.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>

namespace {

struct Query {
  uintptr_t address;
  dl_find_object* result;
  bool found;
};

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<Query*>(data);
  uintptr_t start = UINTPTR_MAX;
  uintptr_t end = 0;
  bool contains = false;
  void* eh_frame = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    const uintptr_t segment = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD) {
      if (segment < start) start = segment;
      if (segment + phdr.p_memsz > end) end = segment + phdr.p_memsz;
      if (query->address >= segment && query->address < segment + phdr.p_memsz) contains = true;
    } else if (phdr.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(segment);
    }
  }
  if (!contains) return 0;
  *query->result = dl_find_object{};
  query->result->dlfo_map_start = reinterpret_cast<void*>(start);
  query->result->dlfo_map_end = reinterpret_cast<void*>(end);
  query->result->dlfo_eh_frame = eh_frame;
  query->found = true;
  return 1;
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) int _dl_find_object(void* address, dl_find_object* result) noexcept {
  Query query{reinterpret_cast<uintptr_t>(address), result, false};
  dl_iterate_phdr(visit, &query);
  return query.found ? 0 : -1;
}
