// hangshim: reads the ledgers that libhangshim.so keeps for every rank of an NCCL job.
#include <fmt/format.h>

#include <cstring>
#include <span>

#include "cli/huge_pages.h"
#include "cli/malloc_reuse.h"
#include "cli/subcommands.h"

namespace {

void print_help() {
  fmt::print(
      "usage: hangshim COMMAND [ARGS...]\n"
      "\n"
      "Run the job with `hangshim run -- CMD` (LD_PRELOAD=libhangshim.so); every process that calls NCCL keeps a ledger\n"
      "in $HANGSHIM_DIR (default /dev/shm/hangshim-$UID). Commands:\n\n");
  for (const auto& sub : hangshim::cli::subcommands()) fmt::print("  {:<8} {}\n", sub.name, sub.summary);
  fmt::print("\n`hangshim COMMAND --help` describes a command. Options: --help, --version.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_help();
    return 2;
  }
  std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help();
    return 0;
  }
  if (first == "--version") {
    fmt::print("hangshim {}\n", HANGSHIM_VERSION);
    return 0;
  }
  // The commands that may read tens of thousands of ledgers (cli/huge_pages.h).
  if (first == "report" || first == "watch") {
    hangshim::cli::run_again_with_huge_pages(argv);
    hangshim::cli::reuse_freed_memory();  // cli/malloc_reuse.h
  }
  for (const auto& sub : hangshim::cli::subcommands()) {
    if (sub.name == first) return sub.main(std::span<char*>(argv + 2, static_cast<size_t>(argc - 2)));
  }
  fmt::print(stderr, "hangshim: unknown command '{}' (run hangshim --help for the list)\n", first);
  return 2;
}
