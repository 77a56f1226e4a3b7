// Python-level thread names: threading._active maps each thread's ident to its Thread object,
// whose _name attribute is what threading.current_thread().name returns. Read through
// sys.modules of the interpreter; best effort (a program that never imported threading, or a
// layout whose instance dicts cannot be read, simply yields no names).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "objects/object_reader.h"

namespace pyframes {

std::unordered_map<uint64_t, std::string> python_thread_names(const ObjectReader& reader, uint64_t interp);

}  // namespace pyframes
