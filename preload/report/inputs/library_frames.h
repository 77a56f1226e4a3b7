// Which frames are library code and which line is "yours": the report names the first frame
// outside the libraries (torch, deepspeed, site-packages, the Python standard library, and
// whatever HANGSHIM_LIBRARY_PATHS / --library add), the line a user can act on.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hangshim::report {

class LibraryPatterns {
 public:
  // The shim's defaults (torch/, deepspeed/, site-packages/, dist-packages/), or the
  // colon-separated parts of `env` (HANGSHIM_LIBRARY_PATHS, as the shim reads it) when set;
  // the standard library and frozen modules are always library code.
  static LibraryPatterns from_env(const char* env);

  void add(std::string part);  // --library PATTERN: a substring of the file path
  bool is_library(std::string_view file) const;
  const std::vector<std::string>& parts() const { return parts_; }

 private:
  std::vector<std::string> parts_;
};

}  // namespace hangshim::report
