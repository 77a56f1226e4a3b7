// ncclSend / ncclRecv over one channel per (sender, receiver) pair: chunk c is posted by the
// sender when the channel is empty and acknowledged by the receiver after copying it out. A send
// completes only when its last chunk was received, so an unmatched send blocks like NCCL's, and
// sends and receives that must overlap need a group, as NCCL documents.
#include "comm.h"
#include "dtype.h"
#include "errors.h"
#include "ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace fakenccl {
namespace {

class P2pOp final : public Op {
 public:
  P2pOp(ncclComm* comm, const P2pArgs& args) : Op(comm), a_(args) {
    esize_ = dtype_size(a_.datatype);
    per_chunk_ = std::max<std::uint64_t>(1, comm->segment.p2p_chunk_bytes() / esize_);
    chunks_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (a_.count + per_chunk_ - 1) / per_chunk_));
  }

  void number() override {
    ncclComm* c = comm();
    const auto peer = static_cast<std::size_t>(a_.peer);
    auto& messages = a_.send ? c->send_messages : c->recv_messages;
    auto& chunks = a_.send ? c->send_chunks : c->recv_chunks;
    message_ = ++messages[peer];
    first_chunk_ = chunks[peer];
    chunks[peer] += chunks_;
  }

  Progress step() override { return a_.send ? step_send() : step_recv(); }

  std::string describe() const override {
    return fmt::format("{} #{} {} rank {} (count {}, {})", a_.send ? "ncclSend" : "ncclRecv",
                       message_, a_.send ? "to" : "from", a_.peer, a_.count, dtype_name(a_.datatype));
  }
  std::string waiting_for() const override { return wait_; }

 private:
  P2pDesc expected(std::uint32_t chunk) const {
    P2pDesc d{};
    d.message = message_;
    d.count = a_.count;
    d.datatype = a_.datatype;
    d.chunk_index = chunk;
    d.chunk_count = chunks_;
    return d;
  }
  std::uint64_t chunk_elems(std::uint32_t j) const {
    const std::uint64_t lo = std::min(a_.count, j * per_chunk_);
    return std::min(a_.count, lo + per_chunk_) - lo;
  }

  Progress step_send() {
    ncclComm* c = comm();
    Channel& ch = c->segment.channel(c->rank, a_.peer);
    bool advanced = false;
    while (next_ < chunks_) {
      const std::uint64_t k = first_chunk_ + next_;
      if (load_acquire(ch.posted) != k || load_acquire(ch.acked) != k) {
        wait_ = fmt::format("waiting for rank {} to receive earlier data on this channel", a_.peer);
        return advanced ? Progress::kAdvanced : Progress::kBlocked;
      }
      const std::uint64_t n = chunk_elems(next_);
      if (n > 0) {
        std::memcpy(c->segment.channel_data(c->rank, a_.peer),
                    static_cast<const std::byte*>(a_.sendbuff) + next_ * per_chunk_ * esize_, n * esize_);
      }
      ch.desc = expected(next_);
      store_release(ch.posted, k + 1);
      c->segment.wake_all();
      ++next_;
      advanced = true;
    }
    if (load_acquire(ch.acked) >= first_chunk_ + chunks_) return Progress::kDone;
    wait_ = fmt::format("waiting for rank {} to call the matching ncclRecv", a_.peer);
    return advanced ? Progress::kAdvanced : Progress::kBlocked;
  }

  Progress step_recv() {
    ncclComm* c = comm();
    Channel& ch = c->segment.channel(a_.peer, c->rank);
    bool advanced = false;
    while (next_ < chunks_) {
      const std::uint64_t k = first_chunk_ + next_;
      if (load_acquire(ch.posted) <= k || load_acquire(ch.acked) != k) {
        wait_ = fmt::format("waiting for rank {} to call the matching ncclSend", a_.peer);
        return advanced ? Progress::kAdvanced : Progress::kBlocked;
      }
      const P2pDesc theirs = ch.desc;
      const P2pDesc mine = expected(next_);
      if (std::memcmp(&theirs, &mine, sizeof mine) != 0) {
        wait_ = fmt::format("rank {} sent message #{} with count {} {} but this receive expects "
                            "count {} {} (a mismatch: the stand-in waits)",
                            a_.peer, theirs.message, theirs.count, dtype_name(theirs.datatype),
                            a_.count, dtype_name(a_.datatype));
        return advanced ? Progress::kAdvanced : Progress::kBlocked;
      }
      const std::uint64_t n = chunk_elems(next_);
      if (n > 0) {
        std::memcpy(static_cast<std::byte*>(a_.recvbuff) + next_ * per_chunk_ * esize_,
                    c->segment.channel_data(a_.peer, c->rank), n * esize_);
      }
      store_release(ch.acked, k + 1);
      c->segment.wake_all();
      ++next_;
      advanced = true;
    }
    return Progress::kDone;
  }

  P2pArgs a_;
  std::size_t esize_ = 1;
  std::uint64_t per_chunk_ = 1;
  std::uint32_t chunks_ = 1;
  std::uint64_t message_ = 0;
  std::uint64_t first_chunk_ = 0;
  std::uint32_t next_ = 0;
  std::string wait_;
};

class JoinWaitOp final : public Op {
 public:
  using Op::Op;
  void number() override {}
  Progress step() override { return comm()->segment.all_joined() ? Progress::kDone : Progress::kBlocked; }
  std::string describe() const override {
    return fmt::format("ncclCommInitRank (rank {} of {})", comm()->rank, comm()->nranks);
  }
  std::string waiting_for() const override {
    std::vector<int> missing;
    for (int r = 0; r < comm()->nranks; ++r) {
      if (load_acquire(comm()->segment.slot(r).joined) == 0) missing.push_back(r);
    }
    return fmt::format("waiting for ranks {} to call ncclCommInitRank", rank_list(missing));
  }
};

}  // namespace

ncclResult_t check_p2p_args(const ncclComm* comm, const P2pArgs& a, const char* api) {
  const std::size_t esize = dtype_size(a.datatype);
  if (esize == 0) return fail(ncclInvalidArgument, "fakenccl: {}: invalid datatype {}", api, a.datatype);
  if (a.peer < 0 || a.peer >= comm->nranks) {
    return fail(ncclInvalidArgument, "fakenccl: {}: peer {} is not a rank of this {}-rank communicator",
                api, a.peer, comm->nranks);
  }
  if (a.count > std::numeric_limits<std::uint64_t>::max() / 2 / esize) {
    return fail(ncclInvalidArgument, "fakenccl: {}: count {} is too large", api, a.count);
  }
  if (a.count > 0 && a.send && a.sendbuff == nullptr) {
    return fail(ncclInvalidArgument, "fakenccl: {}: sendbuff is NULL", api);
  }
  if (a.count > 0 && !a.send && a.recvbuff == nullptr) {
    return fail(ncclInvalidArgument, "fakenccl: {}: recvbuff is NULL", api);
  }
  return ncclSuccess;
}

std::unique_ptr<Op> make_p2p_op(ncclComm* comm, const P2pArgs& args) {
  return std::make_unique<P2pOp>(comm, args);
}

std::unique_ptr<Op> make_join_wait_op(ncclComm* comm) { return std::make_unique<JoinWaitOp>(comm); }

}  // namespace fakenccl
