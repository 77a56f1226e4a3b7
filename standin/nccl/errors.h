// ncclGetLastError's text and NCCL_DEBUG-style logging for the stand-in.
#pragma once

#include <nccl.h>

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace fakenccl {

// Stores the message ncclGetLastError returns (process-wide, like NCCL) and prints it as an
// "NCCL WARN" line when NCCL_DEBUG is WARN or INFO.
void set_last_error(std::string_view message);
const char* last_error();
// Prints an "NCCL INFO" line when NCCL_DEBUG=INFO.
void debug_info(std::string_view message);
// ncclGetErrorString's text (called internally without going through the exported symbol, which
// an LD_PRELOADed shim may wrap).
const char* error_string(ncclResult_t code);

template <typename... Args>
ncclResult_t fail(ncclResult_t code, fmt::format_string<Args...> format, Args&&... args) {
  set_last_error(fmt::format(format, std::forward<Args>(args)...));
  return code;
}

}  // namespace fakenccl
