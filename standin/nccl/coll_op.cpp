// Collectives over the round protocol (see layout.h): per round every rank stages its share of
// the data in its own staging area, waits until all ranks posted an equal descriptor for the
// round, computes its output from all staging areas and marks the round consumed. Large calls are
// cut into rounds of at most the staging size. A rank whose descriptor differs (another count,
// type, root, reduction or op) is never matched: every rank keeps waiting, as with real NCCL.
#include "comm.h"
#include "dtype.h"
#include "errors.h"
#include "ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace fakenccl {
namespace {

bool has_root(OpKind k) {
  return k == OpKind::kBroadcast || k == OpKind::kReduce || k == OpKind::kGather ||
         k == OpKind::kScatter;
}
bool reduces(OpKind k) {
  return k == OpKind::kAllReduce || k == OpKind::kReduce || k == OpKind::kReduceScatter;
}
// Whether the send data is cut into one block per rank (block j goes to rank j).
bool per_rank_blocks(OpKind k) {
  return k == OpKind::kReduceScatter || k == OpKind::kAlltoAll || k == OpKind::kScatter;
}
bool needs_send(OpKind k, bool is_root) {
  return (k != OpKind::kBroadcast && k != OpKind::kScatter) || is_root;
}
bool needs_recv(OpKind k, bool is_root) {
  return (k != OpKind::kReduce && k != OpKind::kGather) || is_root;
}

std::string describe_desc(const CollDesc& d) {
  const auto kind = static_cast<OpKind>(d.kind);
  std::string text = kind == OpKind::kSplit ? std::string("ncclCommSplit")
                                            : fmt::format("{} #{}", kind_api_name(kind), d.seq);
  text += fmt::format(" (count {}, {}", d.count, dtype_name(d.datatype));
  if (d.redop >= 0) text += fmt::format(", {}", redop_name(d.redop));
  if (d.root >= 0) text += fmt::format(", root {}", d.root);
  return text + ")";
}

class CollOp final : public Op {
 public:
  CollOp(ncclComm* comm, const CollArgs& args) : Op(comm), a_(args) {
    esize_ = dtype_size(a_.datatype);
    blocks_ = per_rank_blocks(a_.kind) ? static_cast<std::uint64_t>(comm->nranks) : 1;
    per_round_ = std::max<std::uint64_t>(1, comm->segment.coll_chunk_bytes() / (esize_ * blocks_));
    rounds_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (a_.count + per_round_ - 1) / per_round_));
  }

  void number() override {
    ncclComm* c = comm();
    seq_ = a_.kind == OpKind::kSplit ? c->splits_done + 1 : ++c->collectives_launched;
    first_round_ = c->rounds_launched + 1;
    c->rounds_launched += rounds_;
  }

  Progress step() override {
    ncclComm* c = comm();
    const Segment& seg = c->segment;
    bool advanced = false;
    while (next_ < rounds_) {
      const std::uint64_t k = first_round_ + next_;
      if (!posted_) {
        std::vector<int> busy;
        for (int r = 0; r < c->nranks; ++r) {
          if (load_acquire(seg.slot(r).consumed) < k - 1) busy.push_back(r);
        }
        if (!busy.empty()) {
          wait_ = fmt::format("waiting for ranks {} to finish the previous round", rank_list(busy));
          return advanced ? Progress::kAdvanced : Progress::kBlocked;
        }
        stage(next_);
        seg.slot(c->rank).desc = desc(next_);
        store_release(seg.slot(c->rank).posted, k);
        seg.wake_all();
        posted_ = advanced = true;
      }
      std::vector<int> missing;
      for (int r = 0; r < c->nranks; ++r) {
        if (load_acquire(seg.slot(r).posted) < k) missing.push_back(r);
      }
      if (!missing.empty()) {
        wait_ = fmt::format("waiting for ranks {} to issue it", rank_list(missing));
        return advanced ? Progress::kAdvanced : Progress::kBlocked;
      }
      const CollDesc mine = desc(next_);
      for (int r = 0; r < c->nranks; ++r) {
        const CollDesc theirs = seg.slot(r).desc;
        if (!(theirs == mine)) {
          wait_ = fmt::format("rank {} issued {} instead (a mismatch: real NCCL hangs or corrupts "
                              "data here; the stand-in waits)", r, describe_desc(theirs));
          return advanced ? Progress::kAdvanced : Progress::kBlocked;
        }
      }
      output(next_);
      store_release(seg.slot(c->rank).consumed, k);
      seg.wake_all();
      posted_ = false;
      ++next_;
      advanced = true;
    }
    return Progress::kDone;
  }

  std::string describe() const override { return describe_desc(desc(0)); }
  std::string waiting_for() const override { return wait_; }

 private:
  CollDesc desc(std::uint32_t round) const {
    CollDesc d{};
    d.seq = seq_;
    d.count = a_.count;
    d.kind = static_cast<std::uint32_t>(a_.kind);
    d.datatype = a_.datatype;
    d.redop = reduces(a_.kind) ? a_.redop : -1;
    d.root = has_root(a_.kind) ? a_.root : -1;
    d.round_index = round;
    d.round_count = rounds_;
    return d;
  }

  // Elements [lo, lo + len) of each block belong to round j.
  std::uint64_t lo(std::uint32_t j) const { return j * per_round_; }
  std::uint64_t len(std::uint32_t j) const { return std::min(a_.count, lo(j) + per_round_) - std::min(a_.count, lo(j)); }

  void stage(std::uint32_t j) {
    const ncclComm* c = comm();
    const bool is_root = c->rank == a_.root;
    const std::uint64_t n = len(j);
    if (n == 0 || !needs_send(a_.kind, is_root)) return;
    const auto* send = static_cast<const std::byte*>(a_.sendbuff);
    std::byte* dst = c->segment.staging(c->rank);
    for (std::uint64_t b = 0; b < blocks_; ++b) {
      std::memcpy(dst + b * n * esize_, send + (b * a_.count + lo(j)) * esize_, n * esize_);
    }
  }

  void output(std::uint32_t j) {
    const ncclComm* c = comm();
    const Segment& seg = c->segment;
    const bool is_root = c->rank == a_.root;
    const std::uint64_t n = len(j);
    if (n == 0 || !needs_recv(a_.kind, is_root)) return;
    auto* recv = static_cast<std::byte*>(a_.recvbuff);
    const std::uint64_t bytes = n * esize_;
    // Offset of this rank's block inside a staging area cut into per-rank blocks.
    const std::uint64_t my_block = per_rank_blocks(a_.kind) ? static_cast<std::uint64_t>(c->rank) * bytes : 0;
    switch (a_.kind) {
      case OpKind::kAllReduce:
      case OpKind::kReduce:
      case OpKind::kReduceScatter: {
        std::vector<const void*> inputs(static_cast<std::size_t>(c->nranks));
        for (int r = 0; r < c->nranks; ++r) inputs[static_cast<std::size_t>(r)] = seg.staging(r) + my_block;
        reduce_elements(recv + lo(j) * esize_, inputs.data(), c->nranks, n, a_.datatype, a_.redop);
        return;
      }
      case OpKind::kBroadcast:
      case OpKind::kScatter:
        std::memcpy(recv + lo(j) * esize_, seg.staging(a_.root) + my_block, bytes);
        return;
      case OpKind::kAllGather:
      case OpKind::kGather:
      case OpKind::kSplit:
      case OpKind::kWindow:
      case OpKind::kAlltoAll:
        for (int r = 0; r < c->nranks; ++r) {
          const auto ru = static_cast<std::uint64_t>(r);
          std::memcpy(recv + (ru * a_.count + lo(j)) * esize_, seg.staging(r) + my_block, bytes);
        }
        return;
      case OpKind::kSend:
      case OpKind::kRecv:
        return;
    }
  }

  CollArgs a_;
  std::size_t esize_ = 1;
  std::uint64_t blocks_ = 1;
  std::uint64_t per_round_ = 1;
  std::uint32_t rounds_ = 1;
  std::uint64_t seq_ = 0;
  std::uint64_t first_round_ = 0;
  std::uint32_t next_ = 0;
  bool posted_ = false;
  std::string wait_;
};

}  // namespace

ncclResult_t check_coll_args(const ncclComm* comm, const CollArgs& a, const char* api) {
  const std::size_t esize = dtype_size(a.datatype);
  if (esize == 0) return fail(ncclInvalidArgument, "fakenccl: {}: invalid datatype {}", api, a.datatype);
  if (reduces(a.kind) && !redop_valid(a.redop)) {
    return fail(ncclInvalidArgument, "fakenccl: {}: invalid reduction operator {} (the stand-in "
                "implements sum, prod, max, min and avg)", api, a.redop);
  }
  if (has_root(a.kind) && (a.root < 0 || a.root >= comm->nranks)) {
    return fail(ncclInvalidArgument, "fakenccl: {}: root {} is not a rank of this {}-rank communicator",
                api, a.root, comm->nranks);
  }
  const std::uint64_t blocks = per_rank_blocks(a.kind) || a.kind == OpKind::kAllGather ||
                                       a.kind == OpKind::kGather
                                   ? static_cast<std::uint64_t>(comm->nranks)
                                   : 1;
  if (a.count > std::numeric_limits<std::uint64_t>::max() / 2 / esize / blocks) {
    return fail(ncclInvalidArgument, "fakenccl: {}: count {} is too large", api, a.count);
  }
  const bool is_root = comm->rank == a.root;
  if (a.count > 0 && needs_send(a.kind, is_root) && a.sendbuff == nullptr) {
    return fail(ncclInvalidArgument, "fakenccl: {}: sendbuff is NULL", api);
  }
  if (a.count > 0 && needs_recv(a.kind, is_root) && a.recvbuff == nullptr) {
    return fail(ncclInvalidArgument, "fakenccl: {}: recvbuff is NULL", api);
  }
  return ncclSuccess;
}

std::unique_ptr<Op> make_coll_op(ncclComm* comm, const CollArgs& args) {
  return std::make_unique<CollOp>(comm, args);
}

const char* kind_api_name(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce: return "ncclAllReduce";
    case OpKind::kBroadcast: return "ncclBroadcast";
    case OpKind::kReduce: return "ncclReduce";
    case OpKind::kAllGather: return "ncclAllGather";
    case OpKind::kReduceScatter: return "ncclReduceScatter";
    case OpKind::kAlltoAll: return "ncclAlltoAll";
    case OpKind::kGather: return "ncclGather";
    case OpKind::kScatter: return "ncclScatter";
    case OpKind::kSplit: return "ncclCommSplit";
    case OpKind::kSend: return "ncclSend";
    case OpKind::kRecv: return "ncclRecv";
    case OpKind::kWindow: return "ncclCommWindowRegister/Deregister";
  }
  return "ncclUnknown";
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j > i + 1 ? fmt::format("{}-{}", ranks[i], ranks[j])
           : j == i  ? fmt::format("{}", ranks[i])
                     : fmt::format("{},{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace fakenccl
