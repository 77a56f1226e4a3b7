#include "core/gzip_inflate.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace pyframes::core {

namespace {

std::string temp_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

// An anonymous file in `dir`: O_TMPFILE where the file system has it, else mkstemp + unlink.
Result<UniqueFd> open_temp_file(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return UniqueFd(fd);
  std::string templ = dir + "/pyframes-core-XXXXXX";
  fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorKind::Io, fmt::format("cannot create a temporary file in {}: {}", dir, std::strerror(errno)),
                      "set TMPDIR to a writable directory with room for the decompressed core");
  }
  ::unlink(templ.c_str());
  return UniqueFd(fd);
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<Inflated> inflate_to_temp_file(int fd, const std::string& path) {
  std::string dir = temp_directory();
  PYFRAMES_TRY(out, open_temp_file(dir));

  int dup_fd = ::dup(fd);  // gzclose closes the descriptor it was given; the caller keeps `fd`
  if (dup_fd < 0) return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  ::lseek(dup_fd, 0, SEEK_SET);
  gzFile gz = ::gzdopen(dup_fd, "rb");
  if (gz == nullptr) {
    ::close(dup_fd);
    return make_error(ErrorKind::Io, fmt::format("cannot read {}: zlib could not open it", path));
  }
  ::gzbuffer(gz, 1 << 17);

  Inflated result;
  std::vector<char> buffer(1 << 18);  // 256 KiB: the whole memory cost of inflating
  for (;;) {
    int n = ::gzread(gz, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n > 0) {
      if (!write_all(out.get(), buffer.data(), static_cast<size_t>(n))) {
        int err = errno;
        ::gzclose(gz);
        return make_error(ErrorKind::Io, fmt::format("cannot decompress {} into {}: {}", path, dir, std::strerror(err)),
                          "set TMPDIR to a directory with room for the decompressed core");
      }
      result.size += static_cast<uint64_t>(n);
      continue;
    }
    // A stream cut short ends like a complete one (0, at EOF) but leaves an error behind.
    int zerr = Z_OK;
    const char* message = ::gzerror(gz, &zerr);
    if (n < 0 || zerr != Z_OK) {
      // What was inflated before the damage is still a (truncated) core worth reading.
      result.warning = fmt::format("{}: gzip data is damaged or cut after {} bytes ({}); reading what came before",
                                   path, result.size, message ? message : "unknown zlib error");
    }
    break;
  }
  ::gzclose(gz);
  if (result.size == 0 && !result.warning.empty()) {
    return make_error(ErrorKind::Corrupt, result.warning, "the .gz file is damaged; copy it again");
  }
  result.fd = std::move(out);
  return result;
}

}  // namespace pyframes::core
