// pyframes: print the Python stacks of live processes and core files.
#include <fmt/format.h>

#include <cstring>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) {
      fmt::print("pyframes {}\n", HANGSHIM_VERSION);
      return 0;
    }
  }
  fmt::print(stderr, "pyframes: no target reader yet (usage: pyframes PID...)\n");
  return 2;
}
