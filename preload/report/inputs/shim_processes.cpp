#include "report/inputs/shim_processes.h"

#include "pyframes/rank_workers.h"
#include "pyframes/proc_stat.h"

#include <fmt/format.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace hangshim::report {

namespace {

std::string read_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

bool maps_shim(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  for (size_t n = 0; n < 100000 && std::getline(in, line); ++n) {
    if (line.find("/libhangshim.so") != std::string::npos) return true;
  }
  return false;
}

std::string environ_value(int64_t pid, const std::string& name) {
  std::string env = read_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  std::string want = name + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (env.compare(at, want.size(), want) == 0) return env.substr(at + want.size(), end - at - want.size());
    at = end + 1;
  }
  return "";
}

std::string executable(int64_t pid) {
  char buffer[4096];
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

std::string trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

std::vector<ShimProcess> find_shim_processes(const std::vector<std::string>& dirs, const std::string& default_dir) {
  std::vector<ShimProcess> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  uid_t me = ::getuid();
  int64_t self = ::getpid();
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long long pid = std::strtoll(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    struct stat st {};
    std::string base = "/proc/" + std::to_string(pid);
    if (::stat(base.c_str(), &st) != 0 || st.st_uid != me) continue;
    if (!maps_shim(pid)) continue;
    ShimProcess p;
    p.pid = pid;
    p.ledger_dir = environ_value(pid, "HANGSHIM_DIR");
    if (pyframes::ProcStat stat; pyframes::read_proc_stat(pid, stat)) p.ppid = stat.ppid;
    p.rank = environ_value(pid, "RANK");
    // The same rule as pyframes --children: a process under a rank with the rank's RANK,
    // LOCAL_RANK and executable is that rank's worker, not one more copy of the rank.
    if (!p.rank.empty() && p.ppid > 0) {
      p.worker_of = pyframes::live_rank_owner({p.ppid, p.rank, environ_value(pid, "LOCAL_RANK"), executable(pid)});
    }
    std::string cmd = read_file(base + "/cmdline", 200);
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    p.command = cmd;
    std::string writes_to = trimmed(p.ledger_dir.empty() ? default_dir : p.ledger_dir);
    bool wanted = dirs.empty() || std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return trimmed(d) == writes_to; });
    if (wanted) found.push_back(std::move(p));
  }
  ::closedir(proc);
  std::sort(found.begin(), found.end(), [](const ShimProcess& a, const ShimProcess& b) { return a.pid < b.pid; });
  return found;
}

std::string shim_process_name(const ShimProcess& process) {
  if (process.worker_of != 0) return fmt::format("pid {} (worker of rank {} pid {})", process.pid, process.rank, process.worker_of);
  if (!process.rank.empty()) return fmt::format("pid {} (rank {})", process.pid, process.rank);
  return fmt::format("pid {}", process.pid);
}

}  // namespace hangshim::report
