// What /proc says about a live process and its threads: executable, command line, launcher
// rank variables, thread names (comm) and scheduler states.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pyframes/model.h"

namespace pyframes {

// At most `max` bytes of a /proc file (their sizes are unknown until read); nullopt when it
// cannot be opened.
std::optional<std::string> read_proc_text(const std::string& path, size_t max = 1 << 20);

// The parent pid from /proc/PID/stat; nullopt when the process is gone.
std::optional<int64_t> proc_parent(int64_t pid);
std::string proc_executable(pid_t pid);
std::vector<std::string> proc_command_line(pid_t pid);
// A variable of the process's initial environment (RANK, LOCAL_RANK); nullopt when absent
// or unreadable.
std::optional<std::string> proc_environment_variable(pid_t pid, const std::string& name);
// RANK and LOCAL_RANK ("" when absent or unreadable) from one read of /proc/PID/environ (which
// can be large: every dump and every ancestor looked at reads it).
std::pair<std::string, std::string> proc_rank_and_local_rank(pid_t pid);
std::vector<pid_t> proc_thread_ids(pid_t pid);
std::optional<std::string> proc_thread_name(pid_t pid, pid_t tid);
// 'R', 'S', 'D', ... from /proc/PID/task/TID/stat; nullopt when the thread is gone.
std::optional<char> proc_thread_state(pid_t pid, pid_t tid);

// Fills the names of `process`'s threads from /proc where Python did not name them,
// and clears native ids that are not threads of `pid` (a libc whose struct pthread differs).
void add_proc_thread_details(pid_t pid, Process& process);

}  // namespace pyframes
