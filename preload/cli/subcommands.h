// The `hangshim` subcommands. Adding one: a new file cmd_NAME.cpp defining `int cmd_NAME(...)`
// plus one line in the table in subcommands.cpp.
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

int cmd_ledger(std::span<char*> args);
int cmd_report(std::span<char*> args);

}  // namespace hangshim::cli
