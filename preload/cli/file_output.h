// Files the hangshim command writes for people to pass around (`export -o`, `report --html`).
#pragma once

#include <string>
#include <string_view>

namespace hangshim::cli {

// Writes `text` to `path` through a temporary file in the same directory (created 0600) and a
// rename, so a reader never sees half a file. On failure prints one line naming the file, why,
// and the option (`option`, e.g. "-o") that picks another place; false.
bool write_file_atomically(const std::string& path, const std::string& text, std::string_view option);

}  // namespace hangshim::cli
