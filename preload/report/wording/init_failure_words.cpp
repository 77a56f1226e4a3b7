#include "report/wording/init_failure_words.h"

#include <set>

#include <fmt/format.h>

#include "report/analysis/rank_ranges.h"
#include "report/wording/phrases.h"

namespace hangshim::report {

namespace {

// "ncclCommInitRank returned ncclUnhandledCudaError: "Cuda failure '...'""
std::string failure_text(const InitFailure& failure) {
  std::string out = fmt::format("{} returned {}", failure.call, failure.error);
  if (failure.text.empty()) return out + " (no ncclGetLastError text recorded)";
  return fmt::format("{}: \"{}\"", out, failure.text);
}

std::string waiting_text(const Diagnosis& d, const Finding& f) {
  if (f.waiting.empty()) return "";
  std::string where = f.comm >= 0 ? fmt::format(" of comm {}", comm_label(d, f.comm)) : "";
  return fmt::format("; {} {} in {}{} for {}", ranks_phrase(f.waiting), f.waiting.size() == 1 ? "waits" : "wait", f.op,
                     where, f.culprits.size() == 1 ? "it" : "them");
}

constexpr const char* kRefusedArguments =
    ": nranks, rank (0..nranks-1, each once) and the unique id must be what every rank agreed on (the same id, from "
    "one ncclGetUniqueId, on every rank)";

// What to check for each ncclResult_t an init returned: one hint, naming the ranks it hit
// between `before_who` and `after_who`.
struct InitAdvice {
  int32_t result;
  const char* before_who;
  const char* after_who;
};

constexpr InitAdvice kInitAdvice[] = {
    {1,  // ncclUnhandledCudaError
     "NCCL could not use CUDA on ",
     ": is a GPU visible there (`nvidia-smi`; CUDA_VISIBLE_DEVICES not empty or wrong)? is the driver at least as new "
     "as the CUDA runtime NCCL was built for (`nvidia-smi` shows the driver's CUDA version)?"},
    {2,  // ncclSystemError
     "a system call failed on ",
     ", usually the network: can the ranks reach each other (firewall, the port range), is NCCL_SOCKET_IFNAME the "
     "interface they share (try NCCL_SOCKET_IFNAME=lo on one node)? also shared memory (/dev/shm size)"},
    {3,  // ncclInternalError
     "NCCL failed inside itself on ",
     ": the NCCL_DEBUG=INFO log names the step; check that every rank runs the same NCCL version"},
    {4,  // ncclInvalidArgument
     "NCCL refused the arguments on ", kRefusedArguments},
    {5,  // ncclInvalidUsage
     "NCCL refused the arguments on ", kRefusedArguments},
    {6,  // ncclRemoteError
     "a peer of ", " failed: look at the other ranks' logs and ledgers for the first failure"},
};

// The advice for `result`, or nullptr for the codes without one.
const InitAdvice* advice_for(int32_t result) {
  for (const InitAdvice& advice : kInitAdvice) {
    if (advice.result == result) return &advice;
  }
  return nullptr;
}

}  // namespace

std::string init_failed_verdict(const Diagnosis& d, const Finding& f) {
  std::string out = "INIT FAILED: ";
  if (f.failures.size() == 1) {
    out += fmt::format("{} could not set up NCCL: {}", ranks_phrase(f.culprits), failure_text(f.failures.front()));
  } else {
    out += fmt::format("{} could not set up NCCL:", ranks_phrase(f.culprits));
    for (size_t i = 0; i < f.failures.size(); ++i) {
      out += fmt::format("{} {}: {}", i == 0 ? "" : ";", ranks_phrase(f.failures[i].ranks), failure_text(f.failures[i]));
    }
  }
  return out + waiting_text(d, f);
}

std::vector<std::string> init_failed_lines(const Diagnosis& d, const Finding& f) {
  std::vector<std::string> out;
  out.push_back(fmt::format("init_failed{}: culprit(s) {}, waiting {}",
                            f.comm >= 0 ? fmt::format(" on comm {}", comm_label(d, f.comm)) : "",
                            format_ranks(f.culprits), f.waiting.empty() ? "none" : format_ranks(f.waiting)));
  for (const auto& failure : f.failures) {
    out.push_back(fmt::format("  {}: {} returned {} ({}){}", ranks_phrase(failure.ranks), failure.call, failure.error,
                              failure.result, failure.comm >= 0 ? fmt::format(" making comm {}", comm_label(d, failure.comm)) : ""));
    out.push_back(failure.text.empty() ? "    ncclGetLastError: (none recorded)"
                                       : fmt::format("    ncclGetLastError: {}", failure.text));
  }
  if (!f.reason.empty()) out.push_back(fmt::format("  reasoning: {}", f.reason));
  return out;
}

std::vector<std::string> init_failed_hints(const Finding& f) {
  std::vector<std::string> out;
  std::set<int32_t> seen;
  for (const auto& failure : f.failures) {
    if (!seen.insert(failure.result).second) continue;
    const std::string who = ranks_phrase(failure.ranks);
    if (const InitAdvice* advice = advice_for(failure.result)) {
      out.push_back(fmt::format("{} ({}): {}{}{}", failure.error, failure.call, advice->before_who, who,
                                advice->after_who));
    } else {
      out.push_back(fmt::format("{} ({}) on {}: see NCCL's message above", failure.error, failure.call, who));
    }
  }
  out.push_back("run the failing rank(s) again with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,ENV) to see each step of "
                "init and where it stopped");
  return out;
}

}  // namespace hangshim::report
