// GNU build-ids: the identity of an ELF file. A core keeps the first page of every mapped ELF
// file (coredump_filter bit 4, on by default; gcore keeps it too), which holds the program
// headers and, in practice, the build-id note. Comparing it with the build-id of a local file
// tells whether that file is the one the process had mapped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace pyframes::core {

// Reads bytes of the image as it sat in memory at [base + offset, +size); false if unavailable.
using ImageReader = std::function<bool(uint64_t offset, void* out, size_t size)>;

// The build-id of an ELF image mapped from file offset 0, read through `read` (the core's copy
// of its first page). nullopt when the headers or the note are not available.
std::optional<std::string> build_id_of_image(const ImageReader& read);

// The build-id of the ELF file open as `fd` (program-header notes, then note sections); nullopt
// when it has none or is not ELF.
std::optional<std::string> build_id_of_file(int fd);

// Lower-case hex, as `readelf -n` and `file` print it.
std::string hex(const std::string& bytes);

}  // namespace pyframes::core
