#include "report/inputs/library_frames.h"

#include <algorithm>

namespace hangshim::report {

namespace {
// Between a user's line and the NCCL call (or the place a process waits) there are only
// frameworks and the interpreter's own modules: threading.py, queue.py, <frozen importlib>.
constexpr const char* kAlwaysLibrary[] = {"/lib/python2", "/lib/python3", "<frozen "};
constexpr const char* kShimDefaults[] = {"/torch/", "/deepspeed/", "/site-packages/", "/dist-packages/"};
}  // namespace

LibraryPatterns LibraryPatterns::from_env(const char* env) {
  LibraryPatterns patterns;
  if (env == nullptr) {
    for (const char* part : kShimDefaults) patterns.add(part);
  } else {
    std::string_view rest = env;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view part = rest.substr(0, colon);
      if (!part.empty()) patterns.add(std::string(part));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const char* part : kAlwaysLibrary) patterns.add(part);
  return patterns;
}

void LibraryPatterns::add(std::string part) {
  if (part.empty() || std::find(parts_.begin(), parts_.end(), part) != parts_.end()) return;
  parts_.push_back(std::move(part));
}

bool LibraryPatterns::is_library(std::string_view file) const {
  for (const auto& part : parts_) {
    if (file.find(part) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace hangshim::report
