#include "native/unwinder.h"

#include <libunwind.h>

#include <fmt/format.h>

#include <new>
#include <optional>
#include <string>
#include <unordered_map>

#include "native/eh_frame_table.h"
#include "native/page_cache.h"

// Exported by every libunwind since 1.0 but not declared in its headers; perf's libunwind
// support declares it the same way. It searches a remote .eh_frame_hdr table through the
// address space's accessors and fills the procedure info from the FDE it finds.
extern "C" int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t* di,
                                                  unw_proc_info_t* pi, int need_unwind_info, void* arg);

namespace pyframes::native {

struct Unwinder::State {
  State(const Memory& memory, ModuleCache& module_cache) : cache(memory), modules(module_cache) {}

  PageCache cache;
  ModuleCache& modules;
  unw_addr_space_t space = nullptr;
  const Registers* registers = nullptr;  // of the thread being unwound
  std::unordered_map<std::string, std::optional<EhFrameTable>> tables;  // by module path
  // The first code of the thread being unwound that has no unwind information: libunwind then
  // guesses from frame pointers, and what follows may be wrong or missing.
  std::string guessed;

  const EhFrameTable* table_for(uint64_t ip) {
    const Mapping* mapping = modules.modules().find(ip);
    if (mapping == nullptr || !is_file_mapping(*mapping)) {
      note_guess(mapping == nullptr        ? fmt::format("{:#x}, which is in no mapping", ip)
                 : mapping->path.empty() ? fmt::format("code at {:#x} in anonymous memory", ip)
                                         : mapping->path);  // [vdso]
      return nullptr;
    }
    auto [it, inserted] = tables.try_emplace(mapping->path);
    const LoadedModule* module = modules.module(mapping->path);
    if (inserted && module != nullptr) it->second = find_eh_frame_table(*module, cache);
    if (!it->second) {
      note_guess(module == nullptr ? mapping->path + ", whose file is not readable here"
                                   : mapping->path + ", which has no .eh_frame_hdr");
      return nullptr;
    }
    return &*it->second;
  }

  // Whether `address` can hold code: an executable mapping, or, where the memory map does not
  // say (gcore leaves read-only text out, so a core knows no permissions for it), a file
  // mapping whose ELF places code there; a file that is not readable here gets the benefit of
  // the doubt.
  bool is_code(uint64_t address) {
    const Mapping* mapping = modules.modules().find(address);
    if (mapping == nullptr) return false;
    if (mapping->executable) return true;
    if (!is_file_mapping(*mapping)) return false;
    const LoadedModule* module = modules.module(mapping->path);
    if (module == nullptr) return true;
    const uint64_t link_address = address - module->bias();
    for (const auto& segment : module->elf().segments()) {
      if (segment.executable && link_address >= segment.vaddr && link_address - segment.vaddr < segment.memsz) {
        return true;
      }
    }
    return false;
  }

  void note_guess(std::string what) {
    if (guessed.empty()) guessed = "no unwind information for " + std::move(what);
  }
};

namespace {

Unwinder::State& state_of(void* arg) { return *static_cast<Unwinder::State*>(arg); }

int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t* info, int need_unwind_info, void* arg) {
  try {
    const EhFrameTable* table = state_of(arg).table_for(ip);
    if (table == nullptr || ip < table->start_ip || ip >= table->end_ip) return -UNW_ENOINFO;
    unw_dyn_info_t dyn{};
    dyn.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    dyn.start_ip = table->start_ip;
    dyn.end_ip = table->end_ip;
    dyn.u.rti.segbase = table->header;
    dyn.u.rti.table_data = table->table;
    // In words: each entry is two int32 (initial location, FDE address), 8 bytes.
    dyn.u.rti.table_len = table->fde_count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(space, ip, &dyn, info, need_unwind_info, arg);
  } catch (const std::bad_alloc&) {
    return -UNW_ENOMEM;
  }
}

// The unwind info found above is libunwind's own (it frees it itself); nothing to release.
void put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) {}

// No dynamically registered unwind info (JIT compilers' _U_dyn_register) in remote targets.
int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

int access_mem(unw_addr_space_t, unw_word_t address, unw_word_t* value, int write, void* arg) {
  if (write != 0) return -UNW_EREADONLYREG;  // never change the target
  return state_of(arg).cache.read(address, value, sizeof *value) == ReadStatus::Ok ? 0 : -UNW_EINVAL;
}

int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void* arg) {
  if (write != 0) return -UNW_EREADONLYREG;
  const Registers* registers = state_of(arg).registers;
  if (registers == nullptr || reg < 0 || reg >= kUnwoundRegisters) return -UNW_EBADREG;
  *value = registers->values[static_cast<size_t>(reg)];
  return 0;
}

int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) { return -UNW_EBADREG; }

int resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }  // never run the target

// Names come from our own symbolizer (with demangling and separate debug files).
int get_proc_name(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

unw_accessors_t accessors() {
  unw_accessors_t a{};
  a.find_proc_info = find_proc_info;
  a.put_unwind_info = put_unwind_info;
  a.get_dyn_info_list_addr = get_dyn_info_list_addr;
  a.access_mem = access_mem;
  a.access_reg = access_reg;
  a.access_fpreg = access_fpreg;
  a.resume = resume;
  a.get_proc_name = get_proc_name;
  return a;
}

std::string unwind_error(const char* what, int code) { return fmt::format("{}: {}", what, unw_strerror(code)); }

}  // namespace

Unwinder::Unwinder(const Memory& memory, ModuleCache& modules) : state_(std::make_unique<State>(memory, modules)) {
  unw_accessors_t a = accessors();
  state_->space = unw_create_addr_space(&a, 0);
  // Caching by ip is safe: the address space lives for one dump of an unchanging target.
  if (state_->space != nullptr) unw_set_caching_policy(state_->space, UNW_CACHE_GLOBAL);
}

Unwinder::~Unwinder() {
  if (state_->space != nullptr) unw_destroy_addr_space(state_->space);
}

RawStack Unwinder::unwind(const Registers& registers, size_t max_frames) {
  RawStack stack;
  if (state_->space == nullptr) {
    stack.problem = "libunwind could not create an address space";
    return stack;
  }
  state_->registers = &registers;
  state_->guessed.clear();
  unw_cursor_t cursor;
  if (int rc = unw_init_remote(&cursor, state_->space, state_.get()); rc < 0) {
    stack.problem = unwind_error("cannot start unwinding", rc);
    state_->registers = nullptr;
    return stack;
  }
  bool caller_of_signal_frame = false;  // the previous (inner) frame was a signal trampoline
  unw_word_t previous_sp = 0;
  for (;;) {
    unw_word_t pc = 0, sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0) {
      stack.problem = "a frame's registers could not be recovered";
      break;
    }
    if (pc == 0) break;  // libunwind's end of the chain (undefined return address)
    // A guess from frame pointers can land anywhere; a caller's pc is always in code.
    if (!stack.frames.empty() && !state_->is_code(pc - (caller_of_signal_frame ? 0 : 1))) {
      stack.problem = fmt::format("unwinding left the code at {:#x}", pc);
      break;
    }
    // Each caller's frame lies above its callee's; only a signal frame may switch stacks
    // (a handler on sigaltstack).
    if (!stack.frames.empty() && ((sp < previous_sp && !caller_of_signal_frame) ||
                                  (sp == previous_sp && pc == stack.frames.back().pc))) {
      stack.problem = "the unwind went in circles (damaged stack or unwind information)";
      break;
    }
    if (stack.frames.size() >= max_frames) {
      stack.problem = fmt::format("native stack deeper than {} frames", max_frames);
      break;
    }
    // The frame a signal interrupted is at the interrupted instruction, not after a call.
    stack.frames.push_back(RawFrame{pc, !stack.frames.empty() && !caller_of_signal_frame});
    previous_sp = sp;
    const int step = unw_step(&cursor);
    // libunwind (x86-64) learns that a frame is a signal trampoline from its unwind info while
    // stepping out of it, and answers unw_is_signal_frame for that frame until the next step.
    // A trampoline's pc is where the handler "returns" to, its first instruction: not a call's
    // return address either.
    caller_of_signal_frame = unw_is_signal_frame(&cursor) > 0;
    if (caller_of_signal_frame) stack.frames.back().return_address = false;
    if (step == 0) break;  // the outermost frame
    if (step < 0) {
      stack.problem = unwind_error(fmt::format("unwinding stopped at {:#x}", pc).c_str(), step);
      break;
    }
  }
  if (!state_->guessed.empty()) {
    stack.problem = stack.problem.empty() ? state_->guessed : fmt::format("{}; {}", stack.problem, state_->guessed);
  }
  state_->registers = nullptr;
  return stack;
}

}  // namespace pyframes::native
