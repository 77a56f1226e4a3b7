#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "select/process_select.h"

using namespace pyframes;

TEST_CASE("process selection: descendants at any depth, children before grandchildren") {
  const std::vector<ProcessEntry> table = {{1, 0},   {10, 1},  {11, 10}, {12, 10}, {30, 11},
                                           {20, 12}, {40, 20}, {50, 1},  {60, 50}};
  CHECK(descendants_of(10, table) == std::vector<int64_t>{11, 12, 20, 30, 40});
  CHECK(descendants_of(50, table) == std::vector<int64_t>{60});
  CHECK(descendants_of(40, table).empty());
  CHECK(descendants_of(999, table).empty());
}

TEST_CASE("process selection: a table that loops does not loop the walk") {
  const std::vector<ProcessEntry> table = {{2, 3}, {3, 2}, {4, 4}};
  const auto found = descendants_of(2, table);
  CHECK(found.size() <= 2);
  CHECK(descendants_of(4, table).empty());
}

TEST_CASE("process selection: live descendants and command-line matches of real processes") {
  // This test process forks a child that forks a grandchild; both then run `sleep` with a
  // command line no other process has (sleep adds up its arguments: "0.PID" is a duration).
  const std::string marker = "0." + std::to_string(::getpid());
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::close(ready[0]);
      ::close(ready[1]);
      ::execlp("sleep", "sleep", "30", marker.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(ready[0]);
    ::close(ready[1]);
    ::execlp("sleep", "sleep", "30", marker.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(ready[1]);
  char byte;
  (void)::read(ready[0], &byte, 1);  // both have exec'd (the pipe closed on exec or exit)
  ::close(ready[0]);

  std::vector<int64_t> matches;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // only a bug reaches it
  while (matches.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    ::usleep(10000);
    auto found = processes_matching("^sleep 30 0\\." + marker.substr(2) + "$", ::getpid());
    REQUIRE(found.ok());
    matches = *found;
  }
  REQUIRE(matches.size() == 2);
  CHECK(std::find(matches.begin(), matches.end(), child) != matches.end());
  auto descendants = live_descendants(::getpid());
  REQUIRE(descendants.ok());
  CHECK(std::find(descendants->begin(), descendants->end(), child) != descendants->end());
  for (int64_t pid : matches) CHECK(std::find(descendants->begin(), descendants->end(), pid) != descendants->end());

  auto bad = processes_matching("(unclosed", ::getpid());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::Usage);
  CHECK(bad.error().message.find("(unclosed") != std::string::npos);
  auto gone = live_descendants(0x3ffffe);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().kind == ErrorKind::NotFound);

  for (int64_t pid : matches) ::kill(static_cast<pid_t>(pid), SIGKILL);
  ::waitpid(child, nullptr, 0);
}
