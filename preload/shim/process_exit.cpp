// A process that leaves through _exit() runs no exit handlers: multiprocessing children and
// mp.spawn workers end with os._exit(0), and without this their ledgers read as killed or
// crashed. The shim exports _exit and _Exit, marks its ledger exited (as the atexit handler does)
// and then ends the process exactly as libc's _exit does: exit_group(status).
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/core/recorder.h"
#include "shim/wrappers.h"

namespace {

[[noreturn]] void leave(int status) noexcept {
  if (auto* r = hangshim::shim::Recorder::existing()) r->on_exit();
  for (;;) ::syscall(SYS_exit_group, status);
}

}  // namespace

HANGSHIM_EXPORT __attribute__((noreturn)) void _exit(int status) { leave(status); }
HANGSHIM_EXPORT __attribute__((noreturn)) void _Exit(int status) noexcept { leave(status); }
