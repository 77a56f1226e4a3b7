// Stragglers: ranks that arrive last at a communicator's collectives most of the time
// (stragglers.cpp says how they are told apart from noise, and how clocks are handled).
#pragma once

#include <vector>

#include "report/analysis/analysis.h"
#include "report/analysis/model.h"

namespace hangshim::report {

// The worst first. Where each one spends its time (Straggler::spends_at) is left to the caller
// that can read live stacks.
std::vector<Straggler> find_stragglers(const Analysis& a);

}  // namespace hangshim::report
