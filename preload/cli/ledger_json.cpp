#include "cli/ledger_render.h"
#include "pyframes/json_writer.h"

namespace hangshim::cli {

using namespace hangshim::ledger;
using pyframes::JsonWriter;

namespace {

void write_header(JsonWriter& j, const LedgerHeader& h) {
  j.key("process").begin_object();
  j.field("pid", h.pid).field("ppid", h.ppid).field("uid", h.uid).field("host", h.host);
  j.field("rank", h.rank).field("world_size", h.world_size).field("local_rank", h.local_rank);
  j.field("command", h.command).field("job", h.job);
  j.field("slurm_job", h.slurm_job).field("run_id", h.run_id).field("master", h.master).field("launcher", h.launcher);
  j.field("parent_start", h.parent_start);
  j.field("start_ns", h.start_ns).field("state", process_state_name(h.state)).field("heartbeat_ns", h.heartbeat_ns);
  j.field("exit_ns", h.exit_ns).field("stall_count", h.stall_count).field("stall_record", h.stall_record);
  j.field("stall_ns", h.stall_ns).field("stall_seconds", h.stall_seconds).field("stall_limit_ms", h.stall_limit_ms).field("stacks_file", h.stacks_file);
  j.field("nccl_version", h.nccl_version).field("python_version", h.python_version);
  j.field("shim_version", h.shim_version);
  j.key("features").begin_array();
  if (h.features & kFeatureCallsites) j.value("call-sites");
  if (h.features & kFeatureCudaCompletion) j.value("cuda-completion");
  if (h.features & kFeatureWatchdog) j.value("watchdog");
  if (h.features & kFeatureLearnedStall) j.value("learned-stall-limits");
  if (h.features & kFeatureWriterLock) j.value("writer-lock");
  j.end_array();
  j.end_object();
  // The process's first failed NCCL call, with NCCL's own text (null when none was recorded).
  j.key("first_error");
  if (h.first_error.present) {
    const FirstError& e = h.first_error;
    j.begin_object().field("record", e.record).field("op", op_name(e.op)).field("call", nccl_function_name(e.op, e.flags));
    j.field("result", e.result).field("result_name", result_name(e.result)).field("text", e.text).end_object();
  } else {
    j.null();
  }
  j.key("ring").begin_object();
  j.field("head", h.ring_head).field("capacity", h.ring_capacity).field("group_count", h.group_count);
  j.end_object();
  j.key("tables").begin_object();
  j.field("comm_capacity", h.comm_capacity).field("callsite_capacity", h.callsite_capacity);
  j.field("callsite_depth", h.callsite_depth).field("dropped_comms", h.dropped_comms);
  j.field("dropped_callsites", h.dropped_callsites);
  j.end_object();
}

void write_comm(JsonWriter& j, const CommInfo& c) {
  j.begin_object();
  j.field("id", c.id).field("key", format_key(c.key)).field("key_kind", key_kind_name(c.key_kind));
  j.field("state", comm_state_name(c.state)).field("rank", c.rank).field("nranks", c.nranks).field("device", c.device);
  j.field("parent_key", c.parent_key != 0 ? format_key(c.parent_key) : "").field("color", c.color);
  j.field("split_index", c.split_index).field("splits", c.splits).field("name", c.name);
  j.field("async_error", c.async_error).field("async_error_name", c.async_error != 0 ? result_name(c.async_error) : "");
  j.field("revoked_ns", c.revoked_ns);
  j.field("handle", c.handle).field("created_ns", c.created_ns).field("ended_ns", c.ended_ns);
  j.field("coll_issued", c.coll_issued).field("coll_completed", c.coll_completed);
  j.field("p2p_issued", c.p2p_issued).field("p2p_completed", c.p2p_completed);
  j.key("op_counts").begin_object();
  for (int i = 0; i < kCountedOps; ++i) {
    uint64_t n = c.op_counts[static_cast<size_t>(i)];
    if (n > 0) j.field(op_name(static_cast<uint8_t>(i + 1)), n);
  }
  j.end_object();
  j.end_object();
}

void write_record(JsonWriter& j, const CallRecord& r) {
  j.begin_object();
  j.field("index", r.index).field("op", display_op(r)).field("nccl_op", op_name(r.op)).field("call", nccl_function_name(r.op, r.flags));
  j.field("comm", r.comm).field("comm_key", format_key(r.comm_key)).field("seq", r.seq);
  j.field("count", r.count).field("dtype", dtype_name(r.dtype)).field("red_op", red_op_name(r.red_op));
  j.field("peer", r.peer).field("stream", r.stream).field("thread", r.thread).field("group", r.group);
  j.field("issued_ns", r.issued_ns).field("returned_ns", r.returned_ns).field("completed_ns", r.completed_ns);
  j.field("result", r.result).field("result_name", result_name(r.result)).field("callsite", r.callsite).field("callsite_hit", r.callsite_hit);
  j.field("in_group", (r.flags & kRecordInGroup) != 0).field("event_tracked", (r.flags & kRecordEventTracked) != 0);
  j.field("graph_captured", (r.flags & kRecordCaptured) != 0).field("simulated", (r.flags & kRecordSimulated) != 0);
  j.field("borrowed_stack", (r.flags & kRecordBorrowedStack) != 0).field("in_progress", (r.flags & kRecordInProgress) != 0);
  j.end_object();
}

void write_callsite(JsonWriter& j, const CallsiteInfo& c) {
  j.begin_object();
  j.field("id", c.id).field("hits", c.hits).field("first_ns", c.first_ns).field("user_frame", int32_t{c.user_frame});
  j.field("barrier", (c.flags & kCallsiteBarrier) != 0).field("borrowed", (c.flags & kCallsiteBorrowed) != 0);
  j.field("truncated", (c.flags & kCallsiteTruncated) != 0);
  j.key("frames").begin_array();
  for (const auto& f : c.frames) {
    j.begin_object();
    j.field("function", f.function).field("qualname", f.function).field("file", f.file).field("line", f.line);
    j.field("kind", "python").field("library", f.library);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

std::string render_ledger_json(const Ledger& ledger) {
  JsonWriter j(true);
  j.begin_object();
  j.field("ledger", ledger.source).field("format_version", ledger.header.version);
  write_header(j, ledger.header);
  j.key("communicators").begin_array();
  for (const auto& c : ledger.comms) write_comm(j, c);
  j.end_array();
  j.key("records").begin_array();
  for (const auto& r : ledger.records) write_record(j, r);
  j.end_array();
  j.key("callsites").begin_array();
  for (const auto& c : ledger.callsites) write_callsite(j, c);
  j.end_array();
  j.key("warnings").begin_array();
  for (const auto& w : ledger.warnings) j.value(w);
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

}  // namespace hangshim::cli
