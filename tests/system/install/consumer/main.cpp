// pyframes_consumer PYTHON SCRIPT [ARGS...]: starts a Python child, waits until it says "ready"
// on its stdout, reads the child's stacks through the installed pyframes library and prints
// them, innermost frame first, one line per frame:
//     frame<TAB>FUNCTION<TAB>FILE<TAB>LINE
// then closes the child's stdin (its cue to exit) and waits for it. Exit status: 0 read; 1 the
// child could not be started or read (one line on stderr); 2 usage.
#include <pyframes/pyframes.h>
#include <pyframes/render.h>

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Child {
  pid_t pid = -1;
  int to_child = -1;           // its stdin
  FILE* from_child = nullptr;  // its stdout
};

bool start(char** argv, Child& child) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return false;
  child.pid = ::fork();
  if (child.pid < 0) return false;
  if (child.pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    ::execvp(argv[0], argv);
    std::fprintf(stderr, "pyframes_consumer: cannot run %s\n", argv[0]);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  child.to_child = in[1];
  child.from_child = ::fdopen(out[0], "r");
  return child.from_child != nullptr;
}

int finish(Child& child, int status) {
  ::close(child.to_child);
  if (child.from_child != nullptr) std::fclose(child.from_child);
  int wstatus = 0;
  ::waitpid(child.pid, &wstatus, 0);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pyframes_consumer PYTHON SCRIPT [ARGS...]\n");
    return 2;
  }
  Child child;
  if (!start(argv + 1, child)) {
    std::fprintf(stderr, "pyframes_consumer: cannot start %s\n", argv[1]);
    return 1;
  }
  char line[256];
  if (std::fgets(line, sizeof line, child.from_child) == nullptr || std::string(line) != "ready\n") {
    std::fprintf(stderr, "pyframes_consumer: %s did not say ready\n", argv[2]);
    return finish(child, 1);
  }
  auto process = pyframes::read_process(child.pid);
  if (!process) {
    fmt::print(stderr, "{}\n", pyframes::format_error_line("pyframes_consumer", fmt::format("process {}", child.pid),
                                                           process.error()));
    return finish(child, 1);
  }
  fmt::print("python {} pid {}\n", process->python_version, process->pid);
  for (const pyframes::Thread& thread : process->threads) {
    fmt::print("thread {}\n", thread.native_id);
    for (const pyframes::Frame& frame : thread.frames) {
      fmt::print("frame\t{}\t{}\t{}\n", frame.function, frame.file, frame.line);
    }
  }
  std::fflush(stdout);
  return finish(child, 0);
}
