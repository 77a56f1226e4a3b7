#include "cli/subcommands.h"

namespace hangshim::cli {

int cmd_ledger(std::span<char*> args);  // cmd_ledger.cpp
int cmd_report(std::span<char*> args);  // cmd_report.cpp
int cmd_export(std::span<char*> args);  // cmd_export.cpp
int cmd_run(std::span<char*> args);     // cmd_run.cpp
int cmd_watch(std::span<char*> args);   // cmd_watch.cpp

namespace {
constexpr Subcommand kSubcommands[] = {
    {"ledger", "print one process's ledger (the raw record): hangshim ledger FILE [--json]", cmd_ledger},
    {"report", "which rank, which line, which iteration, why: hangshim report [DIR|FILE|EXPORT ...]", cmd_report},
    {"export", "this node's ledgers and live stacks as one JSON file: hangshim export [-o FILE]", cmd_export},
    {"run", "run a command with libhangshim.so preloaded: hangshim run -- torchrun ... train.py", cmd_run},
    {"watch", "live table of the ranks' collectives; the report when progress stops: hangshim watch [DIR]", cmd_watch},
};
}  // namespace

std::span<const Subcommand> subcommands() { return kSubcommands; }

}  // namespace hangshim::cli
