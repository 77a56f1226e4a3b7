#include "engine.h"

#include "comm.h"
#include "errors.h"

#include <fmt/format.h>

#include <chrono>

namespace fakenccl {
namespace {

// With ops on several segments no single futex word covers all of them: poll at this interval.
constexpr std::chrono::milliseconds kMultiSegmentPoll{20};

}  // namespace

ncclResult_t run_ops(OpList& ops, const Deadline& deadline) {
  std::vector<bool> done(ops.size(), false);
  for (;;) {
    // Read the wake generation before looking at any state: a change after this read bumps it,
    // so the futex wait below cannot miss it.
    const Op* first_pending = nullptr;
    bool one_segment = true;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (done[i]) continue;
      if (first_pending == nullptr) first_pending = ops[i].get();
      else if (&ops[i]->comm()->segment != &first_pending->comm()->segment) one_segment = false;
    }
    if (first_pending == nullptr) return ncclSuccess;
    std::uint32_t* word = first_pending->comm()->segment.wake_word();
    const std::uint32_t generation = load_acquire(*word);

    bool advanced = false;
    bool pending = false;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (done[i]) continue;
      ncclComm* comm = ops[i]->comm();
      if (comm->aborted.load() || comm->revoked.load()) {
        return fail(ncclInvalidUsage, "fakenccl: {} on communicator {} rank {}: the communicator was "
                    "{} while the operation was in progress", ops[i]->describe(), comm->label, comm->rank,
                    comm->aborted.load() ? "aborted" : "revoked");
      }
      const Progress p = ops[i]->step();
      if (p == Progress::kDone) done[i] = true;
      if (p != Progress::kBlocked) advanced = true;
      if (p != Progress::kDone) pending = true;
    }
    if (!pending) return ncclSuccess;
    if (advanced) continue;

    if (deadline.expired()) {
      std::string message = fmt::format("fakenccl: timed out ({}): ", timeout_setting_text());
      bool first = true;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (done[i]) continue;
        ncclComm* comm = ops[i]->comm();
        message += fmt::format("{}{} on communicator {} rank {}/{}: {}", first ? "" : "; ",
                               ops[i]->describe(), comm->label, comm->rank, comm->nranks,
                               ops[i]->waiting_for());
        first = false;
        comm->async_error.store(ncclSystemError);
      }
      set_last_error(message);
      return ncclSystemError;
    }
    futex_wait(word, generation,
               deadline.remaining(one_segment ? std::nullopt
                                              : std::optional<std::chrono::nanoseconds>(kMultiSegmentPoll)));
  }
}

}  // namespace fakenccl
