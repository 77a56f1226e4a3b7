// SourceLoops: which loops of a Python function enclose a line, read from a real file written
// here (the loop-line evidence of user_chain.cpp and classify_divergence.cpp).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "report/analysis/source_loops.h"

using hangshim::report::SourceLoops;

namespace {

struct PythonFile {
  std::string path;
  explicit PythonFile(const char* text) {
    char name[] = "/tmp/hangshim-loops-XXXXXX.py";
    int fd = mkstemps(name, 3);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~PythonFile() { std::remove(path.c_str()); }
};

// Lines:                    1
constexpr const char* kTrain = "import x\n"
                               "\n"                                              // 2
                               "def train(loader):\n"                            // 3
                               "    for epoch in range(2):\n"                     // 4
                               "        for step, batch in enumerate(loader):\n"  // 5
                               "            sync(batch)\n"                        // 6
                               "            if rank == 0 and step % 25 == 0:\n"   // 7
                               "                # a comment at a lower indent\n"  // 8
                               "                log(batch)\n"                     // 9
                               "        epoch_loss()\n"                           // 10
                               "    evaluate()\n"                                 // 11
                               "\n"                                              // 12
                               "def main():\n"                                   // 13
                               "    train(None)\n"                                // 14
                               "    while True:\n"                                // 15
                               "\tpoll()\n";                                     // 16 (a tab: column 8)

}  // namespace

TEST_CASE("source loops: the loops around a line, innermost first, within its function") {
  PythonFile f(kTrain);
  SourceLoops loops;
  CHECK(loops.headers(f.path, 6) == std::vector<int>{5, 4});
  CHECK(loops.headers(f.path, 9) == std::vector<int>{5, 4});
  CHECK(loops.headers(f.path, 10) == std::vector<int>{4});
  CHECK(loops.headers(f.path, 11).empty());
  CHECK(loops.headers(f.path, 14).empty());  // main's call of train: runs once
  CHECK(loops.headers(f.path, 16) == std::vector<int>{15});
  CHECK(loops.in_loop(f.path, 6));
  CHECK_FALSE(loops.in_loop(f.path, 3));
}

TEST_CASE("source loops: the same loop body tells an extra collective from one more iteration") {
  PythonFile f(kTrain);
  SourceLoops loops;
  CHECK(loops.in_same_loop(f.path, 6, 9));        // a guarded collective inside the step loop
  CHECK_FALSE(loops.in_same_loop(f.path, 6, 10));  // after the step loop: the epoch's collective
  CHECK_FALSE(loops.in_same_loop(f.path, 6, 11));  // after both
  CHECK(loops.in_same_loop(f.path, 6, 5));         // the loop's header: fetching the next batch
}

TEST_CASE("source loops: a file that cannot be read, or a line past its end, is unknown") {
  SourceLoops loops;
  bool readable = true;
  CHECK(loops.headers("/nonexistent/train.py", 6, &readable).empty());
  CHECK_FALSE(readable);
  PythonFile f(kTrain);
  CHECK(loops.headers(f.path, 400, &readable).empty());
  CHECK_FALSE(readable);
  loops.headers(f.path, 6, &readable);
  CHECK(readable);
}
