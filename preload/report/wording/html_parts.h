// The pieces of the HTML report (render_report_html): escaping, the per-communicator timelines,
// the merged stack tree and the page's own style and script. Each only reads the diagnosis.
#pragma once

#include <string>
#include <string_view>

#include "report/analysis/model.h"

namespace hangshim::report::html {

// Text as HTML: &, <, >, " and ' escaped; bytes that are not UTF-8 stay as they are (the page
// is declared UTF-8, and the browser shows U+FFFD for them).
std::string escape(std::string_view text);

// One table per timeline: a row per group of members with the same marks, a column per
// collective number. Rows holding a culprit of the verdict carry class "culprit".
void timelines(std::string& out, const Diagnosis& d);

// The live main-thread stacks of the job merged into a prefix tree (pyframes' merge), each
// branch labelled by its ranks, with each frame's variables on demand.
void stack_tree(std::string& out, const Diagnosis& d);

// The page's <style> and <script> contents: inline, so the page needs nothing else.
extern const char* const kStyle;
extern const char* const kScript;

}  // namespace hangshim::report::html
