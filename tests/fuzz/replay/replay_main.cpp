// Replays fuzz inputs through a fuzz target's LLVMFuzzerTestOneInput in the ordinary build
// (g++, no libFuzzer), so every committed finding -- crashes and timeouts alike -- is a ctest
// test on every build, the sanitizer builds included:
//   replay_TARGET FILE_OR_DIR...
// Each input runs under a deadline that only a reader that spins reaches (a reader of untrusted
// bytes must finish: a count or an offset from the input may not drive a loop unbounded). On
// expiry it prints which input and exits 1, instead of leaving ctest to kill a silent process.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr unsigned kDeadlineSeconds = 30;  // inputs take milliseconds; 30 s is a spin, not load

char g_current[512];  // the input being read, for the alarm handler

void on_deadline(int) {
  static const char prefix[] = "replay: reading ";
  static const char suffix[] = " did not finish within 30 s: the reader loops on this input (a bound taken from the input?)\n";
  (void)!::write(2, prefix, sizeof prefix - 1);
  (void)!::write(2, g_current, ::strlen(g_current));
  (void)!::write(2, suffix, sizeof suffix - 1);
  ::_exit(1);
}

std::vector<std::string> inputs_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode)) return {path};
  std::vector<std::string> out;
  if (DIR* dir = ::opendir(path.c_str())) {
    while (dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      out.push_back(path + "/" + e->d_name);
    }
    ::closedir(dir);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR... (fuzz inputs to replay)\n", argv[0]);
    return 2;
  }
  struct sigaction action {};
  action.sa_handler = on_deadline;
  ::sigaction(SIGALRM, &action, nullptr);
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    auto files = inputs_of(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "replay: no inputs in %s (pass the committed corpus directory)\n", argv[i]);
      return 2;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
      auto start = std::chrono::steady_clock::now();
      ::alarm(kDeadlineSeconds);
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ::alarm(0);
      auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::printf("replayed %s (%zu bytes) in %.1f ms\n", file.c_str(), bytes.size(), ms);
      ++replayed;
    }
  }
  std::printf("%zu input(s) replayed\n", replayed);
  return 0;
}
