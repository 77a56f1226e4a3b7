// Units of communication work. Every NCCL call that communicates becomes an Op; a group (or a
// single call outside one) is a list of Ops that the engine drives to completion together.
// An Op never blocks: step() does whatever the shared state allows and says whether it moved.
#pragma once

#include "layout.h"

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fakenccl {

enum class Progress { kBlocked, kAdvanced, kDone };

class Op {
 public:
  explicit Op(ncclComm* comm) : comm_(comm) {}
  virtual ~Op() = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  ncclComm* comm() const { return comm_; }
  // Takes this op's numbers (rounds, messages) from the communicator. Called at launch, in
  // program order, by the issuing thread.
  virtual void number() = 0;
  virtual Progress step() = 0;
  // "ncclAllReduce #3 (count 12, float32, sum)" — for error messages.
  virtual std::string describe() const = 0;
  // Why step() cannot go on right now ("waiting for ranks 1,3 to issue it").
  virtual std::string waiting_for() const = 0;

 private:
  ncclComm* comm_;
};

// The arguments of one collective call (or of ncclCommSplit's exchange).
struct CollArgs {
  OpKind kind = OpKind::kAllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  std::uint64_t count = 0;  // per-rank count as NCCL defines it for the op
  int datatype = ncclFloat32;
  int redop = -1;
  int root = -1;
};

// Validates the arguments (types, root, buffers) for `comm`; sets the last error on failure.
ncclResult_t check_coll_args(const ncclComm* comm, const CollArgs& args, const char* api);
std::unique_ptr<Op> make_coll_op(ncclComm* comm, const CollArgs& args);

struct P2pArgs {
  bool send = true;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  std::uint64_t count = 0;
  int datatype = ncclFloat32;
  int peer = 0;
};
ncclResult_t check_p2p_args(const ncclComm* comm, const P2pArgs& args, const char* api);
std::unique_ptr<Op> make_p2p_op(ncclComm* comm, const P2pArgs& args);

// Completes when every rank of `comm` has joined its segment (ncclCommInitRank inside a group).
std::unique_ptr<Op> make_join_wait_op(ncclComm* comm);

// NCCL's API name for an op kind ("ncclAllReduce").
const char* kind_api_name(OpKind kind);
// A rank list as "1,3,5-7".
std::string rank_list(const std::vector<int>& ranks);

}  // namespace fakenccl
