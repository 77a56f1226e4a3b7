// Every NCCL entry point libhangshim.so exports, in one place. Each list entry is
//   X(name, return type, (parameters), (arguments) [, fields])
// with the exact prototypes of nccl.h (the compiler checks every wrapper against them), so
// consumers define X as variadic: #define X(name, ret, params, args, ...).
//
//   queries       forwarded untouched (cheap; a few feed the ledger: version, async errors)
//   life cycle    communicator creation and end (and revoke): register keys, record the call
//   windows       memory window (de)registration: collective, recorded like one (host-side)
//   collectives   recorded around the call; their fields say which arguments become the
//                 record's Op, count, dtype, reduce op and root/peer (-1: the call has none)
#pragma once

#include <nccl.h>

#define HANGSHIM_NCCL_QUERIES(X)                                                                   \
  X(ncclGetVersion, ncclResult_t, (int* version), (version))                                       \
  X(ncclGetUniqueId, ncclResult_t, (ncclUniqueId * uniqueId), (uniqueId))                          \
  X(ncclCommCount, ncclResult_t, (const ncclComm_t comm, int* count), (comm, count))               \
  X(ncclCommUserRank, ncclResult_t, (const ncclComm_t comm, int* rank), (comm, rank))              \
  X(ncclCommCuDevice, ncclResult_t, (const ncclComm_t comm, int* device), (comm, device))          \
  X(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t comm, ncclResult_t * asyncError), (comm, asyncError)) \
  X(ncclGetErrorString, const char*, (ncclResult_t result), (result))                              \
  X(ncclGetLastError, const char*, (ncclComm_t comm), (comm))

#define HANGSHIM_NCCL_LIFE_CYCLE(X)                                                                \
  X(ncclCommInitRank, ncclResult_t, (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank), \
    (comm, nranks, commId, rank))                                                                  \
  X(ncclCommInitRankConfig, ncclResult_t,                                                          \
    (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config),          \
    (comm, nranks, commId, rank, config))                                                          \
  X(ncclCommInitRankScalable, ncclResult_t,                                                        \
    (ncclComm_t * newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds, ncclConfig_t* config), \
    (newcomm, nranks, myrank, nId, commIds, config))                                               \
  X(ncclCommInitAll, ncclResult_t, (ncclComm_t * comm, int ndev, const int* devlist), (comm, ndev, devlist)) \
  X(ncclCommSplit, ncclResult_t, (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config), \
    (comm, color, key, newcomm, config))                                                           \
  X(ncclCommShrink, ncclResult_t,                                                                  \
    (ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm, ncclConfig_t* config, \
     int shrinkFlags),                                                                             \
    (comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags))                     \
  X(ncclCommFinalize, ncclResult_t, (ncclComm_t comm), (comm))                                     \
  X(ncclCommDestroy, ncclResult_t, (ncclComm_t comm), (comm))                                      \
  X(ncclCommAbort, ncclResult_t, (ncclComm_t comm), (comm))                                        \
  X(ncclCommRevoke, ncclResult_t, (ncclComm_t comm, int revokeFlags), (comm, revokeFlags))          \
  X(ncclGroupStart, ncclResult_t, (), ())                                                          \
  X(ncclGroupEnd, ncclResult_t, (), ())                                                            \
  X(ncclGroupSimulateEnd, ncclResult_t, (ncclSimInfo_t * simInfo), (simInfo))

#define HANGSHIM_NCCL_WINDOWS(X)                                                                   \
  X(ncclCommWindowRegister, ncclResult_t,                                                          \
    (ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags),                   \
    (comm, buff, size, win, winFlags))                                                             \
  X(ncclCommWindowDeregister, ncclResult_t, (ncclComm_t comm, ncclWindow_t win), (comm, win))

#define HANGSHIM_NCCL_COLLECTIVES(X)                                                         \
  X(ncclAllReduce, ncclResult_t,                                                             \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,            \
     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                  \
    (sendbuff, recvbuff, count, datatype, op, comm, stream),                                 \
    AllReduce, count, datatype, op, -1)                                                      \
  X(ncclBroadcast, ncclResult_t,                                                             \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,  \
     ncclComm_t comm, cudaStream_t stream),                                                  \
    (sendbuff, recvbuff, count, datatype, root, comm, stream),                               \
    Broadcast, count, datatype, -1, root)                                                    \
  X(ncclBcast, ncclResult_t,                                                                 \
    (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,           \
     cudaStream_t stream),                                                                   \
    (buff, count, datatype, root, comm, stream),                                             \
    Broadcast, count, datatype, -1, root)                                                    \
  X(ncclReduce, ncclResult_t,                                                                \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,            \
     ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream),                        \
    (sendbuff, recvbuff, count, datatype, op, root, comm, stream),                           \
    Reduce, count, datatype, op, root)                                                       \
  X(ncclAllGather, ncclResult_t,                                                             \
    (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,        \
     ncclComm_t comm, cudaStream_t stream),                                                  \
    (sendbuff, recvbuff, sendcount, datatype, comm, stream),                                 \
    AllGather, sendcount, datatype, -1, -1)                                                  \
  X(ncclReduceScatter, ncclResult_t,                                                         \
    (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,        \
     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),                                  \
    (sendbuff, recvbuff, recvcount, datatype, op, comm, stream),                             \
    ReduceScatter, recvcount, datatype, op, -1)                                              \
  X(ncclAlltoAll, ncclResult_t,                                                              \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,            \
     ncclComm_t comm, cudaStream_t stream),                                                  \
    (sendbuff, recvbuff, count, datatype, comm, stream),                                     \
    AlltoAll, count, datatype, -1, -1)                                                       \
  X(ncclGather, ncclResult_t,                                                                \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,  \
     ncclComm_t comm, cudaStream_t stream),                                                  \
    (sendbuff, recvbuff, count, datatype, root, comm, stream),                               \
    Gather, count, datatype, -1, root)                                                       \
  X(ncclScatter, ncclResult_t,                                                               \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,  \
     ncclComm_t comm, cudaStream_t stream),                                                  \
    (sendbuff, recvbuff, count, datatype, root, comm, stream),                               \
    Scatter, count, datatype, -1, root)                                                      \
  X(ncclSend, ncclResult_t,                                                                  \
    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, \
     cudaStream_t stream),                                                                   \
    (sendbuff, count, datatype, peer, comm, stream),                                         \
    Send, count, datatype, -1, peer)                                                         \
  X(ncclRecv, ncclResult_t,                                                                  \
    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,       \
     cudaStream_t stream),                                                                   \
    (recvbuff, count, datatype, peer, comm, stream),                                         \
    Recv, count, datatype, -1, peer)

#define HANGSHIM_NCCL_ENTRY_POINTS(X) \
  HANGSHIM_NCCL_QUERIES(X)            \
  HANGSHIM_NCCL_LIFE_CYCLE(X)         \
  HANGSHIM_NCCL_WINDOWS(X)            \
  HANGSHIM_NCCL_COLLECTIVES(X)
