// The `hangshim` subcommands. Adding one: a new file cmd_NAME.cpp defining
// `int hangshim::cli::cmd_NAME(std::span<char*> args)`, and its line in subcommands.cpp.
#pragma once

#include <span>
#include <string_view>

namespace hangshim::cli {

// Arguments after the subcommand name. Returns the process exit code:
// 0 ok, 1 target problem (unreadable or corrupt input), 2 usage.
using SubcommandMain = int (*)(std::span<char*> args);

struct Subcommand {
  std::string_view name;
  std::string_view summary;  // one line for `hangshim --help`
  SubcommandMain main;
};

std::span<const Subcommand> subcommands();

}  // namespace hangshim::cli
