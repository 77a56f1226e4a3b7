// ELF symbol lookup, load bias and version detection on the real interpreters of this machine,
// against independent truth: nm's output captured at test time, and dlsym in this process
// after dlopen of a libpython.
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include "discovery/version_detect.h"
#include "elf/elf_file.h"
#include "elf/loaded_module.h"
#include "pyframes/proc_maps.h"
#include "nm_symbols.h"
#include "python_process.h"
#include "run_program.h"

using namespace pyframes;

namespace {

std::vector<std::string> python_binaries() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& version : std::filesystem::directory_iterator(HANGSHIM_PYENV_VERSIONS, ec)) {
    if (version.path().filename().string().rfind("3.", 0) != 0) continue;
    for (const auto& file : std::filesystem::directory_iterator(version.path() / "lib", ec)) {
      std::string name = file.path().filename().string();
      if (name.rfind("libpython3.", 0) == 0 && name.size() > 7 && name.substr(name.size() - 7) == ".so.1.0") {
        out.push_back(file.path().string());
      }
    }
  }
  if (std::filesystem::exists("/usr/bin/python3.11")) out.push_back("/usr/bin/python3.11");
  return out;
}

}  // namespace

TEST_CASE("ELF symbols match nm on every interpreter binary") {
  auto binaries = python_binaries();
  if (binaries.empty() || test_support::run_program({"nm", "--version"}) != 0) {
    MESSAGE("no interpreter binaries or no nm: skipped");
    return;
  }
  for (const auto& path : binaries) {
    CAPTURE(path);
    auto elf = ElfFile::open(path);
    REQUIRE_MESSAGE(elf.ok(), elf.error().message);
    auto dynamic = nm_symbols(path, true);
    auto full = nm_symbols(path, false);
    REQUIRE(!dynamic.empty());
    CHECK((*elf)->has_symtab() == !full.empty());
    int checked = 0;
    for (const char* name : {"_PyRuntime", "Py_Version", "interp_head", "_PyThreadState_Current", "PyEval_EvalFrameDefault",
                             "_PyEval_EvalFrameDefault", "Py_Initialize"}) {
      CAPTURE(name);
      auto ours = (*elf)->find_symbol(name);
      auto in_dynamic = dynamic.find(name);
      auto in_full = full.find(name);
      if (in_dynamic == dynamic.end() && in_full == full.end()) {
        CHECK_FALSE(ours.has_value());
        continue;
      }
      REQUIRE(ours.has_value());
      const NmSymbol& truth = in_dynamic != dynamic.end() ? in_dynamic->second : in_full->second;
      CHECK(ours->value == truth.value);
      CHECK(ours->from_dynsym == (in_dynamic != dynamic.end()));
      CHECK(ours->global == (std::isupper(static_cast<unsigned char>(truth.type)) != 0));
      ++checked;
    }
    CHECK(checked >= 2);  // every CPython 3 has Py_Initialize and a runtime symbol
  }
}

TEST_CASE("load bias: symbol addresses equal dlsym after dlopen") {
  const char* candidates[] = {HANGSHIM_PYENV_VERSIONS "/3.12.1/lib/libpython3.12.so.1.0",
                              HANGSHIM_PYENV_VERSIONS "/3.9.18/lib/libpython3.9.so.1.0"};
  int tested = 0;
  for (const char* path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    CAPTURE(path);
    void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    REQUIRE_MESSAGE(handle != nullptr, dlerror());
    auto modules = read_proc_maps(getpid());
    REQUIRE(modules.ok());
    // The map names the file by its real path.
    std::string mapped = std::filesystem::canonical(path).string();
    auto module = LoadedModule::open(*modules, mapped, {});
    REQUIRE_MESSAGE(module.ok(), module.error().message);
    for (const char* name : {"_PyRuntime", "Py_Initialize", "PyFrame_GetLineNumber"}) {
      CAPTURE(name);
      void* truth = dlsym(handle, name);
      REQUIRE(truth != nullptr);
      CHECK(module->symbol_address(name).value_or(0) == reinterpret_cast<uint64_t>(truth));
    }
    // _PyRuntime lies in the module's writable data.
    uint64_t runtime = reinterpret_cast<uint64_t>(dlsym(handle, "_PyRuntime"));
    bool inside = false;
    for (const auto& range : module->writable_data()) inside = inside || range.contains(runtime);
    CHECK(inside);
    dlclose(handle);
    ++tested;
  }
  if (tested == 0) MESSAGE("no libpython to dlopen: skipped");
}

TEST_CASE("version detection: file names and the PY_VERSION string in .rodata") {
  CHECK(version_from_filename("/x/libpython3.11.so.1.0")->minor == 11);
  CHECK(version_from_filename("libpython3.6m.so")->minor == 6);
  CHECK(version_from_filename("/usr/bin/python3.12")->minor == 12);
  CHECK_FALSE(version_from_filename("/usr/lib/libc.so.6").has_value());
  CHECK_FALSE(version_from_filename("/usr/bin/python3").has_value());  // no minor version
  CHECK(version_from_hex(0x030B07F0).str() == "3.11.7");

  for (const auto& path : python_binaries()) {
    CAPTURE(path);
    auto elf = ElfFile::open(path);
    REQUIRE(elf.ok());
    auto hint = version_from_filename(path);
    auto found = version_from_rodata(**elf, hint);
    REQUIRE(found.has_value());
    std::string installed = test_support::pyenv_version_of(path);
    if (!installed.empty()) {
      CHECK(found->str() == installed);  // pyenv installs under the full version
    } else {
      CHECK(found->minor == hint->minor);
      CHECK(found->micro >= 0);
    }
  }
}

TEST_CASE("ELF files: a FIFO or a directory is refused at once, never waited on") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pyframes-elf-fifo-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "libpython3.11.so").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, dir.string()}) {
    auto opened = ElfFile::open(path);  // with no writer, a blocking open of the FIFO never returns
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().message.find("not a regular file") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
