// Live stacks merged across ranks: ranks whose threads show the same frames (same functions,
// files and lines, thread by thread) are one group with one representative process.
// (A prefix-tree merge that also folds stacks differing only in their innermost frames is
// pyframes' merged view, being built on the `job` branch; this report only needs equality.)
#pragma once

#include <set>

#include "report/inputs.h"
#include "report/model.h"

namespace hangshim::report {

// Fills d.stack_groups and d.processes from the stacks of the ranks in `ranks`.
void group_stacks(const Inputs& inputs, const std::set<int>& ranks, Diagnosis& d);

}  // namespace hangshim::report
