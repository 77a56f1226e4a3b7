// Core::open end to end on synthetic cores: memory from the core's segments and from the files
// NT_FILE names (only verified copies), the lookup order (--exe, --root, --lib-search), warnings
// once per file, and the process facts (pid, argv, environment, executable, fatal signal).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>

#include "core_test_support.h"
#include "pyframes/core.h"

using namespace core_test;
using pyframes::Core;
using pyframes::CoreOptions;
using pyframes::ReadStatus;

namespace {

constexpr uint64_t kLib = 0x100000;    // libfoo: first page dumped, next two pages left out
constexpr uint64_t kOther = 0x200000;  // libbar: no segment at all (gcore skips such mappings)
constexpr uint64_t kHeap = 0x300000;
constexpr uint64_t kStack = 0x7ff000000000;
constexpr uint64_t kStackSize = 0x2000;
const Bytes kFooId{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
const Bytes kBarId{0xba, 0x55, 5, 6};

struct Scenario {
  std::string foo_path;  // as the core names them
  std::string bar_path;
  int16_t cursig = 0;
};

// The initial stack: argc, argv[], NULL, envp[], NULL, auxv, then the strings.
Bytes initial_stack(const Bytes& auxv_bytes, const std::vector<std::string>& argv, const std::vector<std::string>& envp,
                    const std::string& execfn, uint64_t* execfn_address) {
  Bytes stack(kStackSize, 0);
  size_t strings_at = 0x1800;
  std::vector<uint64_t> arg_ptrs, env_ptrs;
  auto add_string = [&](const std::string& s) {
    uint64_t address = kStack + strings_at;
    std::memcpy(stack.data() + strings_at, s.c_str(), s.size() + 1);
    strings_at += s.size() + 1;
    return address;
  };
  for (const auto& a : argv) arg_ptrs.push_back(add_string(a));
  for (const auto& e : envp) env_ptrs.push_back(add_string(e));
  *execfn_address = add_string(execfn);
  size_t at = 0x1000;
  put<uint64_t>(stack, at, argv.size());
  at += 8;
  for (uint64_t p : arg_ptrs) put<uint64_t>(stack, at, p), at += 8;
  put<uint64_t>(stack, at, 0), at += 8;
  for (uint64_t p : env_ptrs) put<uint64_t>(stack, at, p), at += 8;
  put<uint64_t>(stack, at, 0), at += 8;
  std::memcpy(stack.data() + at, auxv_bytes.data(), auxv_bytes.size());
  return stack;
}

Bytes slice(const Bytes& bytes, size_t offset, size_t size) {
  return Bytes(bytes.begin() + static_cast<long>(offset), bytes.begin() + static_cast<long>(offset + size));
}

Bytes foo_file() { return elf_with_build_id(kFooId, 0x3000, 5); }
Bytes bar_file() { return elf_with_build_id(kBarId, 0x1000, 9); }

SyntheticCore process_core(const Scenario& s) {
  SyntheticCore core;
  // The exec string's address is only known once the stack is laid out; auxv is laid out with a
  // placeholder of the same size first.
  uint64_t execfn = 0;
  Bytes placeholder = auxv({{AT_ENTRY, kLib + 0x1100}, {AT_EXECFN, 0}, {AT_PAGESZ, 4096}});
  std::vector<std::string> argv{"python3", "train.py", "--name", "two words"};
  std::vector<std::string> envp{"HOME=/root", "RANK=3", "LOCAL_RANK=1"};
  initial_stack(placeholder, argv, envp, s.foo_path, &execfn);
  Bytes aux = auxv({{AT_ENTRY, kLib + 0x1100}, {AT_EXECFN, execfn}, {AT_PAGESZ, 4096}});
  Bytes stack = initial_stack(aux, argv, envp, s.foo_path, &execfn);

  core.notes.push_back({"CORE", NT_PRSTATUS, prstatus(500, s.cursig, kLib + 0x1200, kStack + 0x800, 0x7f0000001000)});
  core.notes.push_back({"CORE", NT_PRPSINFO, prpsinfo(500, 1, "python3", "python3 train.py --name two words")});
  core.notes.push_back({"CORE", NT_PRSTATUS, prstatus(501, 0, kLib + 0x1300, kStack + 0x400, 0x7f0000002000)});
  core.notes.push_back({"CORE", kNtSiginfo, siginfo(s.cursig ? s.cursig : 19, -6, 500)});
  core.notes.push_back({"CORE", NT_AUXV, aux});
  core.notes.push_back({"CORE", kNtFile,
                        nt_file(4096, {{kLib, kLib + 0x1000, 0, s.foo_path},
                                       {kLib + 0x1000, kLib + 0x3000, 1, s.foo_path},
                                       {kOther, kOther + 0x1000, 0, s.bar_path}})});
  Bytes first_page = slice(foo_file(), 0, 0x1000);
  core.segments.push_back({kLib, 0x1000, first_page, PF_R});
  core.segments.push_back({kLib + 0x1000, 0x2000, {}, PF_R | PF_X});
  core.segments.push_back({kHeap, 0x1000, pattern(0x1000, 3), PF_R | PF_W});
  core.segments.push_back({kStack, kStackSize, stack, PF_R | PF_W});
  return core;
}

Bytes read(const Core& core, uint64_t address, size_t size, ReadStatus* status = nullptr) {
  Bytes out(size);
  ReadStatus s = core.memory().read(address, out.data(), size);
  if (status) *status = s;
  if (s != ReadStatus::Ok) out.clear();
  return out;
}

size_t count_containing(const std::vector<std::string>& lines, const std::string& needle) {
  return static_cast<size_t>(std::count_if(lines.begin(), lines.end(),
                                           [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
}

}  // namespace

TEST_CASE("core memory: dumped bytes from the core, left-out pages from the named file") {
  TempDir dir;
  Scenario s{dir.file("libfoo.so"), dir.file("libbar.so")};
  write_file(s.foo_path, foo_file());
  write_file(s.bar_path, bar_file());
  write_file(dir.file("core"), process_core(s).build());

  auto core = Core::open(dir.file("core"));
  REQUIRE(core.ok());
  CHECK(read(**core, kHeap + 16, 32) == slice(pattern(0x1000, 3), 16, 32));
  CHECK(read(**core, kLib + 0x1010, 64) == slice(foo_file(), 0x1010, 64));
  // One read across the dumped first page and the left-out page after it.
  CHECK(read(**core, kLib + 0xff0, 0x20) == slice(foo_file(), 0xff0, 0x20));
  // A mapping with no segment at all.
  CHECK(read(**core, kOther + 8, 8) == slice(bar_file(), 8, 8));
  ReadStatus status{};
  read(**core, 0x500000, 8, &status);
  CHECK(status == ReadStatus::Unmapped);
  read(**core, kHeap + 0xff8, 16, &status);  // runs off the end of the heap segment
  CHECK(status == ReadStatus::Unmapped);
  CHECK((*core)->warnings().empty());
  CHECK((*core)->resolver()(s.foo_path) == s.foo_path);
  CHECK((*core)->memory().describe() == "core " + dir.file("core"));
}

TEST_CASE("core memory: the tail of a file's last page reads as zeros, pages beyond it are unmapped") {
  TempDir dir;
  Scenario s{dir.file("libfoo.so"), dir.file("libbar.so")};
  write_file(s.foo_path, slice(foo_file(), 0, 0x1800));  // the mapping runs on to 0x3000
  write_file(dir.file("core"), process_core(s).build());
  auto core = Core::open(dir.file("core"));
  REQUIRE(core.ok());
  Bytes expected = slice(foo_file(), 0x17f0, 0x10);
  expected.resize(0x20, 0);
  CHECK(read(**core, kLib + 0x17f0, 0x20) == expected);
  CHECK(read(**core, kLib + 0x1ff0, 0x10) == Bytes(0x10, 0));
  ReadStatus status{};
  read(**core, kLib + 0x1ff0, 0x20, &status);
  CHECK(status == ReadStatus::Unmapped);
  read(**core, kLib + 0x2100, 8, &status);
  CHECK(status == ReadStatus::Unmapped);
}

TEST_CASE("core memory: process facts from the notes and the initial stack") {
  TempDir dir;
  Scenario s{dir.file("libfoo.so"), dir.file("libbar.so"), 6};
  write_file(dir.file("core"), process_core(s).build());
  auto core = Core::open(dir.file("core"));
  REQUIRE(core.ok());
  const auto& info = (*core)->info();
  CHECK(info.pid == 500);
  CHECK(info.executable == s.foo_path);  // the file mapped at AT_ENTRY
  CHECK(info.command_line == std::vector<std::string>{"python3", "train.py", "--name", "two words"});
  CHECK(info.environment == std::vector<std::string>{"HOME=/root", "RANK=3", "LOCAL_RANK=1"});
  REQUIRE(info.fatal_signal);
  CHECK(info.fatal_signal->describe() == "SIGABRT (raised by the process itself)");
  REQUIRE(info.threads.size() == 2);
  CHECK(info.threads[0].tid == 500);
  CHECK(info.threads[1].thread_pointer == 0x7f0000002000);
  CHECK((*core)->modules().find(kStack + 8)->path == "[stack]");

  Scenario live{dir.file("libfoo.so"), dir.file("libbar.so"), 0};  // gcore: no fatal signal
  write_file(dir.file("gcore"), process_core(live).build());
  auto gcore = Core::open(dir.file("gcore"));
  REQUIRE(gcore.ok());
  CHECK_FALSE((*gcore)->info().fatal_signal);
}

TEST_CASE("core memory: a missing file or another build is reported once and not used") {
  TempDir dir;
  Scenario s{dir.file("libfoo.so"), dir.file("libbar.so")};
  write_file(s.foo_path, elf_with_build_id(Bytes{1, 1, 1, 1, 1, 1, 1, 1}, 0x3000, 5));  // another build
  write_file(dir.file("core"), process_core(s).build());                                // libbar.so is absent
  auto core = Core::open(dir.file("core"));
  REQUIRE(core.ok());
  ReadStatus status{};
  read(**core, kLib + 0x1010, 8, &status);
  CHECK(status == ReadStatus::Unmapped);
  read(**core, kLib + 0x2010, 8, &status);
  read(**core, kOther, 8, &status);
  CHECK(status == ReadStatus::Unmapped);
  read(**core, kOther + 16, 8, &status);
  auto warnings = (*core)->warnings();
  CHECK(warnings.size() == 2);
  CHECK(count_containing(warnings, "another build (build-id 0101010101010101, the core's deadbeef01020304)") == 1);
  CHECK(count_containing(warnings, s.bar_path + ": not found") == 1);
  CHECK(count_containing(warnings, "--lib-search") == 2);
  CHECK(count_containing(warnings, "--exe PATH") == 1);  // libfoo is the executable here
  CHECK((*core)->resolver()(s.foo_path).empty());
  CHECK((*core)->unusable_files().size() == 2);
  // The dumped first page is still readable: it is the core's own copy.
  CHECK(read(**core, kLib, 4) == Bytes{0x7f, 'E', 'L', 'F'});
}

TEST_CASE("core memory: --lib-search, --root and --exe find relocated files") {
  TempDir dir;
  Scenario s{"/cluster/node7/lib/libfoo.so", "/cluster/node7/lib/libbar.so"};
  write_file(dir.file("core"), process_core(s).build());
  ::mkdir(dir.file("copies").c_str(), 0700);
  write_file(dir.file("copies/libfoo.so"), foo_file());
  write_file(dir.file("copies/libbar.so"), bar_file());

  CoreOptions search;
  search.lib_search = {dir.file("nothing-here-is-a-dir-check"), dir.file("copies")};
  {  // a --lib-search that is not a directory is skipped with a warning, as pystack does
    auto skipped = Core::open(dir.file("core"), search);
    REQUIRE(skipped.ok());
    CHECK(count_containing((*skipped)->warnings(), "nothing-here-is-a-dir-check: not a directory, skipped") == 1);
    CHECK((*skipped)->resolver()(s.bar_path) == dir.file("copies/libbar.so"));
  }
  search.lib_search = {dir.path(), dir.file("copies")};
  auto core = Core::open(dir.file("core"), search);
  REQUIRE(core.ok());
  CHECK(read(**core, kLib + 0x1010, 64) == slice(foo_file(), 0x1010, 64));
  CHECK((*core)->resolver()(s.bar_path) == dir.file("copies/libbar.so"));
  CHECK((*core)->warnings().empty());

  CoreOptions rooted;
  rooted.root = dir.file("root");
  for (const char* sub : {"root", "root/cluster", "root/cluster/node7", "root/cluster/node7/lib"}) {
    ::mkdir(dir.file(sub).c_str(), 0700);
  }
  write_file(dir.file("root/cluster/node7/lib/libfoo.so"), foo_file());
  auto under_root = Core::open(dir.file("core"), rooted);
  REQUIRE(under_root.ok());
  CHECK((*under_root)->resolver()(s.foo_path) == dir.file("root/cluster/node7/lib/libfoo.so"));
  CHECK((*under_root)->resolver()(s.bar_path).empty());
  CHECK(count_containing((*under_root)->warnings(), "not found under " + rooted.root) == 1);

  CoreOptions exe;
  exe.executable = dir.file("copies/libfoo.so");
  auto with_exe = Core::open(dir.file("core"), exe);
  REQUIRE(with_exe.ok());
  CHECK((*with_exe)->resolver()(s.foo_path) == *exe.executable);
  exe.executable = dir.file("no-such-exe");
  auto bad_exe = Core::open(dir.file("core"), exe);
  REQUIRE_FALSE(bad_exe.ok());
  CHECK(bad_exe.error().message.find("--exe") != std::string::npos);
}

TEST_CASE("core memory: a truncated core warns with the missing byte count and reads what is left") {
  TempDir dir;
  Scenario s{dir.file("libfoo.so"), dir.file("libbar.so")};
  write_file(s.foo_path, foo_file());
  Bytes whole = process_core(s).build();
  write_file(dir.file("core"), Bytes(whole.begin(), whole.end() - 0x1000));  // half the stack is gone
  auto core = Core::open(dir.file("core"));
  REQUIRE(core.ok());
  CHECK((*core)->info().missing_bytes == 0x1000);
  CHECK(count_containing((*core)->warnings(), "truncated: 4096 bytes missing") == 1);
  CHECK(read(**core, kHeap, 8) == slice(pattern(0x1000, 3), 0, 8));
  ReadStatus status{};
  read(**core, kStack + 0x1800, 8, &status);
  CHECK(status == ReadStatus::Unmapped);
  // argv sits in the lost half: the command line falls back to pr_psargs.
  CHECK((*core)->info().command_line == std::vector<std::string>{"python3", "train.py", "--name", "two", "words"});
}
