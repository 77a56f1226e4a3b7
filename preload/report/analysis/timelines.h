// Each shown communicator's newest collectives, rank by rank, for the HTML report's timeline:
// which number each member issued, completed, waits in or never issued, and whose op, count or
// dtype differs from the others'. Members whose rows read the same are merged into one row.
#pragma once

#include <vector>

#include "report/analysis/analysis.h"
#include "report/analysis/model.h"

namespace hangshim::report {

// At most `columns` collective numbers per communicator, the newest any member issued.
std::vector<Timeline> build_timelines(const Analysis& a, const std::vector<CommSummary>& comms, size_t columns = 12);

}  // namespace hangshim::report
