// Decoding of the notes a Linux core carries: NT_PRSTATUS (one per thread: TID, signal,
// registers), NT_PRPSINFO (pid, comm, the first 80 bytes of argv), NT_SIGINFO (the fatal
// signal), NT_AUXV (entry point, AT_EXECFN) and NT_FILE (which file backs which addresses).
// Layouts are the kernel's for 64-bit little-endian targets (x86-64 and AArch64 share them).
// Every decoder checks sizes: a note shorter than its structure is ignored, never over-read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/core_file.h"
#include "pyframes/core.h"
#include "pyframes/module_map.h"

namespace pyframes::core {

struct PsInfo {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string fname;   // comm, at most 15 characters
  std::string psargs;  // argv joined by spaces, cut at 80 bytes
};

struct FileMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;  // bytes
  std::string path;
};

struct AuxEntry {
  uint64_t type = 0;
  uint64_t value = 0;
};

std::optional<CoreThread> decode_prstatus(const Note& note, uint16_t machine);
std::optional<PsInfo> decode_prpsinfo(const Note& note);
std::optional<CoreSignal> decode_siginfo(const Note& note);
std::vector<AuxEntry> decode_auxv(const Note& note);
// Entries with end <= start, or names running past the note, end the list (a damaged note
// yields the mappings before the damage).
std::vector<FileMapping> decode_nt_file(const Note& note);

std::optional<uint64_t> aux_value(const std::vector<AuxEntry>& auxv, uint64_t type);

// A name for the anonymous segment containing `address`, as /proc/PID/maps would show it
// ("[stack]" for the segment holding AT_EXECFN, "[vdso]" at AT_SYSINFO_EHDR).
struct PseudoName {
  uint64_t address = 0;
  std::string name;
};

// NT_FILE mappings plus the core's other segments as anonymous mappings, with permissions from
// the PT_LOAD flags: the same picture /proc/PID/maps gives for a live process.
ModuleMap build_module_map(const std::vector<FileMapping>& files, const std::vector<Segment>& segments,
                           const std::vector<PseudoName>& pseudo_names = {});

}  // namespace pyframes::core
