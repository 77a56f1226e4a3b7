#include "pyframes/rank_workers.h"

#include <tuple>
#include <unordered_map>

#include "process/proc_info.h"

namespace pyframes {

namespace {

constexpr int kMaxAncestors = 64;

bool same_rank(const RankIdentity& a, const RankIdentity& b) {
  return !a.rank.empty() && a.rank == b.rank && a.local_rank == b.local_rank && a.executable == b.executable;
}

}  // namespace

int64_t rank_owner(const RankIdentity& self, const RankIdentityLookup& lookup) {
  if (self.rank.empty()) return 0;
  int64_t owner = 0;
  int64_t parent = self.ppid;
  for (int depth = 0; depth < kMaxAncestors && parent > 1; ++depth) {
    auto ancestor = lookup(parent);
    if (!ancestor || !same_rank(self, *ancestor)) break;
    owner = parent;
    if (ancestor->ppid == parent) break;  // a table that loops
    parent = ancestor->ppid;
  }
  return owner;
}

int64_t live_rank_owner(const RankIdentity& self) {
  return rank_owner(self, [](int64_t pid) -> std::optional<RankIdentity> {
    auto ppid = proc_parent(pid);
    if (!ppid) return std::nullopt;
    RankIdentity identity;
    identity.ppid = *ppid;
    const auto process_id = static_cast<pid_t>(pid);
    std::tie(identity.rank, identity.local_rank) = proc_rank_and_local_rank(process_id);
    identity.executable = proc_executable(process_id);
    return identity;
  });
}

void mark_rank_workers(std::vector<Process>& processes) {
  std::unordered_map<int64_t, RankIdentity> known;
  for (const Process& process : processes) {
    if (process.pid > 0) known.emplace(process.pid, RankIdentity{process.ppid, process.rank, process.local_rank, process.executable});
  }
  auto lookup = [&known](int64_t pid) -> std::optional<RankIdentity> {
    auto found = known.find(pid);
    if (found == known.end()) return std::nullopt;
    return found->second;
  };
  for (Process& process : processes) {
    if (process.worker_of != 0 || process.ppid == 0) continue;
    process.worker_of = rank_owner(RankIdentity{process.ppid, process.rank, process.local_rank, process.executable}, lookup);
  }
}

}  // namespace pyframes
