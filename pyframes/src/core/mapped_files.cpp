#include "core/mapped_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>

namespace pyframes::core {

namespace {

constexpr const char* kDeletedSuffix = " (deleted)";

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& tail) {
  if (dir.empty()) return tail;
  std::string out = dir;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  if (!tail.empty() && tail.front() != '/') out += '/';
  return out + tail;
}

UniqueFd open_regular(const std::string& path, uint64_t* size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return UniqueFd();
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

MappedFiles::MappedFiles(const ModuleMap& modules, ImageReader read_dumped, std::string executable,
                         const CoreOptions& options)
    : modules_(modules),
      read_dumped_(std::move(read_dumped)),
      executable_(std::move(executable)),
      exe_override_(options.executable),
      lib_search_(options.lib_search),
      root_(options.root) {}

std::vector<std::string> MappedFiles::candidates(const std::string& target_path) const {
  std::string path = target_path;
  // A file replaced or removed after it was mapped: its new version may still be the same build.
  if (path.size() > std::char_traits<char>::length(kDeletedSuffix) &&
      path.compare(path.size() - std::char_traits<char>::length(kDeletedSuffix), std::string::npos, kDeletedSuffix) ==
          0) {
    path.resize(path.size() - std::char_traits<char>::length(kDeletedSuffix));
  }
  std::vector<std::string> out;
  if (exe_override_ && target_path == executable_) out.push_back(*exe_override_);
  out.push_back(root_.empty() ? path : join(root_, path));
  for (const auto& dir : lib_search_) {
    out.push_back(join(dir, base_name(path)));
    out.push_back(join(dir, path));
  }
  return out;
}

std::optional<std::string> MappedFiles::expected_build_id(const std::string& target_path) const {
  for (const auto& mapping : modules_.mappings_of(target_path)) {
    if (mapping.file_offset != 0) continue;
    uint64_t base = mapping.start;
    uint64_t length = mapping.end - mapping.start;
    auto id = build_id_of_image([&](uint64_t offset, void* out, size_t size) {
      return offset <= length && size <= length - offset && read_dumped_(base + offset, out, size);
    });
    if (id) return id;
  }
  return std::nullopt;
}

LocalFile MappedFiles::resolve(const std::string& target_path) const {
  std::optional<std::string> expected = expected_build_id(target_path);
  bool forced = exe_override_ && target_path == executable_;
  std::string differing;  // first candidate that exists but is another build
  std::string differing_id;
  for (const auto& candidate : candidates(target_path)) {
    LocalFile file;
    file.fd = open_regular(candidate, &file.size);
    if (!file.fd.valid()) {
      if (forced && candidate == *exe_override_) {
        warnings_.push_back(fmt::format("--exe {}: cannot open it: {}", candidate, std::strerror(errno)));
      }
      continue;
    }
    std::optional<std::string> actual = expected ? build_id_of_file(file.fd.get()) : std::nullopt;
    bool same = !expected || (actual && *actual == *expected);
    if (forced && candidate == *exe_override_) {
      if (!same) {
        warnings_.push_back(
            fmt::format("--exe {}: its build-id {} differs from the core's executable {} ({}); using it anyway",
                        candidate, actual ? hex(*actual) : "(none)", target_path, hex(*expected)));
      }
      file.path = candidate;
      return file;
    }
    if (same) {
      file.path = candidate;
      return file;
    }
    if (differing.empty()) {
      differing = candidate;
      differing_id = actual ? hex(*actual) : "(none)";
    }
  }
  unusable_.push_back({target_path, differing});
  std::string hint =
      target_path == executable_ ? "pass --exe PATH or --lib-search DIR" : "pass --lib-search DIR holding a copy";
  if (!differing.empty()) {
    warnings_.push_back(
        fmt::format("{}: {} is another build (build-id {}, the core's {}); not used, so what the core left "
                    "out of that file is unreadable ({})",
                    target_path, differing, differing_id, hex(*expected), hint));
  } else {
    warnings_.push_back(fmt::format("{}: not found{}; what the core left out of that file is unreadable ({})",
                                    target_path, root_.empty() ? "" : fmt::format(" under {}", root_), hint));
  }
  return LocalFile{};
}

const LocalFile* MappedFiles::find(const std::string& target_path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = resolved_.find(target_path);
  if (it == resolved_.end()) it = resolved_.emplace(target_path, resolve(target_path)).first;
  return it->second.fd.valid() ? &it->second : nullptr;
}

std::vector<std::string> MappedFiles::warnings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return warnings_;
}

std::vector<UnusableFile> MappedFiles::unusable() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return unusable_;
}

}  // namespace pyframes::core
