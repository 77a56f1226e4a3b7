#include "cli/subcommands.h"

namespace hangshim::cli {

int cmd_ledger(std::span<char*> args);  // cmd_ledger.cpp
int cmd_report(std::span<char*> args);  // cmd_report.cpp

namespace {
constexpr Subcommand kSubcommands[] = {
    {"ledger", "print one process's ledger (the raw record): hangshim ledger FILE [--json]", cmd_ledger},
    {"report", "which rank, which line, which iteration, why: hangshim report [DIR|FILE|EXPORT ...]", cmd_report},
};
}  // namespace

std::span<const Subcommand> subcommands() { return kSubcommands; }

}  // namespace hangshim::cli
