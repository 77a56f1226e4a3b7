#include <fmt/format.h>

#include "pyframes/merge.h"
#include "pyframes/render.h"
#include "report/wording/aborted_words.h"
#include "report/wording/phrases.h"
#include "report/analysis/rank_ranges.h"
#include "report/wording/render.h"
#include "report/wording/straggler_words.h"

namespace hangshim::report {

std::string render_report_text(const Diagnosis& d, const TextOptions& options) {
  std::string out = verdict_line(d) + "\n";
  if (d.primary >= 0) {
    out += "\nwhy:\n";
    for (const auto& line : finding_lines(d, d.findings[static_cast<size_t>(d.primary)])) out += "  " + line + "\n";
    bool header = false;
    for (size_t i = 0; i < d.findings.size(); ++i) {
      if (static_cast<int>(i) == d.primary || !d.findings[i].shown) continue;
      if (!header) out += "\nalso:\n";
      header = true;
      for (const auto& line : finding_lines(d, d.findings[i])) out += "  " + line + "\n";
    }
  }
  if (!d.stragglers.empty()) {
    out += "\nstragglers (slow, not stopped: the others wait for them at every collective):\n";
    for (const auto& s : d.stragglers) out += "  " + straggler_text(d, s) + "\n";
  }
  if (!d.groups.empty()) {
    out += "\nranks:\n";
    size_t width = 0;
    std::vector<std::string> labels;
    for (const auto& g : d.groups) {
      labels.push_back(ranks_phrase(g.ranks));
      width = std::max(width, labels.back().size());
    }
    for (size_t i = 0; i < d.groups.size(); ++i) {
      const RankSituation& s = d.situations[d.groups[i].example];
      // A Flight Recorder dump names no process: nothing to say where it ran.
      bool known = s.pid > 0 || !s.host.empty();
      std::string where = d.groups[i].ranks.size() == 1 && known ? fmt::format(" [pid {} on {}]", s.pid, s.host) : "";
      out += fmt::format("  {:<{}}  {}{}\n", labels[i], width, situation_text(d, s), where);
    }
  }
  if (auto captured = captured_lines(d); !captured.empty()) {
    out += "\nCUDA graphs (what the ledger cannot see):\n";
    for (const auto& line : captured) out += "  " + line + "\n";
  }
  if (!d.hints.empty()) {
    out += "\nwhat to do:\n";
    for (const auto& h : d.hints) out += "  " + h + "\n";
  }
  if (!d.comms.empty()) {
    out += "\ncommunicators:\n";
    for (const auto& c : d.comms) {
      if (!c.shown) continue;
      std::string issued = c.issued_min == c.issued_max ? fmt::format("{}", c.issued_max)
                                                        : fmt::format("{}-{}", c.issued_min, c.issued_max);
      std::string done = c.completed_min == c.completed_max ? fmt::format("{}", c.completed_max)
                                                            : fmt::format("{}-{}", c.completed_min, c.completed_max);
      out += fmt::format("  {:<16} key {:016x}  {:<10} {:>4} ranks ({})  collectives issued {}, completed {}\n", c.name, c.key,
                         c.key_kind, c.nranks, format_ranks(c.ranks), issued, done);
    }
  }
  if (!d.processes.empty()) {
    // pyframes' whole-job view: the main threads merged into one tree, outliers first.
    out += "\nlive stacks (ranks running on this host or exported with their node):\n";
    pyframes::SourceCache sources;
    pyframes::TextOptions text;
    text.source_lines = options.source_lines;
    out += pyframes::render_merged_text(pyframes::merge_stacks(d.processes), text, &sources);
  }
  if (!d.warnings.empty()) {
    out += "\nnotes:\n";
    for (const auto& w : d.warnings) out += "  " + w + "\n";
  }
  if (!d.other_jobs.empty()) {
    out += fmt::format("\nother jobs in these ledgers (the verdict above is {}'s; hangshim report --job KEY for another):\n",
                       d.job.name);
    for (const auto& j : d.other_jobs) {
      std::string state = j.running > 0 ? fmt::format("{} of {} processes running", j.running, j.ledgers)
                                        : fmt::format("{} processes, {}", j.ledgers, j.exited ? "exited" : "gone (killed or crashed)");
      out += fmt::format("  {}  {}: {}\n", j.key, j.name, state);
    }
  }
  return out;
}

}  // namespace hangshim::report
