#include "ledger/trust.h"

#include <fmt/format.h>

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

namespace {

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

pyframes::Result<void> check_ledger_trust(const std::string& path, const struct stat& file,
                                          const struct stat& directory, uint32_t reader_uid) {
  const bool root = reader_uid == 0;
  const std::string dir = directory_of(path);
  if ((file.st_mode & 022) != 0) {
    return make_error(ErrorKind::PermissionDenied,
                      fmt::format("ledger {} is writable by other users (mode {:04o}); refusing to trust it", path,
                                  file.st_mode & 07777),
                      fmt::format("ledgers are written 0600; if you know who changed it, chmod 600 {}", path));
  }
  if (!root && directory.st_uid != reader_uid && directory.st_uid != 0) {
    return make_error(ErrorKind::PermissionDenied,
                      fmt::format("ledger {} lies in {}, which belongs to uid {}, not to you (uid {}); refusing to "
                                  "trust it",
                                  path, dir, directory.st_uid, reader_uid),
                      "read ledgers from your own HANGSHIM_DIR, or copy them into a directory of yours");
  }
  if ((directory.st_mode & 022) != 0 && (directory.st_mode & S_ISVTX) == 0) {
    return make_error(ErrorKind::PermissionDenied,
                      fmt::format("ledger {} lies in {}, which other users can write to (mode {:04o}); anyone could "
                                  "have replaced it",
                                  path, dir, directory.st_mode & 07777),
                      fmt::format("chmod 700 {} (the shim creates it 0700), or copy the ledgers somewhere private", dir));
  }
  bool owner_ok = file.st_uid == reader_uid || file.st_uid == 0 || (root && file.st_uid == directory.st_uid);
  if (!owner_ok) {
    return make_error(ErrorKind::PermissionDenied,
                      fmt::format("ledger {} belongs to uid {}, not to you (uid {}) nor to the owner of {} (uid {}); "
                                  "another user may have planted it",
                                  path, file.st_uid, reader_uid, dir, directory.st_uid),
                      "read only ledgers your jobs wrote; if you trust this one, copy it (cp makes you its owner)");
  }
  return {};
}

}  // namespace hangshim::ledger
