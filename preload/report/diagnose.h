// The report's entry point: inputs in, diagnosis out (model.h). No output is produced here.
#pragma once

#include "report/analysis.h"
#include "report/inputs.h"
#include "report/model.h"

namespace hangshim::report {

Diagnosis diagnose(const Inputs& inputs, const DiagnoseOptions& options);

}  // namespace hangshim::report
