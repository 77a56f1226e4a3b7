// Naming native frames (native/symbolizer.h) against independent truth: the dynamic linker
// (dlsym, dladdr) in this process, and nm on the files of the machine's interpreters.
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "elf/build_id.h"
#include "file_memory.h"
#include "pyframes/proc_maps.h"
#include "native/eh_frame_table.h"
#include "native/symbolizer.h"
#include "nm_symbols.h"

using namespace pyframes;

namespace {

const char* const kStaticPython = "/usr/bin/python3.11";

// The static interpreter as if a process had mapped it: an executable (ET_EXEC) is loaded at
// its link-time addresses, so one mapping over its whole range stands for the real ones.
ModuleMap static_python_map() {
  Mapping mapping;
  mapping.start = 0x400000;
  mapping.end = 0x1000000;
  mapping.readable = mapping.executable = true;
  mapping.path = kStaticPython;
  return ModuleMap({mapping});
}

std::string debug_file_of(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto id = core::build_id_of_file(fd);
  ::close(fd);
  if (!id) return {};
  const std::string hex = core::hex(*id);
  return "/usr/lib/debug/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
}

}  // namespace

TEST_CASE("native symbols: demangling C++ names, plain names unchanged") {
  CHECK(native::demangle("_ZN11native_test7descendEii") == "native_test::descend(int, int)");
  CHECK(native::demangle("_ZNSt6vectorIiSaIiEE9push_backERKi") == "std::vector<int, std::allocator<int> >::push_back(int const&)");
  CHECK(native::demangle("pthread_cond_wait") == "pthread_cond_wait");
  CHECK(native::demangle("_Znot_mangled!") == "_Znot_mangled!");
}

TEST_CASE("native symbols: libc functions in this process, as the dynamic linker resolves them") {
  std::unique_ptr<void, int (*)(void*)> libc(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), dlclose);
  REQUIRE(libc);
  auto modules = read_proc_maps(getpid());
  REQUIRE(modules);
  native::ModuleCache cache(*modules, {});
  native::Symbolizer symbolizer(cache);
  for (const char* name : {"clock_nanosleep", "pthread_cond_wait", "read", "epoll_wait"}) {
    CAPTURE(name);
    const auto address = reinterpret_cast<uint64_t>(dlsym(libc.get(), name));
    REQUIRE(address != 0);
    Dl_info info{};
    REQUIRE(dladdr(reinterpret_cast<void*>(address), &info) != 0);
    const uint64_t base = reinterpret_cast<uint64_t>(info.dli_fbase);
    // The innermost frame at the first instruction, and a caller returning to the second byte.
    for (const native::RawFrame raw : {native::RawFrame{address, false}, native::RawFrame{address + 1, true}}) {
      const Frame frame = symbolizer.frame(raw);
      CHECK(frame.kind == Frame::Kind::Native);
      CHECK(frame.function == name);
      CHECK(frame.address == raw.pc);
      CHECK(frame.offset == raw.pc - base);
      CHECK(std::filesystem::path(frame.module).filename() == std::filesystem::path(info.dli_fname).filename());
    }
  }
  // Anonymous memory has no name and no file: the address is all there is.
  std::unique_ptr<char[]> heap(new char[1 << 20]);
  const Frame anonymous = symbolizer.frame({reinterpret_cast<uint64_t>(heap.get()), false});
  CHECK(anonymous.function.empty());
  CHECK(anonymous.address == reinterpret_cast<uint64_t>(heap.get()));
}

TEST_CASE("native symbols: a stripped executable names exported functions only, unless a debug file has the rest") {
  if (!std::filesystem::exists(kStaticPython)) {
    MESSAGE("no " << kStaticPython << ": skipped");
    return;
  }
  const auto exported = nm_symbols(kStaticPython, true);
  REQUIRE(exported.count("_PyEval_EvalFrameDefault") == 1);
  const uint64_t eval = exported.at("_PyEval_EvalFrameDefault").value;
  const ModuleMap map = static_python_map();
  native::ModuleCache cache(map, {});
  native::Symbolizer dynsym_only(cache, {});  // no debug directories
  const Frame eval_frame = dynsym_only.frame({eval + 0x40, true});
  CHECK(eval_frame.function == "_PyEval_EvalFrameDefault");
  CHECK(eval_frame.module == kStaticPython);
  CHECK(eval_frame.offset == eval + 0x40);  // ET_EXEC: link-time address = run-time address

  const std::string debug_file = debug_file_of(kStaticPython);
  if (debug_file.empty() || !std::filesystem::exists(debug_file)) {
    MESSAGE("no debug file for " << kStaticPython << ": the debug-file half is skipped");
    return;
  }
  // time.sleep's C function, static (an LTO build names it time_sleep.lto_priv.0): only the
  // debug file knows it.
  std::string sleep_name;
  uint64_t sleep = 0;
  for (const auto& [name, symbol] : nm_symbols(debug_file, false)) {
    if (name.substr(0, name.find('.')) == "time_sleep") sleep_name = name, sleep = symbol.value;
  }
  REQUIRE(!sleep_name.empty());
  REQUIRE(exported.count(sleep_name) == 0);
  const Frame unknown = dynsym_only.frame({sleep + 4, true});
  CHECK(unknown.function.empty());
  CHECK(unknown.offset == sleep + 4);
  native::Symbolizer with_debug(cache);
  CHECK(with_debug.frame({sleep + 4, true}).function == sleep_name);
}

TEST_CASE("native symbols: every libpython and the static interpreter have a searchable unwind table") {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& version : std::filesystem::directory_iterator(HANGSHIM_PYENV_VERSIONS, ec)) {
    for (const auto& file : std::filesystem::directory_iterator(version.path() / "lib", ec)) {
      const std::string name = file.path().filename().string();
      if (name.rfind("libpython3.", 0) == 0 && name.find(".so.1.0") != std::string::npos) files.push_back(file.path());
    }
  }
  if (std::filesystem::exists(kStaticPython)) files.push_back(kStaticPython);
  REQUIRE_FALSE(files.empty());
  for (const auto& path : files) {
    CAPTURE(path);
    auto elf = ElfFile::open(path);
    REQUIRE(elf);
    Mapping mapping;
    mapping.path = path;
    for (const auto& segment : (*elf)->segments()) {
      if (segment.offset == 0) mapping.start = segment.vaddr, mapping.end = segment.vaddr + segment.memsz;
    }
    auto module = LoadedModule::open(ModuleMap({mapping}), path, {});
    REQUIRE(module);
    FileMemory image(module->elf());  // the file's bytes where a process maps them
    const auto table = native::find_eh_frame_table(*module, image);
    REQUIRE(table);
    const ElfSection* hdr = module->elf().section(".eh_frame_hdr");
    REQUIRE(hdr != nullptr);
    CHECK(table->header == hdr->address + module->bias());
    // header (4 bytes), eh_frame_ptr and fde_count (4 each), then fde_count 8-byte entries.
    CHECK(table->table == table->header + 12);
    CHECK(12 + table->fde_count * 8 == hdr->size);
    CHECK(table->start_ip < table->end_ip);
  }
}

// The one header parser that both the target's memory and split_parts.cpp read through: the
// real header of the static interpreter, then the same bytes cut or altered.
TEST_CASE("native symbols: .eh_frame_hdr's header parsed from bytes, cut and altered headers refused") {
  if (!std::filesystem::exists(kStaticPython)) return;  // the libpython case above covers the rest
  auto elf = ElfFile::open(kStaticPython);
  REQUIRE(elf);
  const ElfSection* hdr = (*elf)->section(".eh_frame_hdr");
  REQUIRE(hdr != nullptr);
  const std::string bytes((*elf)->bytes_at(hdr->address, hdr->size));
  REQUIRE(bytes.size() == hdr->size);
  const auto header = native::parse_eh_frame_header(bytes);
  REQUIRE(header);
  CHECK(header->size == 12);  // GCC's and binutils' encodings: sdata4 eh_frame_ptr, udata4 count
  CHECK(header->size + header->fde_count * 8 == hdr->size);

  for (size_t cut = 0; cut < header->size; ++cut) {
    CAPTURE(cut);
    CHECK_FALSE(native::parse_eh_frame_header(std::string_view(bytes).substr(0, cut)));
  }
  auto altered = [&](size_t at, char value) {
    std::string copy = bytes.substr(0, header->size);
    copy[at] = value;
    return native::parse_eh_frame_header(copy);
  };
  CHECK_FALSE(altered(0, 2));           // version 2
  CHECK_FALSE(altered(3, 0x03));        // udata4 table: not data-relative
  CHECK_FALSE(altered(2, char(0xff)));  // no count
  CHECK_FALSE(altered(2, 0x13));        // a pc-relative count
  {
    std::string copy = bytes.substr(0, header->size);
    copy[2] = 0x0b;  // an sdata4 count, as the real one: the same count ...
    const auto same = native::parse_eh_frame_header(copy);
    REQUIRE(same);
    CHECK(same->fde_count == header->fde_count);
    copy[11] = char(0x80);  // ... this one negative ...
    CHECK_FALSE(native::parse_eh_frame_header(copy));
    copy[11] = 0x7f;  // ... this one too large to trust
    CHECK_FALSE(native::parse_eh_frame_header(copy));
    copy[8] = 5, copy[9] = copy[10] = copy[11] = 0;  // ... and this one is 5
    const auto five = native::parse_eh_frame_header(copy);
    REQUIRE(five);
    CHECK(five->fde_count == 5);
  }
  {
    // A udata2 count after an 8-byte eh_frame_ptr: the count's place follows the encodings.
    std::string copy = bytes.substr(0, 4) + std::string(8, '\0') + std::string("\x03\x00", 2);
    copy[1] = 0x04, copy[2] = 0x02;
    const auto three = native::parse_eh_frame_header(copy);
    REQUIRE(three);
    CHECK(three->size == 14);
    CHECK(three->fde_count == 3);
  }
}
