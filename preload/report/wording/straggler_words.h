// The words for stragglers (model.h's Straggler): the verdict's clause when nothing hangs and
// the full line of the report's "stragglers" section.
#pragma once

#include <string>

#include "report/analysis/model.h"

namespace hangshim::report {

// "rank 5 is the straggler: last to arrive at 97 % of all_reduce calls at train.py:120, 38 ms
// later than the median rank"
std::string straggler_clause(const Diagnosis& d, const Straggler& s);
// The clause with the rest: on which communicator, p95, since when, how it was compared, and
// where it spends the time.
std::string straggler_text(const Diagnosis& d, const Straggler& s);

}  // namespace hangshim::report
