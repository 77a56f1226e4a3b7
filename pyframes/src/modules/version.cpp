#include <fmt/format.h>

#include "pyframes/target.h"

namespace pyframes {

std::string PyVersion::str() const {
  if (major == 0) return "unknown";
  if (micro < 0) return fmt::format("{}.{}", major, minor);
  return fmt::format("{}.{}.{}", major, minor, micro);
}

}  // namespace pyframes
