// Which CPython a module is: Py_Version (3.11+, the exact PY_VERSION_HEX), else the file name
// (libpython3.9.so, python3.11), else the PY_VERSION string in .rodata (gives the micro version
// too; the linker may have merged it into the tail of a longer string such as an install path).
#pragma once

#include <optional>
#include <string>

#include "elf/elf_file.h"
#include "pyframes/target.h"

namespace pyframes {

// major.minor from a file name: "libpython3.11.so.1.0", "libpython3.6m.so", "python3.12".
std::optional<PyVersion> version_from_filename(const std::string& path);

PyVersion version_from_hex(uint32_t hex);

// The PY_VERSION string in .rodata matching `hint`'s major.minor (any 3.x when hint is empty).
std::optional<PyVersion> version_from_rodata(const ElfFile& elf, const std::optional<PyVersion>& hint);

}  // namespace pyframes
