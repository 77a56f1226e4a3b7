#include "core/initial_stack.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "text/split.h"

namespace pyframes::core {

namespace {

constexpr size_t kChunk = 64 * 1024;
constexpr size_t kMaxStackScan = 64ull << 20;  // the initial stack sits at the top; bound the search
constexpr uint64_t kMaxArgs = 1 << 20;         // more than ARG_MAX allows; bounds a damaged stack
constexpr size_t kMaxString = 128 * 1024;      // MAX_ARG_STRLEN
constexpr size_t kMaxTotal = 4u << 20;

// Where the auxv bytes start in `segment`, searching downwards from its top (8-byte aligned).
std::optional<uint64_t> find_auxv(const Memory& memory, const Segment& segment,
                                  const std::vector<unsigned char>& needle) {
  uint64_t dumped_end = segment.vaddr + segment.filesz;
  uint64_t lowest = segment.filesz > kMaxStackScan ? dumped_end - kMaxStackScan : segment.vaddr;
  std::vector<unsigned char> buffer(kChunk + needle.size());
  for (uint64_t top = dumped_end; top > lowest;) {
    uint64_t start = top - std::min<uint64_t>(kChunk, top - lowest);
    size_t length = static_cast<size_t>(std::min<uint64_t>(dumped_end - start, kChunk + needle.size()));
    if (memory.read(start, buffer.data(), length) != ReadStatus::Ok) return std::nullopt;
    for (size_t i = (length >= needle.size() ? length - needle.size() : 0) & ~size_t{7};; i -= 8) {
      if (i + needle.size() <= length && std::memcmp(buffer.data() + i, needle.data(), needle.size()) == 0)
        return start + i;
      if (i < 8) break;
    }
    top = start;
  }
  return std::nullopt;
}

std::optional<std::vector<std::string>> read_strings(const Memory& memory, const std::vector<uint64_t>& pointers) {
  std::vector<std::string> out;
  size_t total = 0;
  for (uint64_t pointer : pointers) {
    auto text = memory.read_c_string(pointer, kMaxString);
    if (!text) return std::nullopt;
    total += text->size();
    if (total > kMaxTotal) return std::nullopt;
    out.push_back(std::move(*text));
  }
  return out;
}

}  // namespace

std::optional<InitialStack> read_initial_stack(const Memory& memory, const CoreFile& core, const Note& auxv_note) {
  auto auxv = decode_auxv(auxv_note);
  auto execfn = aux_value(auxv, AT_EXECFN);
  if (!execfn || auxv.size() < 3) return std::nullopt;
  const Segment* stack = core.find_segment(*execfn);
  if (stack == nullptr || stack->filesz == 0) return std::nullopt;

  size_t needle_size = std::min<size_t>(auxv_note.desc.size(), (auxv.size() + 1) * 16);
  std::vector<unsigned char> needle(auxv_note.desc.begin(), auxv_note.desc.begin() + static_cast<long>(needle_size));
  auto at = find_auxv(memory, *stack, needle);
  if (!at) return std::nullopt;

  auto word = [&](uint64_t address) { return memory.read_value<uint64_t>(address); };
  auto in_stack = [&](uint64_t address) { return stack->contains(address); };
  // Backwards from the vector: NULL, envp[n-1..0], NULL, argv[argc-1..0], argc.
  uint64_t cursor = *at - 8;
  if (word(cursor).value_or(1) != 0) return std::nullopt;
  std::vector<uint64_t> env_pointers;
  for (cursor -= 8;; cursor -= 8) {
    auto value = word(cursor);
    if (!value || env_pointers.size() > kMaxArgs) return std::nullopt;
    if (*value == 0) break;
    if (!in_stack(*value)) return std::nullopt;
    env_pointers.push_back(*value);
  }
  std::vector<uint64_t> arg_pointers;
  for (cursor -= 8;; cursor -= 8) {
    auto value = word(cursor);
    if (!value || arg_pointers.size() > kMaxArgs) return std::nullopt;
    if (*value == arg_pointers.size()) break;  // argc
    if (!in_stack(*value)) return std::nullopt;
    arg_pointers.push_back(*value);
  }
  std::reverse(env_pointers.begin(), env_pointers.end());
  std::reverse(arg_pointers.begin(), arg_pointers.end());
  auto argv = read_strings(memory, arg_pointers);
  auto envp = read_strings(memory, env_pointers);
  if (!argv || argv->empty()) return std::nullopt;
  InitialStack out;
  out.argv = std::move(*argv);
  if (envp) out.envp = std::move(*envp);
  return out;
}

std::vector<std::string> split_psargs(const std::string& psargs) {
  return pyframes::text::split(psargs, ' ', false);
}

}  // namespace pyframes::core
