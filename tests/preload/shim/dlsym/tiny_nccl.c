/* A tiny "NCCL" built twice (TINY_ID 1 and 2) for the two-libraries test: ncclGetVersion
   answers the library's own id, and ncclBcast calls ncclBroadcast through its PLT, as the real
   NCCL does, so a preloaded shim sees that inner call and must forward it to this library, not
   to another NCCL. tinyBroadcasts counts this library's own ncclBroadcast calls. */
#include <nccl.h>

int tinyBroadcasts = 0;

ncclResult_t ncclGetVersion(int* version) {
  *version = TINY_ID;
  return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)root, (void)comm, (void)stream;
  ++tinyBroadcasts;
  return ncclSuccess;
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}
