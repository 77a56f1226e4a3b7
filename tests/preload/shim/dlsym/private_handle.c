/* A program that reaches NCCL only through its own handle, as ctypes.CDLL(path) and C/C++
   dlopen + dlsym loaders do: dlopen(LIB, RTLD_LOCAL) and every function from dlsym(handle).
   One rank; it prints where each address it got lives (dladdr) and every call it makes, for
   run_dlsym_case.py to compare with the ledger.
     private_handle LIB CALLS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ncclResult_t (*GetUniqueIdFn)(ncclUniqueId*);
typedef ncclResult_t (*InitRankFn)(ncclComm_t*, int, ncclUniqueId, int);
typedef ncclResult_t (*AllReduceFn)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*BroadcastFn)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*DestroyFn)(ncclComm_t);

static void* find(void* handle, const char* name) {
  void* fn = dlsym(handle, name);
  if (fn == NULL) {
    fprintf(stderr, "private_handle: dlsym %s: %s\n", name, dlerror());
    exit(2);
  }
  Dl_info info;
  const char* file = dladdr(fn, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : "?";
  const char* slash = strrchr(file, '/');
  printf("address %s %s\n", name, slash != NULL ? slash + 1 : file);
  return fn;
}

static void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    fprintf(stderr, "private_handle: %s failed: %d\n", what, (int)r);
    exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: private_handle LIB CALLS\n");
    return 2;
  }
  const int calls = atoi(argv[2]);
  void* handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "private_handle: %s\n", dlerror());
    return 2;
  }
  GetUniqueIdFn get_id = (GetUniqueIdFn)find(handle, "ncclGetUniqueId");
  InitRankFn init = (InitRankFn)find(handle, "ncclCommInitRank");
  AllReduceFn all_reduce = (AllReduceFn)find(handle, "ncclAllReduce");
  BroadcastFn broadcast = (BroadcastFn)find(handle, "ncclBroadcast");
  DestroyFn destroy = (DestroyFn)find(handle, "ncclCommDestroy");
  ncclUniqueId id;
  ncclComm_t comm;
  check(get_id(&id), "ncclGetUniqueId");
  check(init(&comm, 1, id, 0), "ncclCommInitRank");
  float data[64];
  for (int i = 0; i < 64; ++i) data[i] = (float)i;
  for (int i = 0; i < calls; ++i) {
    size_t count = (size_t)(i + 1);
    check(all_reduce(data, data, count, ncclFloat32, ncclSum, comm, NULL), "ncclAllReduce");
    printf("call all_reduce %zu\n", count);
    check(broadcast(data, data, count + 10, ncclFloat32, 0, comm, NULL), "ncclBroadcast");
    printf("call broadcast %zu\n", count + 10);
  }
  check(destroy(comm), "ncclCommDestroy");
  return 0;
}
