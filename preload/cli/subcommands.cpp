#include "cli/subcommands.h"

namespace hangshim::cli {

int cmd_ledger(std::span<char*> args);  // cmd_ledger.cpp

namespace {
constexpr Subcommand kSubcommands[] = {
    {"ledger", "print one process's ledger (the raw record): hangshim ledger FILE [--json]", cmd_ledger},
};
}  // namespace

std::span<const Subcommand> subcommands() { return kSubcommands; }

}  // namespace hangshim::cli
