// What reading a directory of ledgers costs per ledger, step by step, with the reader's own code:
// the floor under `hangshim report` over many ranks (docs/benchmarks.md, "hangshim report").
//   1. open, fstat, close: what any reader pays per file;
//   2. plus one pread of the whole file: a single plain copy (not torn-free: a reference only);
//   3. plus snapshot_ledger_into: the reader's copy (snapshot.h) of a ledger nobody writes any
//      more (the fixture's writers are gone): one read;
//   4. the same copy of a ledger still being written, as the writer's lock makes it look (held
//      through a second descriptor, whose open and close are included): the torn-free passes,
//      the ring read three times, its stamps before and after its contents;
//   5. LedgerReader::read: the trust checks, the copy of 3 and the parse into a Ledger.
// CPU time of the process (user + system), the least of 3 passes over all the ledgers.
//   ledger_read_bench DIR
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ledger/reader.h"
#include "ledger/snapshot.h"
#include "ledger/writer_lock.h"

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The least over 3 passes of `step` over every file, in microseconds per file.
double per_file_us(const std::vector<std::string>& files, const std::function<bool(const std::string&)>& step) {
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    double start = cpu_seconds();
    for (const auto& f : files) {
      if (!step(f)) return -1;
    }
    best = std::min(best, cpu_seconds() - start);
  }
  return best / static_cast<double>(files.size()) * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ledger_read_bench DIR (a directory of ledgers, e.g. from report_fixture job)\n");
    return 2;
  }
  std::string dir = argv[1];
  std::vector<std::string> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 7 && name.ends_with(".ledger")) files.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  if (files.empty()) {
    std::fprintf(stderr, "ledger_read_bench: no *.ledger files in %s\n", dir.c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::vector<unsigned char> buffer;
  hangshim::ledger::SnapshotScratch scratch;
  auto with_file = [](const std::string& path, const std::function<bool(int, const struct stat&)>& body) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && body(fd, st);
    ::close(fd);
    return ok;
  };
  double open_us = per_file_us(files, [&](const std::string& f) { return with_file(f, [](int, const struct stat&) { return true; }); });
  double plain_us = per_file_us(files, [&](const std::string& f) {
    return with_file(f, [&](int fd, const struct stat& st) {
      buffer.resize(static_cast<size_t>(st.st_size));
      return ::pread(fd, buffer.data(), buffer.size(), 0) == st.st_size;
    });
  });
  double snapshot_us = per_file_us(files, [&](const std::string& f) {
    return with_file(f, [&](int fd, const struct stat& st) {
      return hangshim::ledger::snapshot_ledger_into(fd, static_cast<uint64_t>(st.st_size), f, buffer, scratch).ok();
    });
  });
  double live_us = per_file_us(files, [&](const std::string& f) {
    int holder = ::open(f.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (holder < 0 || !hangshim::ledger::take_writer_lock(holder)) {
      if (holder >= 0) ::close(holder);
      return false;
    }
    bool ok = with_file(f, [&](int fd, const struct stat& st) {
      return hangshim::ledger::snapshot_ledger_into(fd, static_cast<uint64_t>(st.st_size), f, buffer, scratch).ok();
    });
    ::close(holder);
    return ok;
  });
  hangshim::ledger::LedgerReader reader;
  double read_us = per_file_us(files, [&](const std::string& f) { return reader.read(f).ok(); });
  if (open_us < 0 || plain_us < 0 || snapshot_us < 0 || live_us < 0 || read_us < 0) {
    std::fprintf(stderr, "ledger_read_bench: a ledger in %s could not be read\n", dir.c_str());
    return 1;
  }
  struct stat st {};
  ::stat(files.front().c_str(), &st);
  fmt::print("| per ledger ({} ledgers of {} bytes), CPU | µs |\n|---|---:|\n", files.size(), st.st_size);
  fmt::print("| open, fstat, close | {:.1f} |\n", open_us);
  fmt::print("| + one pread of the whole file (a plain copy) | {:.1f} |\n", plain_us);
  fmt::print("| + the reader's copy of a ledger nobody writes (snapshot_ledger_into) | {:.1f} |\n", snapshot_us);
  fmt::print("| the torn-free copy of a ledger being written (its writer's lock held; one more open, close) | {:.1f} |\n", live_us);
  fmt::print("| LedgerReader::read (trust checks, that copy, parse) | {:.1f} |\n", read_us);
  return 0;
}
