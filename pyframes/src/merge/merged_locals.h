// Locals of a merged frame: for each variable, its distinct values and who holds each. The
// stacks were merged by place (function, file, line), so the variables are where ranks at the
// same line still differ: the loop counter of the rank that is one iteration behind.
#pragma once

#include <vector>

#include "pyframes/merge.h"

namespace pyframes {

class MergedLocalsBuilder {
 public:
  MergedLocalsBuilder(const std::vector<Process>& processes, const std::vector<MergeMember>& members)
      : processes_(processes), members_(members) {}

  // The frame `depth` frames below the outermost, as `members` (who all share it) have it.
  MergedFrame merged_frame(const Frame& representative, const std::vector<uint32_t>& members, size_t depth) const;

 private:
  const Frame& frame_of(uint32_t member, size_t depth) const;

  const std::vector<Process>& processes_;
  const std::vector<MergeMember>& members_;
};

}  // namespace pyframes
