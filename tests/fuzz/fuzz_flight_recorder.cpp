// The Flight Recorder dump reader on hostile bytes, all the way: the bounded pickle reader, the
// canonical text of what it read, the dump's fields, the dump as a ledger and as the report's
// rank view, the report's diagnosis of it, and the export of that view as a dump again. Two
// properties on top of "no crash, no hang, no unbounded allocation":
//   - what the reader read, written again by the pickle writer, reads back as the same values;
//   - every dump `hangshim export --format flight-recorder` writes is one `hangshim report` reads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "report/diagnose.h"
#include "report/inputs/flight_recorder/fr_dump.h"
#include "report/outputs/flight_recorder/fr_export.h"
#include "report/inputs/flight_recorder/fr_ledger.h"
#include "report/inputs/flight_recorder/pickle_reader.h"
#include "report/inputs/flight_recorder/pickle_utf8.h"
#include "report/outputs/flight_recorder/pickle_writer.h"

namespace {

namespace pickle = hangshim::report::pickle;
namespace fr = hangshim::report::flight_recorder;

constexpr size_t kDepth = 32;
constexpr size_t kChars = 1 << 20;

// Writes `v` again; false when it is deeper than kDepth or larger than the budget (shared values
// are written out each time they are reached).
bool rewrite(const pickle::Document& doc, pickle::ValueId v, pickle::PickleWriter& w, size_t depth, size_t& budget) {
  if (depth > kDepth || budget == 0) return false;
  --budget;
  switch (doc.kind(v)) {
    case pickle::Kind::None: w.none(); return true;
    case pickle::Kind::Bool: w.boolean(doc.boolean(v)); return true;
    case pickle::Kind::Int: w.integer(doc.integer(v)); return true;
    case pickle::Kind::Float: w.real(doc.real(v)); return true;
    case pickle::Kind::String: w.string(doc.string(v)); return true;
    case pickle::Kind::List: w.begin_list(); break;
    case pickle::Kind::Tuple: w.begin_tuple(); break;
    case pickle::Kind::Dict: w.begin_dict(); break;
  }
  for (pickle::ValueId item : doc.items(v)) {
    if (!rewrite(doc, item, w, depth + 1, budget)) return false;
  }
  w.end();
  return true;
}

void check_rewrite(const pickle::Document& doc) {
  auto text = pickle::canonical_text(doc, doc.root(), kDepth, kChars);
  pickle::PickleWriter w;
  size_t budget = kChars;
  if (!text || !rewrite(doc, doc.root(), w, 0, budget)) return;
  auto bytes = w.finish();
  if (!bytes) std::abort();  // the reader accepted a value the writer cannot write
  auto again = pickle::read_pickle(*bytes);
  if (!again) std::abort();
  auto text_again = pickle::canonical_text(*again, again->root(), kDepth, kChars);
  if (!text_again || *text_again != *text) std::abort();
}

void diagnose_and_export(const fr::Dump& dump) {
  hangshim::report::Inputs inputs;
  hangshim::report::ViewOptions view;
  view.max_records = 1 << 20;
  hangshim::report::LibraryPatterns patterns = hangshim::report::LibraryPatterns::from_env(nullptr);
  for (int rank : {0, 3}) {
    fr::DumpOrigin origin{"fuzz/trace_" + std::to_string(rank), "dumps:fuzz", rank, 1700000005000000000ull};
    hangshim::ledger::Ledger l = fr::dump_to_ledger(dump, origin);
    if (l.comms.empty()) continue;
    inputs.ranks.push_back(hangshim::report::make_rank_view(std::move(l), inputs, patterns, view));
    inputs.ranks.back().observed_ns = origin.time_ns;
  }
  if (inputs.ranks.empty()) return;
  inputs.job.key = "dumps:fuzz";
  inputs.job.ledgers = inputs.ranks.size();
  inputs.now_ns = 1700000005000000000ull;
  hangshim::report::DiagnoseOptions options;
  (void)hangshim::report::diagnose(inputs, options);
  for (const auto& file : fr::build_dumps(inputs, options).files) {
    auto doc = pickle::read_pickle(file.bytes);
    if (!doc || !fr::read_dump(*doc, file.bytes.size())) std::abort();  // an export the report cannot read
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  pickle::Limits limits;
  limits.max_values = 1 << 20;
  auto doc = pickle::read_pickle(bytes, limits);
  if (!doc) return 0;
  check_rewrite(*doc);
  auto dump = fr::read_dump(*doc, size);
  if (dump) diagnose_and_export(*dump);
  return 0;
}
