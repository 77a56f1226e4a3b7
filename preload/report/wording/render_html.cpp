// The HTML report: one self-contained page (inline style and script, nothing fetched) with the
// verdict on top, then why and what to do, a rank-by-collective timeline per communicator, the
// merged stack tree and every group of ranks in detail. Like the text and JSON renderers it only
// reads the diagnosis, and it says what they say (the same wording functions).
#include <fmt/format.h>

#include <ctime>
#include <map>

#include "report/analysis/rank_ranges.h"
#include "report/wording/aborted_words.h"
#include "report/wording/html_parts.h"
#include "report/wording/phrases.h"
#include "report/wording/render.h"
#include "report/wording/straggler_words.h"

namespace hangshim::report {

namespace html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace html

namespace {

using html::escape;

void lines(std::string& out, const std::vector<std::string>& items, const char* id = nullptr) {
  if (items.empty()) return;
  out += id != nullptr ? fmt::format("<ul class=\"lines\" id=\"{}\">\n", id) : "<ul class=\"lines\">\n";
  for (const auto& item : items) out += fmt::format("<li>{}</li>\n", escape(item));
  out += "</ul>\n";
}

std::string utc_time(uint64_t ns) {
  std::time_t seconds = static_cast<std::time_t>(ns / 1000000000ull);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return "";
  char text[32];
  return std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0 ? text : "";
}

void findings(std::string& out, const Diagnosis& d) {
  if (d.primary < 0) return;
  out += "<h2>Why</h2>\n";
  lines(out, finding_lines(d, d.findings[static_cast<size_t>(d.primary)]), "why");
  std::vector<std::string> also;
  for (size_t i = 0; i < d.findings.size(); ++i) {
    if (static_cast<int>(i) == d.primary || !d.findings[i].shown) continue;
    for (const auto& line : finding_lines(d, d.findings[i])) also.push_back(line);
  }
  if (!also.empty()) {
    out += "<h3>Also</h3>\n";
    lines(out, also);
  }
}

void rank_details(std::string& out, const Diagnosis& d) {
  if (d.groups.empty()) return;
  out += "<h2>Ranks</h2>\n<div id=\"ranks\">\n";
  std::map<int, const RankSituation*> by_rank;  // one lookup per rank, not a scan of all (8192 ranks)
  for (const auto& each : d.situations) by_rank.emplace(each.rank, &each);
  for (const auto& g : d.groups) {
    const RankSituation& s = d.situations[g.example];
    std::string label = format_ranks(g.ranks);
    out += fmt::format("<details class=\"group\" data-ranks=\"{}\"><summary><span class=\"ranks\">{}</span> {}</summary>\n",
                       escape(label), escape(ranks_phrase(g.ranks)), escape(situation_text(d, s)));
    out += "<table>\n";
    for (int rank : g.ranks) {
      auto found = by_rank.find(rank);
      if (found == by_rank.end()) continue;
      const RankSituation& each = *found->second;
      std::string state = liveness_name(each.liveness);
      if (!each.why_dead.empty()) state += ": " + each.why_dead;
      // A Flight Recorder dump names no process: say so rather than "pid 0".
      std::string pid = each.pid > 0 ? fmt::format("pid {}", each.pid) : std::string("no pid (a dump names none)");
      out += fmt::format("<tr><td>rank {}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", rank, pid, escape(each.host),
                         escape(state));
    }
    out += "</table></details>\n";
  }
  out += "</div>\n";
}

void communicators(std::string& out, const Diagnosis& d) {
  bool any = false;
  for (const auto& c : d.comms) any = any || c.shown;
  if (!any) return;
  out += "<h2>Communicators</h2>\n<table class=\"timeline\"><tr><th class=\"ranks\">name</th><th>key</th><th>kind</th>"
         "<th>ranks</th><th>issued</th><th>completed</th></tr>\n";
  for (const auto& c : d.comms) {
    if (!c.shown) continue;
    auto range = [](uint64_t lo, uint64_t hi) { return lo == hi ? fmt::format("{}", hi) : fmt::format("{}-{}", lo, hi); };
    out += fmt::format("<tr><td class=\"ranks\">{}</td><td><code>{:016x}</code></td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td></tr>\n",
                       escape(c.name), c.key, escape(c.key_kind), c.nranks, escape(format_ranks(c.ranks)),
                       range(c.issued_min, c.issued_max), range(c.completed_min, c.completed_max));
  }
  out += "</table>\n";
}

void notes(std::string& out, const Diagnosis& d) {
  std::vector<std::string> items = d.warnings;
  for (const auto& e : d.errors) items.push_back(e.message);
  for (const auto& e : d.damaged) items.push_back(e.message);
  for (const auto& j : d.other_jobs) {
    items.push_back(fmt::format("another job in these ledgers: {} ({}); hangshim report --job {}", j.name, j.key, j.key));
  }
  if (items.empty()) return;
  out += "<h2>Notes</h2>\n";
  lines(out, items);
}

}  // namespace

std::string render_report_html(const Diagnosis& d) {
  std::string out;
  std::string verdict = verdict_line(d);
  out += fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>hangshim: {}</title>\n",
                     escape(verdict));
  out += fmt::format("<style>{}</style>\n</head><body>\n", html::kStyle);
  out += fmt::format("<h1>hangshim report: {}, {} ledgers, {}</h1>\n", escape(d.job.name.empty() ? "job" : d.job.name),
                     d.ledgers, escape(utc_time(d.now_ns)));
  out += fmt::format("<div id=\"verdict\" class=\"{}\">{}</div>\n", d.problem ? "problem" : "healthy", escape(verdict));
  findings(out, d);
  if (!d.stragglers.empty()) {
    out += "<h2>Stragglers</h2>\n";
    std::vector<std::string> items;
    for (const auto& s : d.stragglers) items.push_back(straggler_text(d, s));
    lines(out, items, "stragglers");
  }
  if (auto captured = captured_lines(d); !captured.empty()) {
    out += "<h2>CUDA graphs</h2>\n";
    lines(out, captured, "cuda-graphs");
  }
  if (!d.hints.empty()) {
    out += "<h2>What to do</h2>\n";
    lines(out, d.hints, "hints");
  }
  out += "<p class=\"tools\">Find a rank: <input id=\"find-rank\" type=\"number\" min=\"0\" placeholder=\"rank\"></p>\n";
  html::timelines(out, d);
  html::stack_tree(out, d);
  rank_details(out, d);
  communicators(out, d);
  notes(out, d);
  out += fmt::format("<script>{}</script>\n</body></html>\n", html::kScript);
  return out;
}

}  // namespace hangshim::report
