/* LD_PRELOAD helper of native_bench.py: how long a tracer (pyframes --native, gdb) keeps its
   target stopped, measured in the tracer from its first stopping ptrace request
   (PTRACE_INTERRUPT, PTRACE_ATTACH) to its last PTRACE_DETACH. At exit it appends one line
   "<stopped nanoseconds> <stopping requests> <detaches>" to $PTRACE_CLOCK_FILE. Benchmark
   tooling only: pyframes itself never loads it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <time.h>

typedef long (*ptrace_fn)(enum __ptrace_request, pid_t, void*, void*);

static long long first_stop_ns = -1;
static long long last_detach_ns = -1;
static long stops = 0;
static long detaches = 0;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long ptrace(enum __ptrace_request request, ...) {
  static ptrace_fn real = NULL;
  if (real == NULL) real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  va_list args;
  va_start(args, request);
  pid_t pid = va_arg(args, pid_t);
  void* addr = va_arg(args, void*);
  void* data = va_arg(args, void*);
  va_end(args);
  if (request == PTRACE_INTERRUPT || request == PTRACE_ATTACH) {
    if (first_stop_ns < 0) first_stop_ns = now_ns();
    ++stops;
  }
  long result = real(request, pid, addr, data);
  if (request == PTRACE_DETACH) {
    last_detach_ns = now_ns();
    ++detaches;
  }
  return result;
}

__attribute__((destructor)) static void report(void) {
  const char* path = getenv("PTRACE_CLOCK_FILE");
  if (path == NULL || first_stop_ns < 0 || last_detach_ns < first_stop_ns) return;
  FILE* out = fopen(path, "a");
  if (out == NULL) return;
  fprintf(out, "%lld %ld %ld\n", last_detach_ns - first_stop_ns, stops, detaches);
  fclose(out);
}
