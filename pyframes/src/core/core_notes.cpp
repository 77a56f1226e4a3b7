#include "core/core_notes.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace pyframes::core {

namespace {

constexpr uint32_t kNtFile = 0x46494c45;     // "FILE"
constexpr uint32_t kNtSiginfo = 0x53494749;  // "SIGI"

// struct elf_prstatus (64-bit): pr_info 12, pr_cursig at 12, pid/ppid/pgrp/sid at 32..47,
// four struct timeval, then pr_reg at 112.
constexpr size_t kPrstatusCursig = 12;
constexpr size_t kPrstatusPid = 32;
constexpr size_t kPrstatusRegs = 112;
// x86-64 struct user_regs_struct: 27 registers; rip is #16, rsp #19, fs_base #21.
constexpr size_t kX86Registers = 27, kX86Rip = 16, kX86Rsp = 19, kX86FsBase = 21;
// AArch64 struct user_pt_regs: x0..x30, sp, pc, pstate.
constexpr size_t kArm64Registers = 34, kArm64Sp = 31, kArm64Pc = 32;

// struct elf_prpsinfo (64-bit): pr_pid at 24, pr_ppid at 28, pr_fname[16] at 40, pr_psargs[80] at 56.
constexpr size_t kPsinfoPid = 24, kPsinfoPpid = 28, kPsinfoFname = 40, kPsinfoPsargs = 56, kPsinfoSize = 136;

template <class T>
T load(const std::vector<unsigned char>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool is_core_note(const Note& note, uint32_t type) { return note.type == type && note.name == "CORE"; }

std::string fixed_string(const std::vector<unsigned char>& bytes, size_t offset, size_t size) {
  const char* start = reinterpret_cast<const char*>(bytes.data() + offset);
  return std::string(start, strnlen(start, size));
}

}  // namespace

std::optional<CoreThread> decode_prstatus(const Note& note, uint16_t machine) {
  if (!is_core_note(note, NT_PRSTATUS)) return std::nullopt;
  size_t count = machine == EM_AARCH64 ? kArm64Registers : kX86Registers;
  if (note.desc.size() < kPrstatusRegs + count * 8) return std::nullopt;
  CoreThread thread;
  thread.machine = machine;
  thread.current_signal = load<int16_t>(note.desc, kPrstatusCursig);
  thread.tid = load<int32_t>(note.desc, kPrstatusPid);
  thread.registers.resize(count);
  for (size_t i = 0; i < count; ++i) thread.registers[i] = load<uint64_t>(note.desc, kPrstatusRegs + i * 8);
  if (machine == EM_AARCH64) {
    thread.pc = thread.registers[kArm64Pc];
    thread.sp = thread.registers[kArm64Sp];
  } else {
    thread.pc = thread.registers[kX86Rip];
    thread.sp = thread.registers[kX86Rsp];
    thread.thread_pointer = thread.registers[kX86FsBase];
  }
  return thread;
}

std::optional<PsInfo> decode_prpsinfo(const Note& note) {
  if (!is_core_note(note, NT_PRPSINFO) || note.desc.size() < kPsinfoSize) return std::nullopt;
  PsInfo info;
  info.pid = load<int32_t>(note.desc, kPsinfoPid);
  info.ppid = load<int32_t>(note.desc, kPsinfoPpid);
  info.fname = fixed_string(note.desc, kPsinfoFname, 16);
  info.psargs = fixed_string(note.desc, kPsinfoPsargs, 80);
  while (!info.psargs.empty() && info.psargs.back() == ' ') info.psargs.pop_back();
  return info;
}

std::optional<CoreSignal> decode_siginfo(const Note& note) {
  // siginfo_t: si_signo, si_errno, si_code, padding, then the union at 16.
  if (!is_core_note(note, kNtSiginfo) || note.desc.size() < 24) return std::nullopt;
  CoreSignal signal;
  signal.number = load<int32_t>(note.desc, 0);
  signal.error = load<int32_t>(note.desc, 4);
  signal.code = load<int32_t>(note.desc, 8);
  bool fault =
      signal.number == 4 || signal.number == 5 || signal.number == 7 || signal.number == 8 || signal.number == 11;
  if (signal.code <= 0) {
    signal.sender_pid = load<int32_t>(note.desc, 16);  // sent by kill/tgkill/sigqueue: si_pid
  } else if (fault) {
    signal.address = load<uint64_t>(note.desc, 16);  // raised by the CPU: si_addr
  }
  return signal;
}

std::vector<AuxEntry> decode_auxv(const Note& note) {
  std::vector<AuxEntry> out;
  if (!is_core_note(note, NT_AUXV)) return out;
  for (size_t offset = 0; offset + 16 <= note.desc.size(); offset += 16) {
    AuxEntry entry{load<uint64_t>(note.desc, offset), load<uint64_t>(note.desc, offset + 8)};
    if (entry.type == AT_NULL) break;
    out.push_back(entry);
  }
  return out;
}

std::optional<uint64_t> aux_value(const std::vector<AuxEntry>& auxv, uint64_t type) {
  for (const auto& entry : auxv) {
    if (entry.type == type) return entry.value;
  }
  return std::nullopt;
}

std::vector<FileMapping> decode_nt_file(const Note& note) {
  // count, page_size, count x {start, end, file offset in pages}, then count NUL-terminated names.
  std::vector<FileMapping> out;
  if (!is_core_note(note, kNtFile) || note.desc.size() < 16) return out;
  uint64_t count = load<uint64_t>(note.desc, 0);
  uint64_t page_size = load<uint64_t>(note.desc, 8);
  if (count > (note.desc.size() - 16) / 24) return out;
  size_t names = 16 + static_cast<size_t>(count) * 24;
  for (uint64_t i = 0; i < count; ++i) {
    size_t entry = 16 + static_cast<size_t>(i) * 24;
    FileMapping mapping;
    mapping.start = load<uint64_t>(note.desc, entry);
    mapping.end = load<uint64_t>(note.desc, entry + 8);
    mapping.file_offset = load<uint64_t>(note.desc, entry + 16) * page_size;
    if (names >= note.desc.size() || mapping.end <= mapping.start) break;
    const char* name = reinterpret_cast<const char*>(note.desc.data() + names);
    size_t length = strnlen(name, note.desc.size() - names);
    if (names + length >= note.desc.size()) break;  // no NUL before the end of the note
    mapping.path.assign(name, length);
    names += length + 1;
    out.push_back(std::move(mapping));
  }
  return out;
}

ModuleMap build_module_map(const std::vector<FileMapping>& files, const std::vector<Segment>& segments,
                           const std::vector<PseudoName>& pseudo_names) {
  std::vector<Mapping> mappings;
  auto flags_at = [&](uint64_t address) -> const Segment* {
    auto it = std::upper_bound(segments.begin(), segments.end(), address,
                               [](uint64_t a, const Segment& s) { return a < s.vaddr; });
    if (it == segments.begin()) return nullptr;
    --it;
    return it->contains(address) ? &*it : nullptr;
  };
  for (const auto& file : files) {
    Mapping mapping{file.start, file.end, file.file_offset, true, false, false, file.path};
    if (const Segment* segment = flags_at(file.start)) {
      mapping.readable = (segment->flags & PF_R) != 0;
      mapping.writable = (segment->flags & PF_W) != 0;
      mapping.executable = (segment->flags & PF_X) != 0;
    }
    mappings.push_back(std::move(mapping));
  }
  // Segments no file backs: heap, stacks, .bss, anonymous mmaps.
  std::vector<FileMapping> sorted = files;
  std::sort(sorted.begin(), sorted.end(), [](const FileMapping& a, const FileMapping& b) { return a.start < b.start; });
  for (const auto& segment : segments) {
    auto it = std::upper_bound(sorted.begin(), sorted.end(), segment.vaddr,
                               [](uint64_t a, const FileMapping& m) { return a < m.start; });
    bool backed = it != sorted.begin() && std::prev(it)->end > segment.vaddr;
    if (backed) continue;
    std::string name;
    for (const auto& pseudo : pseudo_names) {
      if (segment.contains(pseudo.address)) name = pseudo.name;
    }
    mappings.push_back({segment.vaddr, segment.end(), 0, (segment.flags & PF_R) != 0, (segment.flags & PF_W) != 0,
                        (segment.flags & PF_X) != 0, std::move(name)});
  }
  return ModuleMap(std::move(mappings));
}

}  // namespace pyframes::core
