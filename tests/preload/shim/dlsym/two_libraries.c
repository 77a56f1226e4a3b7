/* Two NCCLs in one process, each dlopen'ed RTLD_LOCAL from its own file: calls through each
   handle must reach that handle's library, also NCCL's own inner calls (ncclBcast ->
   ncclBroadcast through the library's PLT). Prints what each library answered; the same lines
   are expected with and without the shim.
     two_libraries LIB_A LIB_B */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

typedef ncclResult_t (*VersionFn)(int*);
typedef ncclResult_t (*BcastFn)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);

static const char* where(void* fn) {
  Dl_info info;
  if (dladdr(fn, &info) == 0 || info.dli_fname == NULL) return "?";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash != NULL ? slash + 1 : info.dli_fname;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  void* handles[2];
  for (int i = 0; i < 2; ++i) {
    handles[i] = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
    if (handles[i] == NULL) {
      fprintf(stderr, "two_libraries: %s\n", dlerror());
      return 2;
    }
  }
  /* Interleaved on purpose: each call must go to its own library whatever came before. */
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 2; ++i) {
      VersionFn version = (VersionFn)dlsym(handles[i], "ncclGetVersion");
      BcastFn bcast = (BcastFn)dlsym(handles[i], "ncclBcast");
      if (version == NULL || bcast == NULL) return 3;
      fprintf(stderr, "address library %d ncclGetVersion %s ncclBcast %s\n", i, where((void*)version), where((void*)bcast));
      int v = -1;
      ncclResult_t r = version(&v);
      printf("library %d: ncclGetVersion -> %d (result %d)\n", i, v, (int)r);
      float x = 1;
      for (int k = 0; k <= i; ++k) r = bcast(&x, 1, ncclFloat32, 0, NULL, NULL);
      printf("library %d: ncclBcast -> result %d\n", i, (int)r);
    }
  }
  for (int i = 0; i < 2; ++i) {
    const int* count = (const int*)dlsym(handles[i], "tinyBroadcasts");
    printf("library %d: tinyBroadcasts = %d\n", i, count != NULL ? *count : -1);
  }
  return 0;
}
