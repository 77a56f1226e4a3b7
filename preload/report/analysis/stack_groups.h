// Live stacks merged across ranks with pyframes' whole-job merge (pyframes/merge.h, a prefix
// tree in the spirit of STAT): Diagnosis::processes holds the stacks of the shown ranks, each
// named by its ledger's rank; every distinct main-thread stack becomes a StackGroup with its
// ranks (the JSON lists those; the text renders the merged tree).
#pragma once

#include <set>

#include "report/inputs/inputs.h"
#include "report/analysis/model.h"

namespace hangshim::report {

// Fills d.processes and d.stack_groups from the stacks of the ranks in `ranks`.
void group_stacks(const Inputs& inputs, const std::set<int>& ranks, Diagnosis& d);

}  // namespace hangshim::report
