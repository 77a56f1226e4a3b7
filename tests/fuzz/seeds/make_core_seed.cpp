// Shrinks a real core into a fuzz seed: reads it the way read_core does (locate, layout,
// stacks with locals) through a recording memory, then writes a core with the same ELF header
// and notes whose PT_LOAD segments keep only the bytes that were read (plus the top of the
// threads' stacks, where argv and the environment are). Everything else becomes segments
// without file bytes, as a dumper that left pages out writes them. A 20 MB gcore of a Python
// process becomes a seed of a few hundred KB that still reads back to the same stacks.
//   make_core_seed CORE OUT
#include <elf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "pyframes/core.h"
#include "pyframes/layout.h"
#include "recording_memory.h"

namespace {

constexpr uint64_t kGrain = 64;        // kept ranges are rounded out to this
constexpr uint64_t kStackTop = 16384;  // bytes kept at the top of the main thread's stack

int fail(const std::string& what) {
  std::fprintf(stderr, "make_core_seed: %s\n", what.c_str());
  return 1;
}

std::vector<unsigned char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: make_core_seed CORE OUT");
  auto core = pyframes::Core::open(argv[1]);
  if (!core) return fail(core.error().message);
  RecordingMemory memory((*core)->memory(), kGrain);
  pyframes::ReadOptions options;
  options.resolve_file = (*core)->resolver();
  options.locals = true;
  options.globals = true;
  auto target = pyframes::locate_python(memory, (*core)->modules(), options);
  if (!target) return fail(target.error().message);
  auto layout = pyframes::select_layout(memory, *target);
  if (!layout) return fail(layout.error().message);
  auto stacks = pyframes::read_stacks(memory, *target, *layout, options);
  if (!stacks) return fail(stacks.error().message);

  std::vector<unsigned char> bytes = read_file(argv[1]);
  if (bytes.size() < sizeof(Elf64_Ehdr)) return fail("short core");
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, bytes.data(), sizeof ehdr);
  if (ehdr.e_phoff + uint64_t{ehdr.e_phnum} * sizeof(Elf64_Phdr) > bytes.size()) return fail("bad program headers");
  std::vector<Elf64_Phdr> phdrs(ehdr.e_phnum);
  std::memcpy(phdrs.data(), bytes.data() + ehdr.e_phoff, phdrs.size() * sizeof(Elf64_Phdr));

  // The tops of the threads' stacks: argv, envp and auxv strings are at the main thread's.
  for (const auto& thread : (*core)->info().threads) {
    for (const auto& p : phdrs) {
      if (p.p_type == PT_LOAD && thread.sp >= p.p_vaddr && thread.sp < p.p_vaddr + p.p_memsz) {
        uint64_t end = p.p_vaddr + p.p_filesz;
        memory.keep(end > kStackTop && end - kStackTop > p.p_vaddr ? end - kStackTop : p.p_vaddr, end);
      }
    }
  }
  auto kept = memory.merged(4 * kGrain);

  // New layout: header, program headers, notes, kept bytes.
  std::vector<Elf64_Phdr> out_phdrs;
  std::vector<std::pair<const Elf64_Phdr*, std::pair<uint64_t, uint64_t>>> pieces;  // (source, [start,end))
  for (const auto& p : phdrs) {
    if (p.p_type != PT_LOAD) {
      out_phdrs.push_back(p);
      continue;
    }
    uint64_t cursor = p.p_vaddr;
    uint64_t file_end = p.p_vaddr + p.p_filesz;
    for (const auto& [start, end] : kept) {
      uint64_t s = std::max(start, p.p_vaddr), e = std::min(end, file_end);
      if (s >= e) continue;
      if (s > cursor) {
        Elf64_Phdr gap = p;
        gap.p_vaddr = cursor;
        gap.p_memsz = s - cursor;
        gap.p_filesz = 0;
        out_phdrs.push_back(gap);
      }
      Elf64_Phdr piece = p;
      piece.p_vaddr = s;
      piece.p_memsz = piece.p_filesz = e - s;
      out_phdrs.push_back(piece);
      cursor = e;
    }
    if (cursor < p.p_vaddr + p.p_memsz) {
      Elf64_Phdr rest = p;
      rest.p_vaddr = cursor;
      rest.p_memsz = p.p_vaddr + p.p_memsz - cursor;
      rest.p_filesz = 0;
      out_phdrs.push_back(rest);
    }
  }
  std::vector<unsigned char> out(sizeof(Elf64_Ehdr) + out_phdrs.size() * sizeof(Elf64_Phdr));
  for (auto& p : out_phdrs) {
    if (p.p_filesz == 0) {
      p.p_offset = out.size();
      continue;
    }
    // Where the bytes were in the original: the original segment holding this address.
    const Elf64_Phdr* source = nullptr;
    for (const auto& q : phdrs) {
      if (q.p_type == p.p_type && p.p_vaddr >= q.p_vaddr && p.p_vaddr + p.p_filesz <= q.p_vaddr + q.p_filesz &&
          (q.p_type != PT_NOTE || q.p_offset == p.p_offset)) {
        source = &q;
        break;
      }
    }
    if (source == nullptr || source->p_offset + (p.p_vaddr - source->p_vaddr) + p.p_filesz > bytes.size()) {
      p.p_filesz = 0;
      p.p_offset = out.size();
      continue;
    }
    uint64_t from = source->p_offset + (p.p_vaddr - source->p_vaddr);
    while (out.size() % 8 != 0) out.push_back(0);
    p.p_offset = out.size();
    out.insert(out.end(), bytes.begin() + static_cast<long>(from), bytes.begin() + static_cast<long>(from + p.p_filesz));
  }
  ehdr.e_phoff = sizeof(Elf64_Ehdr);
  ehdr.e_phnum = static_cast<Elf64_Half>(out_phdrs.size());
  ehdr.e_shoff = 0;
  ehdr.e_shnum = 0;
  ehdr.e_shstrndx = 0;
  if (out_phdrs.size() >= PN_XNUM) return fail("too many segments for a seed");
  std::memcpy(out.data(), &ehdr, sizeof ehdr);
  std::memcpy(out.data() + sizeof ehdr, out_phdrs.data(), out_phdrs.size() * sizeof(Elf64_Phdr));
  std::ofstream file(argv[2], std::ios::binary);
  file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!file) return fail(std::string("cannot write ") + argv[2]);
  std::printf("%s: Python %s, %zu thread(s), %zu of %zu bytes kept\n", argv[2], target->version.str().c_str(),
              stacks->threads.size(), out.size(), bytes.size());
  return 0;
}
