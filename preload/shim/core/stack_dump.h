// The stall dump: this process's Python stacks, every thread, read through pyframes from our
// own memory (syscall mode: the other threads keep running; no ptrace needed, so it works
// where ptrace is forbidden) and written as text next to the ledger. It uses pyframes'
// allocation-free call-site API (thread states, code locations) rather than read_stacks,
// whose native-thread-id probe reads raw memory past pthread_self() and can fault inside a
// process that is not ours to crash.
#pragma once

#include <string>

namespace hangshim::shim {

class CallsiteCapture;

// Writes `path` (0600, O_NOFOLLOW, replacing an older dump). `headline` is the stall line.
// Without Python in the process, the file says so. Returns an empty string when the file was
// written, else why not ("No space left on device"); a partly written file is removed.
std::string write_python_stacks(const std::string& path, CallsiteCapture* callsites,
                                const std::string& headline) noexcept;

}  // namespace hangshim::shim
