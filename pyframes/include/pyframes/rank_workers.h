// Ranks and their workers. A process started by a rank (a DataLoader worker, a multiprocessing
// child, a forkserver) inherits the rank's environment, RANK included, so RANK alone counts it as
// one more copy of the rank. The rule here tells them apart: a process whose ancestors, up from
// its parent, include processes with the same RANK, LOCAL_RANK and executable is a worker of the
// outermost of them (the rank itself). A launcher (torchrun's agent: no RANK) and a shell wrapper
// (another executable) end the walk.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pyframes/model.h"

namespace pyframes {

// What the rule compares, for one process.
struct RankIdentity {
  int64_t ppid = 0;
  std::string rank;  // empty: not a rank (the walk stops there)
  std::string local_rank;
  std::string executable;
};

// The identity of a process by pid; nullopt when unknown (gone, not read).
using RankIdentityLookup = std::function<std::optional<RankIdentity>(int64_t pid)>;

// The pid of the rank process that the process `self` describes works for; 0 when it is a rank
// itself (or has no RANK). Walks at most 64 ancestors.
int64_t rank_owner(const RankIdentity& self, const RankIdentityLookup& lookup);

// For live processes: the lookup reads /proc (parent, environment, executable).
int64_t live_rank_owner(const RankIdentity& self);

// Fills Process::worker_of, where still 0, from the other processes in `processes` (their pid,
// ppid, rank and executable): cores and saved documents, where /proc is not the target's.
void mark_rank_workers(std::vector<Process>& processes);

}  // namespace pyframes
