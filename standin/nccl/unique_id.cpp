#include "unique_id.h"

#include "errors.h"
#include "segment.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fakenccl {
namespace {

struct IdContents {
  char magic[8];
  std::uint32_t version;
  std::int32_t pid;
  unsigned char random[16];
};
static_assert(sizeof(IdContents) <= sizeof(ncclUniqueId));

constexpr std::uint32_t kIdVersion = 1;
constexpr const char* kNamePrefix = "/hangshim-fakenccl.";

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

// splitmix64 over FNV-1a: a stable 64-bit digest; two seeds give the 128-bit child name.
std::uint64_t digest(const std::string& text, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

ncclResult_t make_unique_id(ncclUniqueId* id) {
  remove_stale_segments();  // a new job starts: clean up after jobs that were killed
  IdContents contents{};
  std::memcpy(contents.magic, kUniqueIdMagic, sizeof contents.magic);
  contents.version = kIdVersion;
  contents.pid = static_cast<std::int32_t>(getpid());
  std::size_t filled = 0;
  while (filled < sizeof contents.random) {
    const ssize_t got = getrandom(contents.random + filled, sizeof contents.random - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(ncclSystemError, "fakenccl: getrandom failed: {} (ncclGetUniqueId)",
                  std::strerror(errno));
    }
    filled += static_cast<std::size_t>(got);
  }
  std::memset(id->internal, 0, sizeof id->internal);
  std::memcpy(id->internal, &contents, sizeof contents);
  return ncclSuccess;
}

ncclResult_t segment_name_for_id(const ncclUniqueId& id, std::string& name) {
  IdContents contents;
  std::memcpy(&contents, id.internal, sizeof contents);
  if (std::memcmp(contents.magic, kUniqueIdMagic, sizeof contents.magic) != 0 ||
      contents.version != kIdVersion) {
    return fail(ncclInvalidArgument,
                "fakenccl: the ncclUniqueId was not made by this stand-in's ncclGetUniqueId "
                "(pass rank 0's id to every rank unchanged)");
  }
  name = kNamePrefix + hex(contents.random, sizeof contents.random);
  return ncclSuccess;
}

std::string segment_name_for_split(const std::string& parent, std::uint64_t split_index, int color) {
  const std::string key = parent + "/" + std::to_string(split_index) + "/" + std::to_string(color);
  unsigned char bytes[16];
  const std::uint64_t a = digest(key, 1);
  const std::uint64_t b = digest(key, 2);
  std::memcpy(bytes, &a, 8);
  std::memcpy(bytes + 8, &b, 8);
  return kNamePrefix + hex(bytes, sizeof bytes);
}

}  // namespace fakenccl
