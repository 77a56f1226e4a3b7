// Where ledgers live: the directory checks, the file names, and the removal of ledgers of
// long-dead processes (and only those).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "ledger/writer.h"
#include "ledger_test_util.h"
#include "ledger/names.h"
#include "ledger/directory.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

TEST_CASE("ledger files: names carry rank, host and pid, and parse back") {
  std::string name = ledger_file_name("node-7.cluster", 4321, 3);
  CHECK(name == "hangshim-r00003-node_7.cluster-4321.ledger");
  ParsedLedgerName parsed;
  REQUIRE(parse_ledger_file_name(name, parsed));
  CHECK(parsed.rank == 3);
  CHECK(parsed.host == "node_7.cluster");
  CHECK(parsed.pid == 4321);
  REQUIRE(parse_ledger_file_name(ledger_file_name("h", 9, -1), parsed));
  CHECK(parsed.rank == -1);
  CHECK(stacks_file_name(name) == "hangshim-r00003-node_7.cluster-4321.stacks.txt");
  TempDir dir;
  for (const char* file : {"hangshim-r00002-b-5.ledger", "hangshim-r00002-a-9.ledger", "hangshim-norank-a-1.ledger",
                           "hangshim-r00010-a-1.ledger", "notes.txt", "hangshim-r00001-a-1.stacks.txt"}) {
    FILE* f = fopen(dir.file(file).c_str(), "w");
    REQUIRE(f != nullptr);
    fclose(f);
  }
  CHECK(list_ledger_files(dir.path()) == std::vector<std::string>{dir.file("hangshim-norank-a-1.ledger"),
                                                                   dir.file("hangshim-r00002-a-9.ledger"),
                                                                   dir.file("hangshim-r00002-b-5.ledger"),
                                                                   dir.file("hangshim-r00010-a-1.ledger")});
  for (const char* bad : {"hangshim-r1-h.ledger", "other.ledger", "hangshim-x00001-h-1.ledger",
                          "hangshim-r00001-h-1.txt", "hangshim-r00001-h-0.ledger", "hangshim-r00001--5.ledger"}) {
    CHECK_FALSE(parse_ledger_file_name(bad, parsed));
  }
}

TEST_CASE("ledger files: the directory is made private, and refused when others could write to it") {
  TempDir dir;
  uint32_t uid = static_cast<uint32_t>(geteuid());
  std::string fresh = dir.file("fresh");
  REQUIRE(prepare_directory(fresh, uid).ok());
  struct stat st {};
  REQUIRE(stat(fresh.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(prepare_directory(fresh, uid).ok());  // again: fine

  std::string open_dir = dir.file("open");
  REQUIRE(mkdir(open_dir.c_str(), 0700) == 0);
  REQUIRE(chmod(open_dir.c_str(), 0777) == 0);
  auto refused = prepare_directory(open_dir, uid);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("writable by other users") != std::string::npos);

  std::string link = dir.file("link");
  REQUIRE(symlink(fresh.c_str(), link.c_str()) == 0);
  CHECK_FALSE(prepare_directory(link, uid).ok());
  CHECK_FALSE(prepare_directory("relative", uid).ok());
  CHECK_FALSE(prepare_directory(dir.file("missing/parent"), uid).ok());
  CHECK_FALSE(prepare_directory(fresh, uid + 1).ok());  // not ours
}

TEST_CASE("ledger files: only long-dead processes' ledgers from this host are swept") {
  TempDir dir;
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);  // a pid that no longer runs
  auto make = [&](const std::string& host, pid_t pid, uint64_t start_ns) {
    auto id = ledger_test::test_identity();
    id.pid = pid;
    id.start_ns = start_ns;
    std::string path = dir.file(ledger_file_name(host, pid, 0));
    auto w = hangshim::ledger::Writer::create(path, hangshim::ledger::Geometry{}, id);
    REQUIRE(w.ok());
    return path;
  };
  uint64_t now = 10000ull * 1000000000ull;
  std::string old_dead = make("here", dead, now - 7200ull * 1000000000ull);
  std::string alive = make("here", getpid(), now - 7200ull * 1000000000ull);
  std::string other_host = make("there", dead, now - 7200ull * 1000000000ull);
  std::string stacks = dir.file(stacks_file_name(std::filesystem::path(old_dead).filename()));
  FILE* dump = fopen(stacks.c_str(), "w");
  REQUIRE(dump != nullptr);
  fclose(dump);
  CHECK(sweep_dead_ledgers(dir.path(), "here", now, 3600) == 1);
  CHECK_FALSE(std::filesystem::exists(old_dead));
  CHECK_FALSE(std::filesystem::exists(stacks));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(other_host));
  std::string recent = make("here", dead, now - 10ull * 1000000000ull);
  CHECK(sweep_dead_ledgers(dir.path(), "here", now, 3600) == 0);
  CHECK(std::filesystem::exists(recent));
}
