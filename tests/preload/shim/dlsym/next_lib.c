/* Built twice (NEXT_ID 1 and 2) as libdlsym_next_a.so and libdlsym_next_b.so, linked in that
   order into next_caller: both define hangshim_next_foo; next_lookup asks glibc from inside this
   library for the definition after it (RTLD_NEXT), whose answer depends on which object calls
   dlsym: the interposer must keep the caller glibc sees. */
#define _GNU_SOURCE
#include <dlfcn.h>

#define CONCAT2(a, b) a##b
#define CONCAT(a, b) CONCAT2(a, b)

int hangshim_next_foo(void) { return NEXT_ID; }

/* The empty asm after the call keeps it a call: as a tail jump, glibc would see the program
   (the caller of this function) as the caller of dlsym. */
void* CONCAT(next_lookup_, NEXT_ID)(const char* name) {
  void* found = dlsym(RTLD_NEXT, name);
  __asm__ volatile("" ::: "memory");
  return found;
}
void* CONCAT(next_vlookup_, NEXT_ID)(const char* name, const char* version) {
  void* found = dlvsym(RTLD_NEXT, name, version);
  __asm__ volatile("" ::: "memory");
  return found;
}
