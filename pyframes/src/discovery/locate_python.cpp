// locate_python: which module holds CPython, which version it is, and where its runtime is.
// Candidates, in order: libpython*.so, files named python*, then the executable (an embedding
// program linked statically against libpython). Symbols first (_PyRuntime, Py_Version,
// interp_head and _PyThreadState_Current for 3.6), else a scan of the module's data.
#include <fmt/format.h>

#include "discovery/runtime_scan.h"
#include "discovery/version_detect.h"
#include "elf/loaded_module.h"
#include "layout/debug_offsets.h"
#include "layout/layout_tables.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "pyframes/versions.h"

namespace pyframes {

namespace {

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_libpython(const std::string& name) { return name.rfind("libpython", 0) == 0 && name.find(".so") != std::string::npos; }

// Candidate modules in the order they are tried, each with whether its name says "Python".
std::vector<std::pair<std::string, bool>> candidates(const ModuleMap& modules) {
  std::vector<std::pair<std::string, bool>> out;
  auto files = modules.files();
  for (const auto& f : files) {
    if (is_libpython(basename_of(f))) out.emplace_back(f, true);
  }
  for (const auto& f : files) {
    std::string name = basename_of(f);
    if (name.rfind("python", 0) == 0) out.emplace_back(f, true);
  }
  if (!files.empty() && out.end() == std::find_if(out.begin(), out.end(), [&](auto& c) { return c.first == files[0]; })) {
    out.emplace_back(files[0], false);  // the executable is mapped first
  }
  return out;
}

// The runtime symbols of one module, in one pass over .dynsym and, only when _PyRuntime is
// not exported (3.6, or a build that hides it), one over .symtab. Py_Version is always
// exported where it exists (3.11+).
struct RuntimeSymbols {
  std::optional<ElfSymbol> runtime, version, interp_head, tstate_current;
};

RuntimeSymbols find_runtime_symbols(const ElfFile& elf) {
  constexpr std::string_view kNames[] = {"_PyRuntime", "Py_Version", "interp_head", "_PyThreadState_Current"};
  std::optional<ElfSymbol> found[4];
  elf.find_symbols(kNames, found, true);
  if (!found[0]) elf.find_symbols(kNames, found, false);
  return RuntimeSymbols{found[0], found[1], found[2], found[3]};
}

std::optional<uint32_t> read_py_version(const Memory& memory, const LoadedModule& module,
                                        const std::optional<ElfSymbol>& sym) {
  if (!sym) return std::nullopt;
  if (auto value = memory.read_value<uint32_t>(sym->value + module.bias())) return *value;
  std::string_view bytes = module.elf().bytes_at(sym->value, 4);  // a core may lack the page
  if (bytes.size() != 4) return std::nullopt;
  uint32_t value;
  std::memcpy(&value, bytes.data(), 4);
  return value;
}

// Fills version and symbol addresses from one module; false when it is not CPython.
bool inspect_module(const Memory& memory, const LoadedModule& module, bool named_python, const ReadOptions& options,
                    PythonTarget& target) {
  target = PythonTarget{};
  target.python_module = module.target_path();
  target.data_ranges = module.writable_data();
  RuntimeSymbols symbols;
  if (options.use_symbols) {
    symbols = find_runtime_symbols(module.elf());
    if (symbols.runtime) {
      target.runtime_address = symbols.runtime->value + module.bias();
    } else {
      if (symbols.interp_head) target.interp_head_address = symbols.interp_head->value + module.bias();
      if (symbols.tstate_current) target.tstate_current_address = symbols.tstate_current->value + module.bias();
    }
  }
  bool has_runtime_symbol =
      target.runtime_address != 0 || target.interp_head_address != 0 || target.tstate_current_address != 0;
  if (!has_runtime_symbol && !named_python) return false;

  auto from_name = version_from_filename(module.target_path());
  if (auto hex = read_py_version(memory, module, symbols.version); hex && (*hex >> 24) == 3) {
    target.version = version_from_hex(*hex);
  } else if (target.runtime_address != 0 && read_debug_offsets_version(memory, target.runtime_address)) {
    target.version = version_from_hex(*read_debug_offsets_version(memory, target.runtime_address));
  } else if (auto from_rodata = version_from_rodata(module.elf(), from_name)) {
    target.version = *from_rodata;
  } else if (from_name) {
    target.version = *from_name;
  } else if (target.tstate_current_address != 0 && target.runtime_address == 0) {
    target.version = PyVersion{3, 6, -1, 0};  // only 3.6 has _PyThreadState_Current without _PyRuntime
  }
  // A module named python* without any runtime symbol is a candidate for the scan only if
  // its version is known.
  return has_runtime_symbol || target.version.major != 0;
}

Error not_python(const Memory& memory, const ModuleMap& modules, const std::string& detail) {
  auto files = modules.files();
  std::string executable = files.empty() ? std::string("no executable mapped") : files[0];
  return make_error(ErrorKind::NotPython,
                    fmt::format("{} ({}) is not a CPython process: {}", memory.describe(), executable, detail),
                    "point pyframes at the Python process itself (for launchers, at their children)");
}

}  // namespace

Result<PythonTarget> locate_python(const Memory& memory, const ModuleMap& modules, const ReadOptions& options) {
  std::optional<Error> first_error;
  for (const auto& [path, named_python] : candidates(modules)) {
    auto module = LoadedModule::open(modules, path, options.resolve_file);
    if (!module) {
      if (named_python && !first_error) first_error = module.take_error();
      continue;
    }
    PythonTarget target;
    if (!inspect_module(memory, *module, named_python, options, target)) continue;
    if (target.version.major == 2 || (target.version.major == 3 && target.version.minor < kOldestCPythonMinor)) {
      return make_error(ErrorKind::UnsupportedVersion,
                        fmt::format("{} runs CPython {} ({}), which pyframes does not read", memory.describe(),
                                    target.version.str(), path),
                        "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST);
    }
    bool located = target.runtime_address != 0 || target.interp_head_address != 0;
    if (!located) {
      const GeneratedLayout* table = find_generated_layout(target.version.major, target.version.minor);
      if (table == nullptr && !target.version.at_least(3, 13)) continue;
      Layout layout;
      layout.version = target.version;
      (table != nullptr ? *table : kGeneratedLayouts[kGeneratedLayoutCount - 1]).fill(layout);
      auto scanned = scan_for_runtime(memory, modules, layout, target);
      if (!scanned) {
        if (!first_error) first_error = scanned.take_error();
        continue;
      }
      if (target.version.at_least(3, 13)) {
        if (auto hex = read_debug_offsets_version(memory, target.runtime_address)) {
          target.version = version_from_hex(*hex);
        }
      }
    }
    return target;
  }
  if (first_error) return *first_error;
  return not_python(memory, modules, "no libpython and no _PyRuntime or interp_head symbol");
}

}  // namespace pyframes
