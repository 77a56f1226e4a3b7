// Arguments and local variables of one frame, as bounded reprs (--locals).
#pragma once

#include <vector>

#include "objects/object_reader.h"
#include "pyframes/model.h"
#include "walk/frame_chain.h"

namespace pyframes {

std::vector<Local> read_locals(const ObjectReader& reader, const RawFrame& frame);

}  // namespace pyframes
