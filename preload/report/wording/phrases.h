// The report's wording, shared by the text and JSON renderers: the verdict line (the first
// line, which must stand alone), the detail lines of a finding, one line per group of ranks and
// the hints. Everything here only reads the diagnosis.
#pragma once

#include <string>
#include <vector>

#include "report/analysis/model.h"

namespace hangshim::report {

std::string verdict_line(const Diagnosis& d);
std::vector<std::string> finding_lines(const Diagnosis& d, const Finding& f);
// "in all_reduce #3 on world (float32 x 16, sum) at /x/train.py:88 in train, iteration 3, for 12 s"
std::string situation_text(const Diagnosis& d, const RankSituation& s);
std::vector<std::string> hints_for(const Diagnosis& d);

std::string comm_label(const Diagnosis& d, int comm);  // "world (8 ranks)", "world/split1 (ranks 0-3)"
std::string short_site(const Site& site);              // "train.py:88"
std::string duration_text(uint64_t ns);                // "850 ms", "12 s", "3 min 5 s"

const char* kind_name(Kind kind);
const char* rank_state_name(RankState state);

}  // namespace hangshim::report
