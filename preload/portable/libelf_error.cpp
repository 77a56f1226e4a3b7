// libelf's error state for the portable libhangshim.so, in place of Debian's elf_error.o: that
// member of libelf.a keeps the last error in local-exec TLS, which a shared object cannot hold,
// so HangshimPortable.cmake links the shim with a copy of libelf.a that leaves it out. Same
// contract (elf_errno reads and clears the thread's last error; elf_errmsg(-1) describes it,
// elf_errmsg(0) only if there is one); the text names the libelf error number, since the
// message table is libelf's own and not part of its interface.
#include <cstdio>

namespace {

thread_local int last_error = 0;  // ELF_E_NOERROR
thread_local char message[64];

}  // namespace

extern "C" {

__attribute__((visibility("hidden"))) void __libelf_seterrno(int value) { last_error = value; }

__attribute__((visibility("hidden"))) int elf_errno(void) {
  const int error = last_error;
  last_error = 0;
  return error;
}

__attribute__((visibility("hidden"))) const char* elf_errmsg(int error) {
  const int code = error == -1 || error == 0 ? last_error : error;
  if (code == 0) return error == 0 ? nullptr : "no error";
  std::snprintf(message, sizeof message, "libelf error %d", code);
  return message;
}

}  // extern "C"
