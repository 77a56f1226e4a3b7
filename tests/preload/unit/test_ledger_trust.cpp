// Ledger readers refuse files that someone other than the job's user could have written:
// group/world-writable files, files in group/world-writable (non-sticky) directories, files
// and directories owned by another user. The rules on synthetic stat results, then the real
// thing on files (chown needs root; skipped with a message otherwise).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/reader.h"
#include "ledger/trust.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

namespace {

struct stat make_stat(uid_t uid, mode_t mode) {
  struct stat st {};
  st.st_uid = uid;
  st.st_mode = mode;
  return st;
}

std::string refusal(const struct stat& file, const struct stat& dir, uint32_t reader) {
  auto r = check_ledger_trust("/d/x.ledger", file, dir, reader);
  return r ? std::string() : r.error().message;
}

uid_t nobody() {
  const passwd* pw = getpwnam("nobody");
  return pw != nullptr ? pw->pw_uid : 65534;
}

}  // namespace

TEST_CASE("ledger trust: the rules on owners and modes") {
  const mode_t file = S_IFREG | 0600, dir = S_IFDIR | 0700;
  // Our own ledger in our own directory, and root's in ours: fine.
  CHECK(refusal(make_stat(1000, file), make_stat(1000, dir), 1000).empty());
  CHECK(refusal(make_stat(0, file), make_stat(1000, dir), 1000).empty());
  // Root reads a user's ledgers in that user's directory.
  CHECK(refusal(make_stat(1000, file), make_stat(1000, dir), 0).empty());
  // Writable by others: refused, whoever reads.
  CHECK(refusal(make_stat(1000, S_IFREG | 0666), make_stat(1000, dir), 1000).find("writable by other users") !=
        std::string::npos);
  CHECK(refusal(make_stat(1000, S_IFREG | 0620), make_stat(1000, dir), 0).find("mode 0620") != std::string::npos);
  // A directory others can write to, unless sticky.
  CHECK(refusal(make_stat(1000, file), make_stat(1000, S_IFDIR | 0777), 1000).find("other users can write") !=
        std::string::npos);
  CHECK(refusal(make_stat(1000, file), make_stat(0, S_IFDIR | 01777), 1000).empty());
  // Someone else's file: planted, even in a sticky /tmp and even for root.
  CHECK(refusal(make_stat(1001, file), make_stat(1000, dir), 1000).find("belongs to uid 1001") != std::string::npos);
  CHECK(refusal(make_stat(1001, file), make_stat(0, S_IFDIR | 01777), 0).find("planted") != std::string::npos);
  // Someone else's directory.
  CHECK(refusal(make_stat(1000, file), make_stat(1001, dir), 1000).find("belongs to uid 1001") != std::string::npos);
}

TEST_CASE("ledger trust: read_ledger_file refuses what others could have written, and says why") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("a.ledger"));
  REQUIRE(w);
  std::string path = w->path();
  REQUIRE(read_ledger_file(path).ok());

  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  auto open_file = read_ledger_file(path);
  REQUIRE_FALSE(open_file.ok());
  CHECK(open_file.error().kind == pyframes::ErrorKind::PermissionDenied);
  CHECK(open_file.error().message.find(path) != std::string::npos);
  CHECK(open_file.error().hint.find("chmod 600") != std::string::npos);
  REQUIRE(::chmod(path.c_str(), 0600) == 0);

  REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
  auto open_dir = read_ledger_file(path);
  REQUIRE_FALSE(open_dir.ok());
  CHECK(open_dir.error().message.find("other users can write") != std::string::npos);
  REQUIRE(::chmod(dir.path().c_str(), 0700) == 0);

  if (::geteuid() != 0) {
    MESSAGE("not root: the foreign-owner cases need chown; skipped");
    return;
  }
  // A ledger planted by another user in a sticky, world-writable directory (like /tmp).
  REQUIRE(::chmod(dir.path().c_str(), 01777) == 0);
  REQUIRE(::chown(path.c_str(), nobody(), static_cast<gid_t>(-1)) == 0);
  auto planted = read_ledger_file(path);
  REQUIRE_FALSE(planted.ok());
  CHECK(planted.error().message.find("another user may have planted it") != std::string::npos);
}

TEST_CASE("ledger trust: links, FIFOs and directories under a ledger's name are refused without blocking") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("real.ledger"));
  REQUIRE(w);
  std::string link = dir.file("link.ledger");
  REQUIRE(::symlink(w->path().c_str(), link.c_str()) == 0);
  auto linked = read_ledger_file(link);
  REQUIRE_FALSE(linked.ok());
  CHECK(linked.error().hint.find("never symbolic links") != std::string::npos);

  std::string fifo = dir.file("fifo.ledger");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto piped = read_ledger_file(fifo);  // would block forever without O_NONBLOCK
  REQUIRE_FALSE(piped.ok());
  CHECK(piped.error().message.find("not a regular file") != std::string::npos);

  auto missing = read_ledger_file(dir.file("nothing-here.ledger"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == pyframes::ErrorKind::NotFound);
}
