#include "cli/report_common.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "ledger/directory.h"
#include "report/inputs/library_frames.h"

namespace hangshim::cli {

std::string default_ledger_dir() {
  return ledger::ledger_directory(std::getenv("HANGSHIM_DIR"), ::getuid());
}

bool parse_count(std::string_view text, size_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool parse_seconds(std::string_view text, double& out) {
  std::string copy(text);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && std::isfinite(out) && out >= 0;
}

bool parse_rank_list(std::string_view text, std::vector<int>& out) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = part.find('-');
    size_t first = 0, last = 0;
    if (!parse_count(part.substr(0, dash), first)) return false;
    last = first;
    if (dash != std::string_view::npos && !parse_count(part.substr(dash + 1), last)) return false;
    if (last < first || last > 10'000'000) return false;
    for (size_t r = first; r <= last; ++r) out.push_back(static_cast<int>(r));
  }
  return !out.empty();
}

std::vector<std::string> ledger_paths(const ReportSettings& settings) {
  return settings.paths.empty() ? std::vector<std::string>{default_ledger_dir()} : settings.paths;
}

report::Diagnosis run_report(const ReportSettings& settings, report::Inputs* keep_inputs) {
  report::ReportRequest request = settings;
  request.paths = ledger_paths(settings);
  request.diagnose.patterns = report::LibraryPatterns::from_env(std::getenv("HANGSHIM_LIBRARY_PATHS"));
  for (const auto& pattern : settings.libraries) request.diagnose.patterns.add(pattern);
  return report::run_report(request, keep_inputs);
}

void print_input_errors(const report::Diagnosis& d) {
  for (const auto& e : d.errors) fmt::print(stderr, "hangshim: {}\n", e.message);
  for (const auto& e : d.damaged) fmt::print(stderr, "hangshim: warning: {}\n", e.message);
}

}  // namespace hangshim::cli
