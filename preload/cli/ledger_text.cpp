#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>

#include "cli/ledger_render.h"

namespace hangshim::cli {

using namespace hangshim::ledger;

std::string format_key(uint64_t key) { return fmt::format("{:016x}", key); }

std::string format_wall_time(uint64_t realtime_ns) {
  if (realtime_ns == 0) return "-";
  time_t seconds = static_cast<time_t>(realtime_ns / 1000000000);
  struct tm local {};
  localtime_r(&seconds, &local);
  char buffer[32];
  strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &local);
  return fmt::format("{}.{:03}", buffer, realtime_ns / 1000000 % 1000);
}

std::string format_duration(uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 1000000000) return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  if (ns < 120 * uint64_t{1000000000}) return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
  uint64_t s = ns / 1000000000;
  if (s < 7200) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, s / 60 % 60);
}

std::string format_frame(const FrameInfo& frame) {
  std::string file = frame.file.empty() ? "?" : frame.file;
  return fmt::format("{}:{} in {}", file, frame.line, frame.function.empty() ? "?" : frame.function);
}

namespace {

std::string rank_text(const LedgerHeader& h) {
  if (h.rank < 0) return "no RANK";
  std::string out = fmt::format("rank {}", h.rank);
  if (h.world_size > 0) out += fmt::format("/{}", h.world_size);
  if (h.local_rank >= 0) out += fmt::format(" (local {})", h.local_rank);
  return out;
}

std::string features_text(uint32_t features) {
  std::string out;
  auto add = [&](uint32_t bit, const char* name) {
    if ((features & bit) == 0) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(kFeatureCallsites, "call-sites");
  add(kFeatureCudaCompletion, "cuda-completion");
  add(kFeatureWatchdog, "watchdog");
  add(kFeatureLearnedStall, "learned-stall-limits");
  add(kFeatureWriterLock, "writer-lock");
  return out.empty() ? "none" : out;
}

std::string age(uint64_t then_ns, uint64_t now_ns) {
  if (then_ns == 0 || now_ns < then_ns) return "";
  return fmt::format(" ({} ago)", format_duration(now_ns - then_ns));
}

std::string record_state(const CallRecord& r, uint64_t now_ns) {
  if (r.returned_ns == 0) {
    return now_ns > r.issued_ns ? fmt::format("in call {}", format_duration(now_ns - r.issued_ns)) : "in call";
  }
  if (r.result == kInProgressResult) {  // a nonblocking communicator: neither done nor failed
    std::string waited = now_ns > r.issued_ns ? " " + format_duration(now_ns - r.issued_ns) : "";
    return fmt::format("in progress{} (ncclInProgress: NCCL has not launched it yet)", waited);
  }
  if (r.result != 0) return fmt::format("error {}", result_name(r.result));
  if (r.completed_ns == 0) {
    return now_ns > r.issued_ns ? fmt::format("pending {}", format_duration(now_ns - r.issued_ns)) : "pending";
  }
  return fmt::format("done {}", format_duration(r.completed_ns > r.issued_ns ? r.completed_ns - r.issued_ns : 0));
}

std::string record_where(const Ledger& ledger, const CallRecord& r) {
  const CallsiteInfo* site = ledger.callsite(r.callsite);
  if (site == nullptr) return "";
  const FrameInfo* frame = your_line(*site);
  if (frame == nullptr) return "";
  return format_frame(*frame);
}

void render_header(std::string& out, const Ledger& ledger, const LedgerRenderOptions& options) {
  const LedgerHeader& h = ledger.header;
  out += fmt::format("ledger   {} (format {}, written by hangshim {})\n", ledger.source, h.version, h.shim_version);
  out += fmt::format("process  pid {} on {}, {}, started {}\n", h.pid, h.host, rank_text(h), format_wall_time(h.start_ns));
  if (!h.command.empty()) out += fmt::format("command  {}\n", h.command);
  {
    std::vector<std::string> facts;
    if (!h.slurm_job.empty()) facts.push_back("slurm job " + h.slurm_job);
    if (!h.run_id.empty()) facts.push_back("torchrun run " + h.run_id);
    if (!h.master.empty()) facts.push_back("master " + h.master);
    if (!h.launcher.empty()) facts.push_back("started by hangshim run " + h.launcher);
    if (facts.empty() && !h.job.empty()) facts.push_back(h.job);  // a ledger of an earlier writer
    facts.push_back(fmt::format("parent pid {}", h.ppid));
    out += fmt::format("job      {}\n", fmt::join(facts, ", "));
  }
  out += fmt::format("state    {}", process_state_name(h.state));
  if (h.state == static_cast<uint32_t>(ProcessState::Exited)) out += fmt::format(" at {}", format_wall_time(h.exit_ns));
  out += fmt::format(", heartbeat {}{}\n", format_wall_time(h.heartbeat_ns), age(h.heartbeat_ns, options.now_ns));
  if (h.stall_count > 0) {
    out += fmt::format("stall    {} stall(s); last at {} on record #{}", h.stall_count, format_wall_time(h.stall_ns), h.stall_record);
    if (h.stall_limit_ms > 0) out += fmt::format(" (pending longer than its limit, {})", format_duration(uint64_t{h.stall_limit_ms} * 1000000));
    if (!h.stacks_file.empty()) out += fmt::format("; stacks in {}", h.stacks_file);
    out += "\n";
  }
  std::string nccl = h.nccl_version > 0 ? fmt::format("{}.{}.{}", h.nccl_version / 10000, h.nccl_version / 100 % 100,
                                                      h.nccl_version % 100)
                                        : "unknown";
  out += fmt::format("nccl     {}   python {}   features: {}\n", nccl, h.python_version.empty() ? "-" : h.python_version,
                     features_text(h.features));
  out += fmt::format("ring     {} calls recorded, last {} kept; {}\n", h.ring_head,
                     std::min<uint64_t>(h.ring_head, h.ring_capacity),
                     h.stall_seconds > 0 ? fmt::format("stall timeout {} s", h.stall_seconds)
                                         : std::string("stall limits learned per call-site"));
  if (h.first_error.present) {
    const FirstError& e = h.first_error;
    out += fmt::format("error    {} returned {}{}{}\n", nccl_function_name(e.op, e.flags), result_name(e.result),
                       e.record != 0 ? fmt::format(" (record #{})", e.record) : "",
                       e.text.empty() ? "" : fmt::format(": {}", e.text));
  }
  if (h.dropped_comms > 0 || h.dropped_callsites > 0) {
    out += fmt::format("dropped  {} communicator(s), {} call-site(s) (tables full)\n", h.dropped_comms, h.dropped_callsites);
  }
}

void render_comms(std::string& out, const Ledger& ledger) {
  out += fmt::format("\ncommunicators ({})\n", ledger.comms.size());
  if (ledger.comms.empty()) return;
  out += fmt::format("  {:>3}  {:<16}  {:<9}  {:>9}  {:>4}  {:<12}  {:>17}  {:>13}  {}\n", "id", "key", "kind", "rank",
                     "dev", "state", "coll issued/done", "p2p issued/done", "name / parent");
  for (const auto& c : ledger.comms) {
    std::string extra = c.name;
    if (c.async_error != 0) extra += fmt::format("{}async error {}", extra.empty() ? "" : " ", result_name(c.async_error));
    if (c.revoked_ns != 0) extra += fmt::format("{}revoked", extra.empty() ? "" : " ");
    if (c.parent_key != 0) {
      if (!extra.empty()) extra += " ";
      extra += fmt::format("parent {} split #{} color {}", format_key(c.parent_key), c.split_index, c.color);
    }
    out += fmt::format("  {:>3}  {:<16}  {:<9}  {:>9}  {:>4}  {:<12}  {:>17}  {:>13}  {}\n", c.id, format_key(c.key),
                       key_kind_name(c.key_kind), fmt::format("{}/{}", c.rank, c.nranks), c.device,
                       comm_state_name(c.state), fmt::format("{}/{}", c.coll_issued, c.coll_completed),
                       fmt::format("{}/{}", c.p2p_issued, c.p2p_completed), extra);
  }
}

void render_records(std::string& out, const Ledger& ledger, const LedgerRenderOptions& options) {
  size_t total = ledger.records.size();
  size_t shown = options.max_records == 0 ? total : std::min(total, options.max_records);
  out += fmt::format("\ncalls (newest {} of {} in the ring)\n", shown, total);
  if (shown == 0) return;
  out += fmt::format("  {:>8}  {:<23}  {:>4}  {:>6}  {:<14}  {:<8}  {:>10}  {:>5}  {:<5}  {:<18}  {:>9}  {}\n", "record",
                     "issued", "comm", "seq", "op", "dtype", "count", "peer", "redop", "state", "iteration",
                     "call-site");
  for (size_t i = total - shown; i < total; ++i) {
    const CallRecord& r = ledger.records[i];
    std::string peer = r.peer >= 0 ? fmt::format("{}", r.peer) : "";
    std::string iteration = r.callsite_hit > 0 ? fmt::format("{}", r.callsite_hit) : "";
    std::string op = display_op(r);
    if ((r.flags & kRecordInGroup) != 0) op += "*";
    out += fmt::format("  {:>8}  {:<23}  {:>4}  {:>6}  {:<14}  {:<8}  {:>10}  {:>5}  {:<5}  {:<18}  {:>9}  {}\n",
                       fmt::format("#{}", r.index), format_wall_time(r.issued_ns), r.comm, r.seq, op,
                       dtype_name(r.dtype), r.count, peer, red_op_name(r.red_op), record_state(r, options.now_ns),
                       iteration, record_where(ledger, r));
  }
  out += "  (* issued inside ncclGroupStart/ncclGroupEnd)\n";
}

void render_callsites(std::string& out, const Ledger& ledger) {
  out += fmt::format("\ncall-sites ({})\n", ledger.callsites.size());
  for (const auto& site : ledger.callsites) {
    const FrameInfo* mine = your_line(site);
    out += fmt::format("  [{}] {} hit(s){}{}{}\n", site.id, site.hits,
                       mine != nullptr ? fmt::format(", your line: {}", format_frame(*mine)) : "",
                       (site.flags & kCallsiteBorrowed) != 0 ? " (main thread's stack)" : "",
                       (site.flags & kCallsiteTruncated) != 0 ? " (deeper frames not kept)" : "");
    for (size_t i = 0; i < site.frames.size(); ++i) {
      out += fmt::format("      #{:<2} {}{}\n", i, format_frame(site.frames[i]),
                         static_cast<int>(i) == site.user_frame ? "   <- your line" : "");
    }
  }
}

}  // namespace

std::string render_ledger_text(const Ledger& ledger, const LedgerRenderOptions& options) {
  std::string out;
  render_header(out, ledger, options);
  render_comms(out, ledger);
  render_records(out, ledger, options);
  render_callsites(out, ledger);
  if (!ledger.warnings.empty()) {
    out += "\nwarnings\n";
    for (const auto& w : ledger.warnings) out += fmt::format("  {}\n", w);
  }
  return out;
}

}  // namespace hangshim::cli
