// The state sentence of the verdict ("HANG: rank 3 ran one more iteration ... while ranks 0-2
// wait in ...") and the phrases it is made of: which ranks, which call, where they wait, the
// chain of waits behind the cause. phrases.cpp builds the report's lines on top of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/analysis/model.h"

namespace hangshim::report::state_words {

// The situation of `rank` (situations are sorted by rank), nullptr when there is none.
const RankSituation* find(const Diagnosis& d, int rank);
// "world", "world/split1": a communicator's name, "?" for an unknown index.
std::string comm_name(const Diagnosis& d, int comm);
// The first shim process whose parent has no shim: the job's launcher (pyframes --children root).
int64_t shim_root(const std::vector<ShimProcess>& processes);
// "4 s", "3 min 5 s", "2 h 10 min".
std::string format_age(uint64_t ns);
// What the ledgers say the job's state is, with the chain of waits behind the cause after it.
std::string state_with_chain(const Diagnosis& d);
// "train.py:88 (iteration 3)"
std::string line_and_iteration(const Call& c);
// What each group of `ranks` is doing instead of `f`'s collective: "rank 3 is at loader.py:54
// (outside NCCL)", "rank 3 exited after all_reduce #2 at train.py:88 (iteration 2)".
std::string ranks_status(const Diagnosis& d, const Finding& f, const std::vector<int>& ranks);

}  // namespace hangshim::report::state_words
