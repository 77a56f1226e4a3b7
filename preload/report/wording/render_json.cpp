#include <vector>

#include <fmt/format.h>

#include "pyframes/json_writer.h"
#include "report/analysis/split_in_parallel.h"
#include "report/inputs/read_in_parallel.h"
#include "report/wording/aborted_words.h"
#include "report/wording/phrases.h"
#include "report/wording/render.h"
#include "report/wording/straggler_words.h"

namespace hangshim::report {

namespace {

using pyframes::JsonWriter;

void write_ranks(JsonWriter& j, const char* name, const std::vector<int>& ranks) {
  j.key(name).begin_array();
  for (int r : ranks) j.value(r);
  j.end_array();
}

// Groups of ranks by what they saw: [{"<value_key>": value, "ranks": [...]}, ...].
void write_value_groups(JsonWriter& j, const char* name, const char* value_key, const std::vector<ValueGroup>& groups) {
  j.key(name).begin_array();
  for (const auto& g : groups) {
    j.begin_object().field(value_key, g.value);
    write_ranks(j, "ranks", g.ranks);
    j.end_object();
  }
  j.end_array();
}

// Groups of ranks: [{"ranks": [...], what `fields(group)` writes}, ...].
template <typename Groups, typename Fields>
void write_rank_groups(JsonWriter& j, const char* name, const Groups& groups, Fields fields) {
  j.key(name).begin_array();
  for (const auto& g : groups) {
    j.begin_object();
    write_ranks(j, "ranks", g.ranks);
    fields(g);
    j.end_object();
  }
  j.end_array();
}

void write_site(JsonWriter& j, const char* name, const std::optional<Site>& site) {
  j.key(name);
  if (!site) {
    j.null();
    return;
  }
  j.begin_object().field("file", site->file).field("line", site->line).field("function", site->function).end_object();
}

void write_call(JsonWriter& j, const Diagnosis& d, const char* name, const std::optional<Call>& c) {
  j.key(name);
  if (!c) {
    j.null();
    return;
  }
  j.begin_object();
  j.field("comm", c->comm >= 0 ? d.comms[static_cast<size_t>(c->comm)].name : std::string());
  j.field("op", c->op).field("seq", c->seq);
  write_site(j, "site", c->site);
  if (!c->chain.empty()) {  // your frames that lead to the site, outermost first
    j.key("chain").begin_array();
    for (const auto& frame : c->chain) {
      j.begin_object().field("file", frame.file).field("line", frame.line).field("function", frame.function).end_object();
    }
    j.end_array();
  }
  j.field("iteration", c->iteration).field("count", c->count).field("dtype", c->dtype);
  j.key("root");
  if (c->root >= 0) {
    j.value(c->root);
  } else {
    j.null();
  }
  j.field("red_op", c->red_op).field("issued_ns", c->issued_ns).field("completed_ns", c->completed_ns);
  j.field("result", static_cast<int>(c->result));
  j.end_object();
}

void write_comm_ref(JsonWriter& j, const Diagnosis& d, int comm) {
  j.key("comm");
  if (comm < 0) {
    j.null();
    return;
  }
  const CommSummary& c = d.comms[static_cast<size_t>(comm)];
  j.begin_object().field("name", c.name).field("key", fmt::format("{:016x}", c.key)).field("nranks", c.nranks);
  write_ranks(j, "ranks", c.ranks);
  j.end_object();
}

// Aborted: who aborted which communicator after which pending collective, and the hang it ended.
void write_abort(JsonWriter& j, const Diagnosis& d, const Finding& f) {
  if (!f.abort) return;
  const Abort& x = *f.abort;
  j.key("aborted").begin_object();
  write_comm_ref(j, d, x.comm);
  j.field("seq", x.seq).field("op", x.op);
  write_call(j, d, "call", x.call);
  write_ranks(j, "by", x.ranks);
  write_ranks(j, "inside_abort", x.inside);
  write_ranks(j, "issued", x.issued);
  write_ranks(j, "not_reached", x.not_reached);
  j.field("pending_ns", x.pending_ns).field("hang", kind_name(x.hang));
  write_value_groups(j, "async_errors", "error", x.async_errors);
  j.end_object();
}

void write_finding(JsonWriter& j, const Diagnosis& d, const Finding& f) {
  j.begin_object();
  j.field("kind", kind_name(f.kind));
  write_comm_ref(j, d, f.comm);
  j.field("seq", f.seq).field("op", f.op);
  write_ranks(j, "culprits", f.culprits);
  write_ranks(j, "waiting", f.waiting);
  j.field("never_issued", f.never_issued).field("root_cause", f.root_cause).field("blocked_by", f.blocked_by);
  j.field("shown", f.shown);
  j.field("attribute", f.attribute);
  write_value_groups(j, "values", "value", f.values);
  j.field("reason", f.reason);
  if (f.others_ran != 0) j.field("others_ran", f.others_ran);
  if (f.attribute == "steps") j.field("fewer", f.fewer);
  j.field("ambiguous", f.ambiguous);
  write_abort(j, d, f);
  if (!f.failures.empty()) {
    // init_failed: per group of ranks, the call, NCCL's error (name and code) and its own text.
    j.key("failures").begin_array();
    for (const auto& failure : f.failures) {
      j.begin_object();
      write_ranks(j, "ranks", failure.ranks);
      write_comm_ref(j, d, failure.comm);
      j.field("call", failure.call).field("result", failure.error).field("result_code", failure.result);
      j.field("last_error", failure.text).end_object();
    }
    j.end_array();
  }
  j.key("lines").begin_array();
  for (const auto& line : finding_lines(d, f)) j.value(line);
  j.end_array();
  j.end_object();
}

void write_process(JsonWriter& j, const pyframes::Process& p) {
  j.begin_object().field("pid", p.pid).field("python", p.python_version);
  j.key("threads").begin_array();
  for (const auto& t : p.threads) {
    j.begin_object().field("thread_id", t.thread_id).field("native_id", t.native_id).field("name", t.name);
    j.field("gil", t.gil).key("frames").begin_array();
    for (const auto& f : t.frames) {
      j.begin_object().field("function", f.function).field("qualname", f.qualname.empty() ? f.function : f.qualname);
      j.field("file", f.file).field("line", f.line);
      j.field("kind", f.kind == pyframes::Frame::Kind::Python ? "python" : "native").end_object();
    }
    j.end_array().end_object();
  }
  j.end_array().end_object();
}

void write_rank(JsonWriter& j, const Diagnosis& d, const RankSituation& s) {
  j.begin_object().field("rank", s.rank).field("state", rank_state_name(s.state));
  j.field("pid", s.pid).field("host", s.host).field("liveness", liveness_name(s.liveness));
  write_call(j, d, "current", s.current);
  write_call(j, d, "last", s.last);
  write_site(j, "now_at", s.now_at);
  j.field("waiting_ns", s.waiting_ns).field("heartbeat_age_ns", s.heartbeat_age_ns).field("why_dead", s.why_dead);
  j.field("text", situation_text(d, s));
  j.end_object();
}

}  // namespace

std::string render_report_json(const Diagnosis& d) {
  JsonWriter j(true);
  // About 1.3 KiB a rank (rank lists, one number a line); more is reserved, since pages the
  // document never reaches are never touched: growing it by doubling held the old and the new
  // copy at once, 170 of 1053 MiB at the peak of a report over 131072 ranks.
  j.reserve((size_t{64} << 10) + d.situations.size() * 2048);
  j.begin_object();
  j.field("format", "hangshim-report").field("version", 1);
  j.key("verdict").begin_object();
  j.field("kind", kind_name(d.verdict)).field("problem", d.problem).field("summary", verdict_line(d));
  j.field("ended", d.ended());
  j.field("in_flight", d.in_flight).field("longest_pending_ns", d.longest_pending_ns).field("longest_pending_limit_ns", d.longest_pending_limit_ns);
  if (d.primary >= 0) {
    const Finding& f = d.findings[static_cast<size_t>(d.primary)];
    write_ranks(j, "culprits", f.culprits);
    write_ranks(j, "waiting", f.waiting);
    write_comm_ref(j, d, f.comm);
    j.field("seq", f.seq).field("op", f.op).field("finding", d.primary);
    // Which evidence decided the verdict (or, when it cannot tell, both readings).
    j.field("why", f.reason);
    // Cannot tell which side is wrong: culprits holds both sides.
    j.field("ambiguous", f.ambiguous);
    write_abort(j, d, f);
    // Who waits for the culprits, across communicators, nearest first.
    j.key("chain").begin_array();
    for (const auto& link : f.chain) {
      j.begin_object();
      write_ranks(j, "waiting", link.waiting);
      write_ranks(j, "for", link.for_ranks);
      write_comm_ref(j, d, link.comm);
      j.field("seq", link.seq).field("op", link.op).end_object();
    }
    j.end_array();
  }
  j.key("hints").begin_array();
  for (const auto& h : d.hints) j.value(h);
  j.end_array();
  j.end_object();

  // Slow ranks (found whether or not anything hangs): straggler_words.h words them.
  j.key("stragglers").begin_array();
  for (const auto& s : d.stragglers) {
    j.begin_object().field("rank", s.rank);
    write_comm_ref(j, d, s.comm);
    j.field("op", s.op);
    write_site(j, "site", s.site);
    j.field("compared", s.compared).field("last", s.last);
    j.field("median_late_ns", s.median_late_ns).field("p95_late_ns", s.p95_late_ns);
    j.field("since_seq", s.since_seq).field("since_ns", s.since_ns).field("since_oldest", s.since_oldest);
    j.field("compared_by", s.by_timestamps ? "issue_times" : "wait_times");
    write_site(j, "spends_at", s.spends_at);
    j.field("spends_samples", s.spends_samples).field("samples", s.samples);
    j.field("text", straggler_text(d, s));
    j.end_object();
  }
  j.end_array();

  // Calls captured into CUDA graphs: seen once, at the capture; their replays never call NCCL.
  j.key("cuda_graph_captures").begin_array();
  for (const auto& c : d.comms) {
    if (!c.shown) continue;
    for (const auto& call : c.captured) {
      j.begin_object().field("comm", c.name).field("op", call.op);
      write_ranks(j, "ranks", call.ranks);
      write_site(j, "site", call.site);
      j.field("records", call.records).end_object();
    }
  }
  j.end_array();
  j.key("cuda_graph_notes").begin_array();
  for (const auto& line : captured_lines(d)) j.value(line);
  j.end_array();

  // Indexes (verdict.finding, blocked_by) refer to this list, which --rank / --comm do not cut;
  // "shown" says what they selected.
  j.key("findings").begin_array();
  for (const auto& f : d.findings) write_finding(j, d, f);
  j.end_array();

  j.key("communicators").begin_array();
  for (const auto& c : d.comms) {
    if (!c.shown) continue;
    j.begin_object().field("name", c.name).field("key", fmt::format("{:016x}", c.key)).field("key_kind", c.key_kind);
    j.field("nranks", c.nranks);
    write_ranks(j, "ranks", c.ranks);
    write_ranks(j, "absent", c.absent);
    j.field("parent", c.parent >= 0 ? d.comms[static_cast<size_t>(c.parent)].name : std::string());
    j.field("subgroup", c.subgroup);
    j.key("issued").begin_object().field("min", c.issued_min).field("max", c.issued_max).end_object();
    j.key("completed").begin_object().field("min", c.completed_min).field("max", c.completed_max).end_object();
    j.end_object();
  }
  j.end_array();

  // Every rank, with its sentence: 131072 of them are most of a 170 MiB document, so they are
  // written in parts on the threads the report may use, appended in order (the same bytes).
  j.key("ranks").begin_array();
  const size_t ranks = d.situations.size();
  std::vector<JsonWriter> parts;
  for (size_t p = 0, n = split_parts(ranks, reading_threads(d.threads, ranks, 4096)); p < n; ++p) {
    parts.push_back(j.elements_of());
  }
  split_in_parallel(ranks, parts.size(), [&](size_t part, size_t begin, size_t end) {
    parts[part].reserve((end - begin) * 1536);
    for (size_t i = begin; i < end; ++i) {
      if (d.situations[i].shown) write_rank(parts[part], d, d.situations[i]);
    }
  });
  for (auto& part : parts) j.append_elements(std::move(part));
  j.end_array();

  write_rank_groups(j, "groups", d.groups,
                    [&](const auto& g) { j.field("text", situation_text(d, d.situations[g.example])); });
  write_rank_groups(j, "stacks", d.stack_groups, [&](const auto& g) {
    j.key("process");
    write_process(j, d.processes[static_cast<size_t>(g.stacks)]);
  });

  j.key("errors").begin_array();
  for (const auto& e : d.errors) j.begin_object().field("source", e.source).field("message", e.message).end_object();
  j.end_array();
  j.key("damaged").begin_array();
  for (const auto& e : d.damaged) j.begin_object().field("source", e.source).field("message", e.message).end_object();
  j.end_array();
  j.key("warnings").begin_array();
  for (const auto& w : d.warnings) j.value(w);
  j.end_array();
  j.field("ledgers", static_cast<uint64_t>(d.ledgers)).field("time_ns", d.now_ns);
  auto job = [&](const JobSummary& s) {
    j.begin_object().field("key", s.key).field("name", s.name).field("ledgers", static_cast<uint64_t>(s.ledgers));
    j.field("running", static_cast<uint64_t>(s.running)).field("exited", s.exited);
    j.field("started_ns", s.started_ns).field("last_seen_ns", s.last_seen_ns).end_object();
  };
  j.key("job");
  job(d.job);
  j.key("other_jobs").begin_array();
  for (const auto& s : d.other_jobs) job(s);
  j.end_array();
  j.key("shim_processes").begin_array();
  for (const auto& p : d.shim_processes) {
    j.begin_object().field("pid", p.pid).field("ppid", p.ppid).field("command", p.command).field("ledger_dir", p.ledger_dir);
    j.field("rank", p.rank).field("worker_of", p.worker_of).end_object();
  }
  j.end_array();
  j.end_object();
  // Moved out, not copied: the document is tens of MiB over 100 000 ranks.
  std::string doc = std::move(j).take();
  doc += '\n';
  return doc;
}

}  // namespace hangshim::report
