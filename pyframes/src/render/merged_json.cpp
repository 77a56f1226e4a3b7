// The merged view in the --json document, next to "processes" and "errors":
//   "merged": {"threads": "main"|"all", "frame_order": "outermost_first", "processes": N,
//              "hidden_idle_threads": N (--hide-idle), "native_only_threads": N (--native-all),
//              "left_out": [{"pid", "rank", "reason"}] (processes with no thread in the view),
//              "members": [{"id", "pid", "source", "rank", "local_rank", "worker_of", thread fields...}],
//              "tree": [{"label", "members": [ids], "ended": [ids], "frames": [frame fields +
//                        "locals": [{"name", "argument", "values": [{"repr", "members", "label"}]}]],
//                        "children": [...]}]}
// Members are referred to by id everywhere else, so a 1024-rank tree stays small.
#include "pyframes/json_writer.h"
#include "pyframes/merge.h"
#include "render/json_model.h"

namespace pyframes {

namespace {

void write_ids(JsonWriter& json, const std::vector<uint32_t>& ids) {
  json.begin_array();
  for (uint32_t id : ids) json.value(static_cast<uint64_t>(id));
  json.end_array();
}

void write_member(JsonWriter& json, const MergeMember& member, uint32_t id) {
  json.begin_object();
  json.key("id").value(static_cast<uint64_t>(id));
  json.key("pid").value(member.pid);
  if (!member.source.empty()) json.key("source").value(member.source);
  if (!member.rank.empty()) json.key("rank").value(member.rank);
  if (!member.local_rank.empty()) json.key("local_rank").value(member.local_rank);
  if (member.worker_of != 0) json.key("worker_of").value(member.worker_of);
  Thread thread;  // the thread fields exactly as the per-process document writes them
  thread.thread_id = member.thread_id;
  thread.native_id = member.native_id;
  thread.name = member.thread_name;
  thread.gil = member.gil;
  thread.state = member.state;
  thread.truncated = member.truncated;
  thread.truncation_reason = member.truncation_reason;
  render::write_thread_fields(json, thread);
  json.end_object();
}

void write_merged_frame(JsonWriter& json, const MergedStacks& merged, const MergedFrame& frame) {
  json.begin_object();
  render::write_frame_fields(json, frame.frame);
  if (!frame.locals.empty()) {
    json.key("locals").begin_array();
    for (const MergedLocal& local : frame.locals) {
      json.begin_object();
      json.key("name").value(local.name);
      json.key("argument").value(local.is_argument);
      json.key("values").begin_array();
      for (const auto& value : local.values) {
        json.begin_object();
        json.key("repr").value(value.repr);
        json.key("members");
        write_ids(json, value.members);
        json.key("label").value(describe_members(merged, value.members));
        json.end_object();
      }
      json.end_array();
      json.end_object();
    }
    json.end_array();
  }
  json.end_object();
}

void write_branch(JsonWriter& json, const MergedStacks& merged, const MergeBranch& branch) {
  json.begin_object();
  json.key("label").value(describe_members(merged, branch.members));
  json.key("members");
  write_ids(json, branch.members);
  json.key("ended");
  write_ids(json, branch.ended);
  json.key("frames").begin_array();
  for (const MergedFrame& frame : branch.frames) write_merged_frame(json, merged, frame);
  json.end_array();
  json.key("children").begin_array();
  for (const MergeBranch& child : branch.children) write_branch(json, merged, child);
  json.end_array();
  json.end_object();
}

}  // namespace

std::string render_merged_json(const std::vector<Process>& processes, const MergedStacks& merged,
                               const std::vector<FailedTarget>& failures, bool include_processes,
                               const JsonOptions& options) {
  JsonWriter json(options.pretty);
  json.begin_object();
  if (include_processes) {
    json.key("processes").begin_array();
    for (const Process& process : processes) render::write_process(json, process);
    json.end_array();
  }
  json.key("merged").begin_object();
  json.key("threads").value(merged.all_threads ? "all" : "main");
  json.key("frame_order").value("outermost_first");
  json.key("processes").value(static_cast<uint64_t>(merged.processes));
  json.key("hidden_idle_threads").value(static_cast<uint64_t>(merged.hidden_idle));
  json.key("native_only_threads").value(static_cast<uint64_t>(merged.native_only));
  json.key("left_out").begin_array();
  for (const MergedStacks::LeftOut& gone : merged.left_out) {
    json.begin_object();
    json.key("pid").value(static_cast<int64_t>(gone.pid));
    if (!gone.rank.empty()) json.key("rank").value(gone.rank);
    json.key("reason").value(gone.reason);
    json.end_object();
  }
  json.end_array();
  json.key("members").begin_array();
  for (uint32_t id = 0; id < merged.members.size(); ++id) write_member(json, merged.members[id], id);
  json.end_array();
  json.key("tree").begin_array();
  for (const MergeBranch& root : merged.roots) write_branch(json, merged, root);
  json.end_array();
  json.end_object();
  render::write_failures(json, failures);
  json.end_object();
  return json.str() + "\n";
}

}  // namespace pyframes
