// The words for a failed communicator init (Kind::InitFailed): the verdict line, the detail
// lines and what to check for each NCCL error. Kept apart from phrases.cpp because the advice
// is per error code and grows with NCCL's.
#pragma once

#include <string>
#include <vector>

#include "report/analysis/model.h"

namespace hangshim::report {

std::string init_failed_verdict(const Diagnosis& d, const Finding& f);
std::vector<std::string> init_failed_lines(const Diagnosis& d, const Finding& f);
std::vector<std::string> init_failed_hints(const Finding& f);

}  // namespace hangshim::report
