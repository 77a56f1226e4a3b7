/* dlsym and dlvsym answers for names that are not NCCL's, printed one per line, for
   run_dlsym_case.py to compare with and without libhangshim.so preloaded: RTLD_NEXT from the
   program and from each of two libraries defining the same name, RTLD_DEFAULT, a handle, a
   missing name (with dlerror's text), and a versioned libc symbol. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void* next_lookup_1(const char* name);
void* next_lookup_2(const char* name);
void* next_vlookup_1(const char* name, const char* version);

static const char* where(void* address) {
  if (address == NULL) return "null";
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == NULL) return "?";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash != NULL ? slash + 1 : info.dli_fname;
}

static void show(const char* what, void* address) {
  const char* error = address == NULL ? dlerror() : NULL;
  printf("%s -> %s%s%s\n", what, where(address), error != NULL ? " error: " : "", error != NULL ? error : "");
}

int main(int argc, char** argv) {
  (void)argc;
  show("RTLD_NEXT from the program: hangshim_next_foo", dlsym(RTLD_NEXT, "hangshim_next_foo"));
  show("RTLD_NEXT from lib a: hangshim_next_foo", next_lookup_1("hangshim_next_foo"));
  show("RTLD_NEXT from lib b: hangshim_next_foo", next_lookup_2("hangshim_next_foo"));
  show("RTLD_NEXT from lib a: malloc", next_lookup_1("malloc"));
  show("RTLD_NEXT from lib b: hangshim_missing", next_lookup_2("hangshim_missing"));
  show("dlvsym RTLD_NEXT from lib a: hangshim_next_foo", next_vlookup_1("hangshim_next_foo", "NONE_1"));
  show("dlvsym RTLD_NEXT from lib a: memcpy@GLIBC_2.14", next_vlookup_1("memcpy", "GLIBC_2.14"));
  show("RTLD_DEFAULT: hangshim_next_foo", dlsym(RTLD_DEFAULT, "hangshim_next_foo"));
  show("RTLD_DEFAULT: hangshim_missing", dlsym(RTLD_DEFAULT, "hangshim_missing"));
  show("RTLD_DEFAULT: ncclNotAnEntryPoint", dlsym(RTLD_DEFAULT, "ncclNotAnEntryPoint"));
  void* b = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  show("handle of lib b: hangshim_next_foo", b != NULL ? dlsym(b, "hangshim_next_foo") : NULL);
  show("handle of lib b: ncclAllReduce (not defined there)", b != NULL ? dlsym(b, "ncclAllReduce") : NULL);
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  show("handle of libc: printf", dlsym(libc, "printf"));
  show("dlvsym handle of libc: memcpy@GLIBC_2.2.5", dlvsym(libc, "memcpy", "GLIBC_2.2.5"));
  show("dlvsym handle of libc: memcpy@NOT_A_VERSION", dlvsym(libc, "memcpy", "NOT_A_VERSION"));
  int (*foo)(void) = (int (*)(void))next_lookup_1("hangshim_next_foo");
  printf("the definition after lib a answers %d\n", foo != NULL ? foo() : -1);
  return 0;
}
