// Reading a Flight Recorder dump file as one rank's input to the report (load_inputs.h): the
// file read whole (bounded), its pickle read by the bounded reader, its fields checked, and the
// dump turned into the ledger terms the analysis reads. Anything wrong is one InputError that
// names the file, the problem and what to do; the other files are read on.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "report/inputs/flight_recorder/fr_ledger.h"
#include "report/inputs/flight_recorder/pickle_opcodes.h"
#include "report/inputs/flight_recorder/pickle_reader.h"
#include "report/inputs/load_inputs.h"
#include "report/inputs/read_fully.h"

namespace hangshim::report {

namespace {

std::string error_text(const pyframes::Error& e) { return e.hint.empty() ? e.message : fmt::format("{} ({})", e.message, e.hint); }

struct FileBytes {
  std::string bytes;
  uint64_t mtime_ns = 0;
};

pyframes::Result<FileBytes> read_whole(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return pyframes::make_error(pyframes::ErrorKind::Io, fmt::format("cannot open it: {}", std::strerror(err)),
                                err == ELOOP ? "pass the dump itself, not a link to it" : "");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return pyframes::make_error(pyframes::ErrorKind::Usage, "not a regular file", "pass the dump files PyTorch wrote");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return pyframes::make_error(pyframes::ErrorKind::Corrupt,
                                fmt::format("{} bytes, more than the {} a Flight Recorder dump is read up to", st.st_size, max_bytes),
                                "pass the per-rank dump files PyTorch wrote");
  }
  FileBytes out;
  out.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec);
  out.bytes.resize(static_cast<size_t>(st.st_size));
  out.bytes.resize(read_fully(fd, out.bytes.data(), out.bytes.size()));
  ::close(fd);
  return out;
}

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool looks_like_pickle(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  unsigned char head[2] = {0, 0};
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  // PROTO and a protocol Python knows: any pickle of protocol 2 or later starts so. Which one it
  // is (a dump, or some other pickle) only its contents tell.
  return n >= 1 && head[0] == pickle::op::kProto && (n < 2 || head[1] <= 5);
}

void load_flight_recorder_file(const std::string& path, Inputs& inputs, const LoadOptions& options) {
  auto fail = [&](const std::string& problem) { inputs.errors.push_back({path, fmt::format("{}: {}", path, problem)}); };
  pickle::Limits limits;
  auto file = read_whole(path, limits.max_bytes);
  if (!file) return fail(error_text(file.error()));
  auto doc = pickle::read_pickle(file->bytes, limits);
  if (!doc) {
    const pyframes::Error& e = doc.error();
    if (e.kind == pyframes::ErrorKind::Truncated) return fail(fmt::format("Flight Recorder dump cut short: {} ({})", e.message, e.hint));
    return fail(fmt::format("not a Flight Recorder dump PyTorch wrote: {} ({})", e.message,
                            e.hint.empty() ? "pass PyTorch's per-rank dump files" : e.hint));
  }
  auto dump = flight_recorder::read_dump(*doc, file->bytes.size());
  if (!dump) return fail(error_text(dump.error()));
  flight_recorder::DumpOrigin origin;
  origin.source = path;
  origin.job = "dumps:" + directory_of(path);
  origin.rank = flight_recorder::rank_from_file_name(path);
  origin.time_ns = file->mtime_ns;
  if (origin.rank < 0) {
    return fail("a Flight Recorder dump whose file name ends in no rank (PyTorch names them <prefix><rank>, the prefix "
                "from TORCH_NCCL_DEBUG_INFO_TEMP_FILE: nccl_trace_rank_0; rename it so)");
  }
  ledger::Ledger l = flight_recorder::dump_to_ledger(*dump, origin);
  if (l.comms.empty()) {
    return fail(fmt::format("a Flight Recorder dump (version {}) whose \"pg_config\" has no process group with rank {} in it: "
                            "nothing to diagnose (is the rank in the file name right?)", dump->version, origin.rank));
  }
  RankView view = make_rank_view(std::move(l), inputs, options.patterns, options.view);
  view.observed_ns = file->mtime_ns;
  inputs.ranks.push_back(std::move(view));
}

}  // namespace hangshim::report
