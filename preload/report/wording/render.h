// The report's renderers: they only read the diagnosis. Text for people (the verdict on the
// first line, then why, where every rank is, what to do, the communicators, the live stacks
// merged across ranks); JSON for machines (the same content as data); HTML for a picture (the
// same words, with timelines and a stack tree to open and close).
#pragma once

#include <string>

#include "report/analysis/model.h"

namespace hangshim::report {

struct TextOptions {
  bool source_lines = true;  // the source line under each Python frame, when readable here
};

std::string render_report_text(const Diagnosis& d, const TextOptions& options);
std::string render_report_json(const Diagnosis& d);
// One self-contained page (render_html.cpp); needs DiagnoseOptions::timelines for its timelines.
std::string render_report_html(const Diagnosis& d);

}  // namespace hangshim::report
