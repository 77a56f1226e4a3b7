// pyframes' process JSON (render_json's {"processes": [...]}) read back into the model, for the
// live stacks an export carries from another node.
#pragma once

#include "pyframes/model.h"
#include "pyframes/result.h"
#include "report/json_value.h"

namespace hangshim::report {

// The first process of a render_json document; an Error when the shape is wrong.
pyframes::Result<pyframes::Process> process_from_json(const JsonValue& document, const std::string& source);

}  // namespace hangshim::report
