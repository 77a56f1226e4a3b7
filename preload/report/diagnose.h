// The report's diagnosis stage (pipeline.h runs every stage in order): inputs already loaded and
// settled in (inputs/), the analysis (analysis/), diagnosis out (analysis/model.h) with its hints
// worded (wording/phrases.h). No output is produced here.
#pragma once

#include "report/analysis/analysis.h"
#include "report/inputs/inputs.h"
#include "report/analysis/model.h"

namespace hangshim::report {

Diagnosis diagnose(const Inputs& inputs, const DiagnoseOptions& options);

}  // namespace hangshim::report
