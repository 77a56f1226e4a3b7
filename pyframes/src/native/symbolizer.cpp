#include "native/symbolizer.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <optional>

#include "elf/build_id.h"
#include "native/merge_native.h"
#include "native/split_parts.h"

namespace pyframes::native {

namespace {

size_t leading_underscores(std::string_view name) {
  size_t n = 0;
  while (n < name.size() && name[n] == '_') ++n;
  return n;
}

// Of several names for one address (select, __select, __GI___select) the one people call:
// exported before local, fewer leading underscores, then the shorter.
bool preferred(const ElfFunction& a, const ElfFunction& b) {
  const bool a_exported = a.global || a.weak, b_exported = b.global || b.weak;
  if (a_exported != b_exported) return a_exported;
  if ((a.size != 0) != (b.size != 0)) return a.size != 0;
  const size_t a_under = leading_underscores(a.name), b_under = leading_underscores(b.name);
  if (a_under != b_under) return a_under < b_under;
  if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
  return a.name < b.name;
}

std::optional<std::string> build_id_hex(const std::string& local_path) {
  const int fd = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto id = core::build_id_of_file(fd);
  ::close(fd);
  if (!id || id->size() < 2) return std::nullopt;
  return core::hex(*id);
}

// The separate debug file with the full symbol table of a stripped file (Debian's -dbg and
// -dbgsym packages), found by build-id; nullptr when there is none.
std::unique_ptr<ElfFile> debug_file_for(const ElfFile& elf, const std::vector<std::string>& directories) {
  auto id = build_id_hex(elf.path());
  if (!id) return nullptr;
  for (const auto& directory : directories) {
    auto file = ElfFile::open(fmt::format("{}/.build-id/{}/{}.debug", directory, id->substr(0, 2), id->substr(2)));
    if (file && (*file)->has_symtab()) return std::move(file.value());
  }
  return nullptr;
}

// The parts GCC split off the evaluation loop, as local symbols named "NAME.cold" like the
// ones .symtab would have held; nothing for a part that starts at a symbol already known.
void add_split_parts(const ElfFile& elf, std::vector<ElfFunction>& symbols, std::deque<std::string>& names) {
  const auto loop = std::find_if(symbols.begin(), symbols.end(),
                                 [](const ElfFunction& f) { return f.name == kEvalLoopFunction && f.size != 0; });
  if (loop == symbols.end()) return;
  const ElfFunction function = *loop;
  for (const CodeRange& part : split_parts_of(elf, function.value, function.size)) {
    const bool named = std::any_of(symbols.begin(), symbols.end(),
                                   [&](const ElfFunction& f) { return f.value == part.start; });
    if (named) continue;
    names.push_back(fmt::format("{}.cold", function.name));
    symbols.push_back(ElfFunction{part.start, part.end - part.start, names.back(), false, false});
  }
}

}  // namespace

std::string demangle(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  const std::string mangled(name);
  int status = 0;
  char* plain = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || plain == nullptr) return mangled;
  std::string out(plain);
  std::free(plain);
  return out;
}

Symbolizer::Symbolizer(ModuleCache& modules, std::vector<std::string> debug_directories)
    : modules_(modules), debug_directories_(std::move(debug_directories)) {}

Symbolizer::~Symbolizer() = default;

const Symbolizer::Table& Symbolizer::table(const std::string& target_path, const LoadedModule& module) {
  auto [it, inserted] = tables_.try_emplace(target_path);
  Table& table = it->second;
  if (!inserted) return table;
  const ElfFile& elf = module.elf();
  std::vector<ElfFunction> symbols = elf.function_symbols(true);
  if (elf.has_symtab()) {
    std::vector<ElfFunction> full = elf.function_symbols(false);
    symbols.insert(symbols.end(), full.begin(), full.end());
  } else if ((table.debug_file = debug_file_for(elf, debug_directories_))) {
    // Same link, same addresses: the debug file's symbols apply with the module's bias.
    std::vector<ElfFunction> full = table.debug_file->function_symbols(false);
    symbols.insert(symbols.end(), full.begin(), full.end());
  }
  if (!elf.has_symtab() && !table.debug_file) add_split_parts(elf, symbols, table.split_names);
  std::sort(symbols.begin(), symbols.end(), [](const ElfFunction& a, const ElfFunction& b) {
    return a.value != b.value ? a.value < b.value : preferred(a, b);
  });
  table.functions.reserve(symbols.size());
  for (const ElfFunction& symbol : symbols) {
    if (!table.functions.empty() && table.functions.back().start == symbol.value) continue;
    table.functions.push_back(Function{symbol.value, symbol.size, symbol.name});
  }
  return table;
}

Frame Symbolizer::frame(const RawFrame& raw) {
  Frame frame;
  frame.kind = Frame::Kind::Native;
  frame.address = raw.pc;
  const uint64_t lookup = raw.return_address && raw.pc > 0 ? raw.pc - 1 : raw.pc;
  const Mapping* mapping = modules_.modules().find(lookup);
  if (mapping == nullptr) return frame;  // not in any mapping: the address is all there is
  frame.module = mapping->path;          // empty for anonymous memory (JIT code)
  const LoadedModule* module = is_file_mapping(*mapping) ? modules_.module(mapping->path) : nullptr;
  if (module == nullptr) {
    // No usable file: the offset into the mapped file is still what a person can look up.
    if (!mapping->path.empty()) frame.offset = raw.pc - mapping->start + mapping->file_offset;
    return frame;
  }
  frame.offset = raw.pc - module->bias();
  const uint64_t link_address = lookup - module->bias();
  const auto& functions = table(mapping->path, *module).functions;
  auto after = std::upper_bound(functions.begin(), functions.end(), link_address,
                                [](uint64_t address, const Function& f) { return address < f.start; });
  if (after == functions.begin()) return frame;
  const Function& function = *(after - 1);
  if (function.size != 0 && link_address - function.start >= function.size) return frame;  // between functions
  frame.function = demangle(function.name);
  return frame;
}

}  // namespace pyframes::native
