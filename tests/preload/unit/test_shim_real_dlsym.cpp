// libc's dlsym and dlvsym as the shim finds them (preload/shim/real_dlsym.cpp): read from
// libc.so.6's GNU hash table, they must be the very functions libc's own dlsym names, and
// lookups through them must answer as libc does. (This test process has no interposer.)
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <initializer_list>

#include "shim/real_dlsym.h"

namespace {

void* libc_handle() { return dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD); }

}  // namespace

TEST_CASE("shim real_dlsym: libc's dlsym and dlvsym are found in its symbol table") {
  void* libc = libc_handle();
  REQUIRE(libc != nullptr);
  CHECK(reinterpret_cast<void*>(hangshim::shim::libc_dlsym()) == dlsym(libc, "dlsym"));
  CHECK(reinterpret_cast<void*>(hangshim::shim::libc_dlvsym()) == dlsym(libc, "dlvsym"));
  CHECK(reinterpret_cast<void*>(hangshim::shim::libc_dlsym()) != nullptr);
  dlclose(libc);
}

TEST_CASE("shim real_dlsym: lookups answer as libc's dlsym") {
  void* libc = libc_handle();
  REQUIRE(libc != nullptr);
  for (const char* name : {"printf", "malloc", "dl_iterate_phdr", "hangshim_no_such_symbol"}) {
    CAPTURE(name);
    CHECK(hangshim::shim::real_dlsym(libc, name) == dlsym(libc, name));
  }
  CHECK(hangshim::shim::real_dlsym(RTLD_DEFAULT, "hangshim_no_such_symbol") == nullptr);
  dlclose(libc);
}
