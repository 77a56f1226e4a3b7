// Core::open: the core file, its notes, its module map, and the memory over both, wired
// together; what the notes say about the process is decoded once here.
#include <elf.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core_file.h"
#include "core/core_memory.h"
#include "core/core_notes.h"
#include "core/initial_stack.h"
#include "core/mapped_files.h"
#include "pyframes/core.h"

namespace pyframes {

struct Core::State {
  core::CoreFile file;
  ModuleMap modules;
  CoreInfo info;
  std::unique_ptr<core::CoreMemory> memory;
  std::unique_ptr<core::MappedFiles> files;
  std::vector<std::string> warnings;  // about the core itself; file warnings live in `files`
};

namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Checks --exe and --root; a --lib-search entry that is not a directory is dropped with a warning
// (as pystack does): the other places may still hold the files.
Result<CoreOptions> check_options(const CoreOptions& options, std::vector<std::string>* warnings) {
  if (options.executable && ::access(options.executable->c_str(), R_OK) != 0) {
    return make_error(ErrorKind::NotFound, fmt::format("--exe {}: no readable file there", *options.executable),
                      "pass the path of the program the core was dumped from");
  }
  CoreOptions checked = options;
  checked.lib_search.clear();
  for (const auto& dir : options.lib_search) {
    if (is_directory(dir)) {
      checked.lib_search.push_back(dir);
    } else {
      warnings->push_back(fmt::format("--lib-search {}: not a directory, skipped (pass directories holding copies "
                                      "of the core's executable and libraries)",
                                      dir));
    }
  }
  if (!options.root.empty() && !is_directory(options.root)) {
    return make_error(ErrorKind::Usage, fmt::format("--root {}: not a directory", options.root),
                      "pass the directory the target's file system is visible under, e.g. /proc/PID/root");
  }
  return checked;
}

const core::Note* find_note(const std::vector<core::Note>& notes, uint32_t type) {
  for (const auto& note : notes) {
    if (note.type == type && note.name == "CORE") return &note;
  }
  return nullptr;
}

// The program: the file mapped at AT_ENTRY; else the AT_EXECFN string; else the comm name.
std::string find_executable(const std::vector<core::FileMapping>& files, const std::vector<core::AuxEntry>& auxv,
                            const core::CoreMemory& memory, const std::string& comm) {
  if (auto entry = core::aux_value(auxv, AT_ENTRY)) {
    for (const auto& file : files) {
      if (*entry >= file.start && *entry < file.end) return file.path;
    }
  }
  if (auto execfn = core::aux_value(auxv, AT_EXECFN)) {
    if (auto name = memory.read_c_string(*execfn, 4096); name && !name->empty()) return *name;
  }
  return comm;
}

std::optional<CoreSignal> fatal_signal(const std::vector<CoreThread>& threads,
                                       const std::optional<CoreSignal>& siginfo) {
  // A kernel dump records the killing signal as pr_cursig of the dumping thread; `gcore` of a
  // running process records none (its NT_SIGINFO is the SIGSTOP of the attach).
  for (const auto& thread : threads) {
    if (thread.current_signal == 0) continue;
    if (siginfo && siginfo->number == thread.current_signal) return siginfo;
    CoreSignal signal;
    signal.number = thread.current_signal;
    return signal;
  }
  return std::nullopt;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) {
    if (!out.empty()) out += ' ';
    out += arg;
  }
  return out;
}

}  // namespace

Core::Core(std::unique_ptr<State> state) : state_(std::move(state)) {}
Core::~Core() = default;

Result<std::unique_ptr<Core>> Core::open(const std::string& path, const CoreOptions& given) {
  std::vector<std::string> option_warnings;
  PYFRAMES_TRY(options, check_options(given, &option_warnings));
  PYFRAMES_TRY(file, core::CoreFile::open(path));
  auto state = std::make_unique<State>();
  state->file = std::move(file);
  const auto& notes = state->file.notes();
  CoreInfo& info = state->info;
  info.machine = state->file.machine();
  info.core_size = state->file.size();
  info.missing_bytes = state->file.missing_bytes();
  info.gzip = state->file.gzip();
  state->warnings = std::move(option_warnings);
  for (auto& warning : state->file.warnings()) state->warnings.push_back(std::move(warning));

  std::optional<CoreSignal> siginfo;
  std::optional<core::PsInfo> psinfo;
  std::vector<core::FileMapping> files;
  bool has_nt_file = false;
  for (const auto& note : notes) {
    if (auto thread = core::decode_prstatus(note, info.machine)) info.threads.push_back(std::move(*thread));
    if (auto decoded = core::decode_prpsinfo(note)) psinfo = decoded;
    if (auto decoded = core::decode_siginfo(note)) siginfo = decoded;
    if (note.type == 0x46494c45 && note.name == "CORE") {
      has_nt_file = true;
      files = core::decode_nt_file(note);
    }
  }
  if (info.threads.empty() && !has_nt_file) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{} has no thread or mapped-file notes; it is not a process core", path),
                      "pass a core written by gcore or by the kernel");
  }
  const core::Note* auxv_note = find_note(notes, NT_AUXV);
  std::vector<core::AuxEntry> auxv = auxv_note ? core::decode_auxv(*auxv_note) : std::vector<core::AuxEntry>{};

  if (psinfo) {
    info.pid = psinfo->pid;
    info.ppid = psinfo->ppid;
    info.short_name = psinfo->fname;
  } else if (!info.threads.empty()) {
    info.pid = info.threads.front().tid;
  }
  info.fatal_signal = fatal_signal(info.threads, siginfo);
  if (info.fatal_signal) info.fatal_signal->process_pid = info.pid;

  std::vector<core::PseudoName> pseudo;
  if (auto execfn = core::aux_value(auxv, AT_EXECFN)) pseudo.push_back({*execfn, "[stack]"});
  if (auto vdso = core::aux_value(auxv, AT_SYSINFO_EHDR)) pseudo.push_back({*vdso, "[vdso]"});
  state->modules = core::build_module_map(files, state->file.segments(), pseudo);

  state->memory = std::make_unique<core::CoreMemory>(state->file, state->modules, nullptr);
  info.executable = find_executable(files, auxv, *state->memory, info.short_name);
  const core::CoreMemory* memory = state->memory.get();
  state->files = std::make_unique<core::MappedFiles>(
      state->modules,
      [memory](uint64_t address, void* out, size_t size) {
        return memory->read_dumped(address, out, size) == ReadStatus::Ok;
      },
      info.executable, options);
  state->memory->set_files(state->files.get());

  std::optional<core::InitialStack> stack;
  if (auxv_note) stack = core::read_initial_stack(*state->memory, state->file, *auxv_note);
  // pr_psargs is what `ps` showed at dump time; a stack that disagrees was rewritten (setproctitle).
  if (stack && (!psinfo || join_args(stack->argv).compare(0, psinfo->psargs.size(), psinfo->psargs) == 0)) {
    info.command_line = std::move(stack->argv);
    info.environment = std::move(stack->envp);
  } else if (psinfo) {
    info.command_line = core::split_psargs(psinfo->psargs);
  }

  if (info.missing_bytes > 0) {
    state->warnings.push_back(
        fmt::format("{} is truncated: {} bytes missing at its end (of {}); memory stored there is "
                    "unreadable",
                    path, info.missing_bytes, info.core_size + info.missing_bytes));
  }
  if (!has_nt_file) {
    state->warnings.push_back(
        fmt::format("{} has no NT_FILE note (kernel older than 3.7?): mapped files are unknown", path));
  }
  return std::unique_ptr<Core>(new Core(std::move(state)));
}

const std::string& Core::path() const { return state_->file.path(); }
const CoreInfo& Core::info() const { return state_->info; }
const Memory& Core::memory() const { return *state_->memory; }
const ModuleMap& Core::modules() const { return state_->modules; }

FileResolver Core::resolver() const {
  const core::MappedFiles* files = state_->files.get();
  return [files](const std::string& target_path) {
    const core::LocalFile* file = files->find(target_path);
    return file ? file->path : std::string();
  };
}

std::vector<std::string> Core::warnings() const {
  std::vector<std::string> out = state_->warnings;
  for (auto& warning : state_->files->warnings()) out.push_back(std::move(warning));
  return out;
}

std::vector<UnusableFile> Core::unusable_files() const { return state_->files->unusable(); }

}  // namespace pyframes
