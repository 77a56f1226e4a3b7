// Collectives, point-to-point and group calls: validate, turn into an op, submit.
#include "comm.h"
#include "export.h"
#include "group.h"
#include "ops.h"

using namespace fakenccl;

namespace {

ncclResult_t collective(const char* api, ncclComm_t comm, const CollArgs& args, cudaStream_t stream) {
  return guarded([&] {
    if (ncclResult_t r = comm_check_usable(comm, api); r != ncclSuccess) return group_note_error(r);
    if (ncclResult_t r = check_coll_args(comm, args, api); r != ncclSuccess) return group_note_error(r);
    return submit(make_coll_op(comm, args), stream);
  });
}

CollArgs coll(OpKind kind, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
              int redop, int root) {
  return CollArgs{kind, sendbuff, recvbuff, count, datatype, redop, root};
}

ncclResult_t point_to_point(const char* api, ncclComm_t comm, const P2pArgs& args, cudaStream_t stream) {
  return guarded([&] {
    if (ncclResult_t r = comm_check_usable(comm, api); r != ncclSuccess) return group_note_error(r);
    if (ncclResult_t r = check_p2p_args(comm, args, api); r != ncclSuccess) return group_note_error(r);
    return submit(make_p2p_op(comm, args), stream);
  });
}

}  // namespace

NCCL_API(ncclResult_t, ncclAllReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllReduce", comm, coll(OpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, -1),
                    stream);
}

NCCL_API(ncclResult_t, ncclBroadcast, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclBroadcast", comm, coll(OpKind::kBroadcast, sendbuff, recvbuff, count, datatype, -1, root),
                    stream);
}

// As the real library does (its ncclBcast is an in-place ncclBroadcast): a call through the
// PLT to the exported ncclBroadcast, so a preloaded interposer sees the inner call too.
NCCL_API(ncclResult_t, ncclBcast, void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
         cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCL_API(ncclResult_t, ncclReduce, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduce", comm, coll(OpKind::kReduce, sendbuff, recvbuff, count, datatype, op, root),
                    stream);
}

NCCL_API(ncclResult_t, ncclAllGather, const void* sendbuff, void* recvbuff, size_t sendcount,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAllGather", comm, coll(OpKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, -1, -1),
                    stream);
}

NCCL_API(ncclResult_t, ncclReduceScatter, const void* sendbuff, void* recvbuff, size_t recvcount,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclReduceScatter", comm,
                    coll(OpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1), stream);
}

NCCL_API(ncclResult_t, ncclAlltoAll, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclAlltoAll", comm, coll(OpKind::kAlltoAll, sendbuff, recvbuff, count, datatype, -1, -1),
                    stream);
}

NCCL_API(ncclResult_t, ncclGather, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclGather", comm, coll(OpKind::kGather, sendbuff, recvbuff, count, datatype, -1, root),
                    stream);
}

NCCL_API(ncclResult_t, ncclScatter, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream) {
  return collective("ncclScatter", comm, coll(OpKind::kScatter, sendbuff, recvbuff, count, datatype, -1, root),
                    stream);
}

NCCL_API(ncclResult_t, ncclSend, const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
         ncclComm_t comm, cudaStream_t stream) {
  return point_to_point("ncclSend", comm, P2pArgs{true, sendbuff, nullptr, count, datatype, peer}, stream);
}

NCCL_API(ncclResult_t, ncclRecv, void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
         cudaStream_t stream) {
  return point_to_point("ncclRecv", comm, P2pArgs{false, nullptr, recvbuff, count, datatype, peer}, stream);
}

NCCL_API(ncclResult_t, ncclGroupStart) {
  return guarded([] { return group_start(); });
}

NCCL_API(ncclResult_t, ncclGroupEnd) {
  return guarded([] { return group_end(); });
}

NCCL_API(ncclResult_t, ncclGroupSimulateEnd, ncclSimInfo_t* simInfo) {
  return guarded([simInfo] { return group_simulate_end(simInfo); });
}
