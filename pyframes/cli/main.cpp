// pyframes: print the Python stacks of live processes. Everything but the real terminal, the
// real reader and the real streams lives in pyframes/src/command (tested there).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "command/app.h"
#include "pyframes/live_reader.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  pyframes::cli::Terminal terminal;
  terminal.stdout_is_tty = ::isatty(STDOUT_FILENO) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  terminal.no_color = no_color != nullptr && no_color[0] != '\0';

  pyframes::cli::Output output;
  const int status =
      pyframes::cli::run_pyframes(args, terminal, pyframes::read_live_process, HANGSHIM_VERSION, output);
  std::fwrite(output.out.data(), 1, output.out.size(), stdout);
  std::fflush(stdout);
  std::fwrite(output.err.data(), 1, output.err.size(), stderr);
  return status;
}
