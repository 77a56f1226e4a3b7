// The shim's only output of its own: one-line warnings on stderr, each distinct one once per
// process ("hangshim: ..."), written with a single write(2) so lines of ranks do not mix.
#pragma once

#include <string>

namespace hangshim::shim {

void warn_once(const std::string& message) noexcept;
// Always printed (the stall report): one line, one write.
void print_line(const std::string& message) noexcept;

}  // namespace hangshim::shim
