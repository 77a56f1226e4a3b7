// The ledger reader on hostile bytes: parse_ledger on the input as a buffer, the file path's
// pass-by-pass copy (snapshot_ledger) on the input as a file, and what `hangshim ledger` does
// with a ledger that parsed (text and JSON rendering, the lookups reports use).
#include <cstddef>
#include <cstdint>

#include "cli/ledger_render.h"
#include "fuzz_support.h"
#include "ledger/reader.h"
#include "ledger/snapshot.h"

namespace {

void use(const hangshim::ledger::Ledger& ledger) {
  for (const auto& record : ledger.records) {
    (void)hangshim::ledger::display_op(record);
    (void)hangshim::ledger::dtype_name(record.dtype);
    (void)hangshim::ledger::red_op_name(record.red_op);
    (void)ledger.comm(record.comm);
    if (const auto* site = ledger.callsite(record.callsite)) (void)hangshim::ledger::your_line(*site);
  }
  (void)ledger.pending();
  hangshim::cli::LedgerRenderOptions options;
  options.max_records = 0;
  options.now_ns = 1700000005000000000ull;
  (void)hangshim::cli::render_ledger_text(ledger, options);
  (void)hangshim::cli::render_ledger_json(ledger);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = hangshim::ledger::parse_ledger(data, size, "fuzz");
  if (parsed) use(*parsed);

  fuzz::InputFile file(data, size);
  if (!file.ok()) return 0;
  auto copy = hangshim::ledger::snapshot_ledger(file.fd(), size, "fuzz");
  if (copy) {
    auto again = hangshim::ledger::parse_ledger(copy->data(), copy->size(), "fuzz");
    if (again) use(*again);
  }
  return 0;
}
