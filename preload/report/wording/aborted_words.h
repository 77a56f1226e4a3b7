// The words for an aborted job (Kind::Aborted, classify_abort.cpp): the verdict line, naming who
// aborted which communicator after which pending collective and the hang that made them; the
// detail line; the advice. And the words for calls captured into CUDA graphs, which the ledger
// sees once, at the capture, and never at a replay.
#pragma once

#include <string>
#include <vector>

#include "report/analysis/model.h"

namespace hangshim::report {

std::string aborted_verdict(const Diagnosis& d, const Finding& f);
std::vector<std::string> aborted_lines(const Diagnosis& d, const Finding& f);
std::string aborted_hint(const Finding& f);

// One line per line of the job captured into a CUDA graph (CommSummary::captured), shown
// communicators only: what the ledger saw and what it cannot see.
std::vector<std::string> captured_lines(const Diagnosis& d);

}  // namespace hangshim::report
