// Members inside ncclCommInitRank / ncclCommSplit (which return only when every rank joined):
// the ranks that never joined have no entry for the communicator, usually no ledger at all (the
// shim makes one at a process's first NCCL call): they never reached init_process_group or
// new_group, or their node's ledgers were not collected. When every rank joined and init still
// does not return, the ranks cannot connect: the network.
#include "report/analysis/classify.h"

namespace hangshim::report {

std::optional<Finding> classify_init(const Analysis& a, int comm) {
  const CommGroup& g = a.groups[static_cast<size_t>(comm)];
  const CommSummary& c = a.comms[static_cast<size_t>(comm)];
  std::vector<size_t> joining;
  std::string op;
  for (const auto& m : g.members) {
    const RankSituation& s = a.situations[m.view];
    if (s.state == RankState::InCommInit && s.current && s.current->comm == comm) {
      joining.push_back(m.view);
      op = s.current->op;
    }
  }
  if (joining.empty()) return std::nullopt;
  Finding f;
  f.kind = Kind::InitHang;
  f.comm = comm;
  f.op = op;
  f.waiting = ranks_of(a, joining);
  f.never_issued = true;
  if (!c.absent.empty()) {
    f.culprits = c.global_ranks ? c.absent : std::vector<int>{};
    f.attribute = "communicator ranks without a ledger";
    f.values.push_back({"never joined", c.absent});
    f.reason = "no ledger holds these ranks of the communicator: they never called NCCL, or were not collected";
  } else {
    f.reason = "every rank joined and the communicator still is not set up: the ranks cannot connect";
  }
  return f;
}

}  // namespace hangshim::report
