#include "shim/real_dlsym.h"

#include <elf.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace hangshim::shim {

// Read by the assembly entries in dlsym_entry.cpp (hidden: no GOT, no interposition).
extern "C" {
__attribute__((visibility("hidden"))) std::atomic<void*> hangshim_libc_dlsym{nullptr};
__attribute__((visibility("hidden"))) std::atomic<void*> hangshim_libc_dlvsym{nullptr};
}

namespace {

struct DynamicTables {
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
  ElfW(Addr) base = 0;
};

// glibc relocates the d_ptr entries of a loaded object in place on x86-64; other ports keep them
// relative. Either way an address below the load base is still relative.
const void* address(ElfW(Addr) base, ElfW(Addr) ptr) {
  return reinterpret_cast<const void*>(ptr < base ? base + ptr : ptr);
}

bool read_tables(ElfW(Addr) base, const ElfW(Dyn)* dynamic, DynamicTables* out) {
  out->base = base;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) out->symtab = static_cast<const ElfW(Sym)*>(address(base, d->d_un.d_ptr));
    if (d->d_tag == DT_STRTAB) out->strtab = static_cast<const char*>(address(base, d->d_un.d_ptr));
    if (d->d_tag == DT_GNU_HASH) out->gnu_hash = static_cast<const uint32_t*>(address(base, d->d_un.d_ptr));
  }
  return out->symtab != nullptr && out->strtab != nullptr && out->gnu_hash != nullptr;
}

uint32_t gnu_hash(const char* name) {
  uint32_t h = 5381;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(name); *p != 0; ++p) h = h * 33 + *p;
  return h;
}

// The defined function `name` in the object's GNU hash table (any version: libc's dlsym@GLIBC_2.2.5
// and dlsym@@GLIBC_2.34 are one function).
void* lookup(const DynamicTables& t, const char* name) {
  const uint32_t nbuckets = t.gnu_hash[0];
  const uint32_t symoffset = t.gnu_hash[1];
  const uint32_t bloom_size = t.gnu_hash[2];
  if (nbuckets == 0) return nullptr;
  const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(t.gnu_hash + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chain = buckets + nbuckets;
  const uint32_t h = gnu_hash(name);
  uint32_t index = buckets[h % nbuckets];
  if (index < symoffset) return nullptr;
  for (;; ++index) {
    const uint32_t entry = chain[index - symoffset];
    if ((entry | 1) == (h | 1)) {
      const ElfW(Sym)& sym = t.symtab[index];
      if (sym.st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym.st_info) == STT_FUNC && std::strcmp(t.strtab + sym.st_name, name) == 0) {
        return reinterpret_cast<void*>(t.base + sym.st_value);
      }
    }
    if ((entry & 1) != 0) return nullptr;
  }
}

// Where glibc keeps dlsym and dlvsym: libc.so.6 since 2.34, libdl.so.2 before (Ubuntu 20.04,
// Debian 11, RHEL 8). From 2.34 on libdl.so.2 is an empty stub, so libc is searched first.
const char* const kDlsymHomes[] = {"libc.so.6", "libdl.so.2"};

bool has_file_name(const char* path, const char* file) {
  const char* slash = std::strrchr(path, '/');
  return std::strcmp(slash != nullptr ? slash + 1 : path, file) == 0;
}

struct Search {
  const char* file;  // the object to look in (its file name)
  const char* name;
  void* found;
};

// dl_iterate_phdr, not dlopen: no allocation, so a malloc interposer that calls dlsym from
// inside its first malloc cannot make this recurse.
int visit(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  if (info->dlpi_name == nullptr || !has_file_name(info->dlpi_name, search->file)) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    DynamicTables tables;
    if (read_tables(info->dlpi_addr, dynamic, &tables)) search->found = lookup(tables, search->name);
  }
  return 1;
}

void* find_in_libc(const char* name) {
  for (const char* file : kDlsymHomes) {
    Search search{file, name, nullptr};
    dl_iterate_phdr(visit, &search);
    if (search.found != nullptr) return search.found;
  }
  return nullptr;
}

void* cached(std::atomic<void*>& slot, const char* name) {
  void* fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = find_in_libc(name);  // idempotent: racing threads store the same address
    if (fn != nullptr) slot.store(fn, std::memory_order_release);
  }
  return fn;
}

// Early, before other libraries' constructors may call dlsym (the lookup is lazy all the same).
__attribute__((constructor(101))) void find_early() {
  cached(hangshim_libc_dlsym, "dlsym");
  cached(hangshim_libc_dlvsym, "dlvsym");
}

}  // namespace

DlsymFn libc_dlsym() noexcept { return reinterpret_cast<DlsymFn>(cached(hangshim_libc_dlsym, "dlsym")); }
DlvsymFn libc_dlvsym() noexcept { return reinterpret_cast<DlvsymFn>(cached(hangshim_libc_dlvsym, "dlvsym")); }

void* real_dlsym(void* handle, const char* name) noexcept {
  DlsymFn fn = libc_dlsym();
  return fn != nullptr ? fn(handle, name) : nullptr;
}

}  // namespace hangshim::shim
