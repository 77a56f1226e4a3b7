// __cxa_thread_atexit_impl for the portable libhangshim.so: how libstdc++ runs the destructors
// of thread_local objects (the shim has one: its per-thread group state) when a thread ends. glibc
// has it from 2.18; one symbol at 2.18 would raise the shim's glibc floor past manylinux2014's
// 2.17. This hidden one keeps each thread's destructors in a list under a pthread key, whose
// destructor runs them, newest first, when the thread exits. The main thread's run at exit() in
// glibc's version and not here: the shim's are only memory, which the exiting process returns.
#include <pthread.h>

#include <cstdlib>

namespace {

struct ThreadDestructor {
  void (*destroy)(void*);
  void* object;
  ThreadDestructor* next;
};

pthread_key_t destructors_key;
pthread_once_t key_once = PTHREAD_ONCE_INIT;
bool have_key = false;

// pthread clears the key before calling this; destructors registered meanwhile set it again and
// pthread calls this once more for them (up to PTHREAD_DESTRUCTOR_ITERATIONS rounds).
void run_destructors(void* list) {
  for (auto* d = static_cast<ThreadDestructor*>(list); d != nullptr;) {
    ThreadDestructor* next = d->next;
    d->destroy(d->object);
    std::free(d);
    d = next;
  }
}

void make_key() { have_key = pthread_key_create(&destructors_key, run_destructors) == 0; }

}  // namespace

extern "C" __attribute__((visibility("hidden"))) int __cxa_thread_atexit_impl(void (*destroy)(void*), void* object,
                                                                              void* /*dso_handle*/) {
  pthread_once(&key_once, make_key);
  if (!have_key) return -1;
  auto* d = static_cast<ThreadDestructor*>(std::malloc(sizeof(ThreadDestructor)));
  if (d == nullptr) return -1;
  *d = {destroy, object, static_cast<ThreadDestructor*>(pthread_getspecific(destructors_key))};
  if (pthread_setspecific(destructors_key, d) != 0) {
    std::free(d);
    return -1;
  }
  return 0;
}
