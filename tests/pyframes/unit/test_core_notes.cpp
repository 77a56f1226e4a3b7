// Decoding of NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO, NT_AUXV and NT_FILE, and the module map
// built from them.
#include <doctest/doctest.h>

#include "core/core_notes.h"
#include "core_test_support.h"

using namespace core_test;
using namespace pyframes::core;

namespace {

Note note(const std::string& name, uint32_t type, Bytes desc) { return Note{type, name, std::move(desc)}; }

}  // namespace

TEST_CASE("core notes: NT_PRSTATUS gives the TID, the signal and the registers") {
  auto thread =
      decode_prstatus(note("CORE", NT_PRSTATUS, prstatus(4321, 11, 0x401000, 0x7ffc0000, 0x7f00aa00)), EM_X86_64);
  REQUIRE(thread);
  CHECK(thread->tid == 4321);
  CHECK(thread->current_signal == 11);
  CHECK(thread->pc == 0x401000);
  CHECK(thread->sp == 0x7ffc0000);
  CHECK(thread->thread_pointer == 0x7f00aa00);
  CHECK(thread->registers.size() == 27);
  CHECK(thread->registers[16] == 0x401000);

  Bytes arm(112 + 34 * 8 + 8, 0);
  put<int32_t>(arm, 32, 77);
  put<uint64_t>(arm, 112 + 31 * 8, 0xfff0);
  put<uint64_t>(arm, 112 + 32 * 8, 0x4000);
  auto arm_thread = decode_prstatus(note("CORE", NT_PRSTATUS, arm), EM_AARCH64);
  REQUIRE(arm_thread);
  CHECK(arm_thread->tid == 77);
  CHECK(arm_thread->sp == 0xfff0);
  CHECK(arm_thread->pc == 0x4000);
  CHECK(arm_thread->thread_pointer == 0);

  CHECK_FALSE(decode_prstatus(note("CORE", NT_PRSTATUS, Bytes(100, 0)), EM_X86_64));             // too short
  CHECK_FALSE(decode_prstatus(note("LINUX", NT_PRSTATUS, prstatus(1, 0, 0, 0, 0)), EM_X86_64));  // not a CORE note
}

TEST_CASE("core notes: NT_PRPSINFO and NT_SIGINFO") {
  auto info = decode_prpsinfo(note("CORE", NT_PRPSINFO, prpsinfo(1234, 1, "python3.12", "python3 train.py --lr 0.1 ")));
  REQUIRE(info);
  CHECK(info->pid == 1234);
  CHECK(info->ppid == 1);
  CHECK(info->fname == "python3.12");
  CHECK(info->psargs == "python3 train.py --lr 0.1");

  auto segv = decode_siginfo(note("CORE", kNtSiginfo, siginfo(11, 1, 0x10)));
  REQUIRE(segv);
  CHECK(segv->name() == "SIGSEGV");
  CHECK(segv->address == 0x10);
  CHECK(segv->describe() == "SIGSEGV (SEGV_MAPERR at 0x10)");

  auto abort_self = decode_siginfo(note("CORE", kNtSiginfo, siginfo(6, -6, 1234)));
  REQUIRE(abort_self);
  abort_self->process_pid = 1234;
  CHECK(abort_self->sender_pid == 1234);
  CHECK(abort_self->describe() == "SIGABRT (raised by the process itself)");
  abort_self->process_pid = 99;
  CHECK(abort_self->describe() == "SIGABRT (sent by tgkill from pid 1234)");

  pyframes::CoreSignal realtime;
  realtime.number = 36;
  CHECK(realtime.name() == "SIGRTMIN+2");
  realtime.number = 99;
  CHECK(realtime.name() == "signal 99");
}

TEST_CASE("core notes: NT_FILE in pages or bytes, and a damaged note keeps what precedes the damage") {
  auto mappings = decode_nt_file(note("CORE", kNtFile,
                                      nt_file(4096, {{0x1000, 0x3000, 0, "/usr/bin/python3"},
                                                     {0x3000, 0x4000, 2, "/usr/bin/python3"},
                                                     {0x7000, 0x8000, 0, "/lib/libc.so.6"}})));
  REQUIRE(mappings.size() == 3);
  CHECK(mappings[1].file_offset == 0x2000);
  CHECK(mappings[2].path == "/lib/libc.so.6");

  auto gdb_style = decode_nt_file(note("CORE", kNtFile, nt_file(1, {{0x1000, 0x2000, 0x5000, "/a"}})));  // gcore: bytes
  REQUIRE(gdb_style.size() == 1);
  CHECK(gdb_style[0].file_offset == 0x5000);

  Bytes damaged = nt_file(4096, {{0x1000, 0x2000, 0, "/a"}, {0x2000, 0x3000, 0, "/b"}});
  damaged.pop_back();  // the last name loses its NUL
  auto partial = decode_nt_file(note("CORE", kNtFile, damaged));
  REQUIRE(partial.size() == 1);
  CHECK(partial[0].path == "/a");

  Bytes lying = nt_file(4096, {{0x1000, 0x2000, 0, "/a"}});
  put<uint64_t>(lying, 0, 1000000);  // a count far beyond the note's size
  CHECK(decode_nt_file(note("CORE", kNtFile, lying)).empty());
}

TEST_CASE("core notes: NT_AUXV and the module map") {
  auto entries = decode_auxv(note("CORE", NT_AUXV, auxv({{AT_ENTRY, 0x1234}, {AT_EXECFN, 0x7ff0}})));
  REQUIRE(entries.size() == 2);
  CHECK(aux_value(entries, AT_ENTRY).value() == 0x1234);
  CHECK_FALSE(aux_value(entries, AT_PHDR));

  std::vector<FileMapping> files{{0x1000, 0x2000, 0, "/bin/x"}, {0x2000, 0x3000, 0x1000, "/bin/x"}};
  std::vector<Segment> segments{{0x1000, 0x1000, 0, 0x1000, PF_R},
                                {0x2000, 0x1000, 0, 0, PF_R | PF_X},
                                {0x3000, 0x2000, 0, 0x2000, PF_R | PF_W},
                                {0x9000, 0x1000, 0, 0x1000, PF_R | PF_W}};
  auto map = build_module_map(files, segments, {{0x9800, "[stack]"}});
  REQUIRE(map.mappings().size() == 4);
  CHECK(map.find(0x2800)->path == "/bin/x");
  CHECK(map.find(0x2800)->executable);
  CHECK_FALSE(map.find(0x2800)->writable);
  CHECK(map.find(0x3800)->path.empty());  // .bss-like anonymous memory after the file
  CHECK(map.find(0x3800)->writable);
  CHECK(map.find(0x9000)->path == "[stack]");
  CHECK(map.files() == std::vector<std::string>{"/bin/x"});
}
