// libc's own dlsym and dlvsym, for the shim's interposer (dlsym_entry.cpp) and for the shim's
// own lookups by handle. libhangshim.so exports dlsym/dlvsym, so any call to them from inside
// the shim binds to the shim's export again; and glibc 2.36 exports no _dl_sym. The addresses
// are therefore read from libc.so.6's dynamic symbol table (its GNU hash; libdl.so.2's before
// glibc 2.34), which needs no dlsym, no lock and no allocation: safe from any thread, at any
// time, also in a fork child.
#pragma once

namespace hangshim::shim {

using DlsymFn = void* (*)(void*, const char*);
using DlvsymFn = void* (*)(void*, const char*, const char*);

// libc's dlsym / dlvsym; nullptr only if neither libc.so.6 nor libdl.so.2 has them (not glibc).
DlsymFn libc_dlsym() noexcept;
DlvsymFn libc_dlvsym() noexcept;

// libc's dlsym(handle, name) for the shim's own lookups by handle (never RTLD_NEXT: the caller
// it would see is this function, which is right too, but say so where it matters).
void* real_dlsym(void* handle, const char* name) noexcept;

}  // namespace hangshim::shim
