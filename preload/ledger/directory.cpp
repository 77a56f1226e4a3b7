#include "ledger/directory.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ledger/names.h"
#include "ledger/reader.h"

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

std::string ledger_directory(const char* hangshim_dir, uint32_t uid) {
  std::string dir = hangshim_dir != nullptr && *hangshim_dir != '\0' ? std::string(hangshim_dir)
                                                                     : fmt::format("/dev/shm/hangshim-{}", uid);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

pyframes::Result<void> prepare_directory(const std::string& dir, uint32_t uid) {
  if (dir.empty() || dir[0] != '/') {
    return make_error(ErrorKind::Usage, fmt::format("HANGSHIM_DIR={} is not an absolute path", dir),
                      "set HANGSHIM_DIR to an absolute directory such as /dev/shm/hangshim-$UID");
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    int err = errno;
    return make_error(err == EACCES ? ErrorKind::PermissionDenied : ErrorKind::Io,
                      fmt::format("cannot create {}: {}", dir, std::strerror(err)),
                      "create it (mode 0700) or point HANGSHIM_DIR at a writable directory");
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return make_error(ErrorKind::Io, fmt::format("cannot inspect {}: {}", dir, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return make_error(ErrorKind::Usage, fmt::format("{} is not a directory (or is a symbolic link)", dir),
                      "remove it or point HANGSHIM_DIR elsewhere");
  }
  if (st.st_uid != uid) {
    return make_error(ErrorKind::PermissionDenied, fmt::format("{} belongs to uid {}, not to us (uid {})", dir, st.st_uid, uid),
                      "another user made it; point HANGSHIM_DIR at a directory of your own");
  }
  if ((st.st_mode & 022) != 0) {
    return make_error(ErrorKind::PermissionDenied, fmt::format("{} is writable by other users (mode {:o})", dir, st.st_mode & 0777),
                      fmt::format("chmod 700 {}", dir));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return make_error(ErrorKind::PermissionDenied, fmt::format("{} is not writable: {}", dir, std::strerror(errno)),
                      "point HANGSHIM_DIR at a writable directory");
  }
  return {};
}

int sweep_dead_ledgers(const std::string& dir, const std::string& host, uint64_t now_ns, uint32_t keep_seconds) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  std::string ours = ledger::file_name_host(host);
  int removed = 0;
  while (dirent* entry = ::readdir(d)) {
    ledger::ParsedLedgerName parsed;
    std::string name = entry->d_name;
    if (!ledger::parse_ledger_file_name(name, parsed) || parsed.host != ours) continue;
    if (::kill(static_cast<pid_t>(parsed.pid), 0) == 0 || errno == EPERM) continue;  // alive
    std::string path = dir + "/" + name;
    auto ledger = ledger::read_ledger_file(path);
    if (!ledger) continue;  // not ours to judge
    const auto& h = ledger->header;
    uint64_t last = std::max({h.start_ns, h.heartbeat_ns, h.exit_ns, h.stall_ns});
    if (now_ns < last || now_ns - last < uint64_t{keep_seconds} * 1000000000ull) continue;
    if (::unlink(path.c_str()) == 0) ++removed;
    ::unlink((dir + "/" + ledger::stacks_file_name(name)).c_str());
  }
  ::closedir(d);
  return removed;
}

}  // namespace hangshim::ledger
