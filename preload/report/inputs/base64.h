// Base64 (RFC 4648, with padding) for the ledger bytes carried inside an export's JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hangshim::report {

std::string base64_encode(const unsigned char* data, size_t size);

// Decodes `text` into `out` (room for `capacity` bytes). Returns the number of bytes written,
// or -1 for text that is not base64 or does not fit. `out_is_zeroed`: the caller zero-filled
// `out`, so runs of zero bytes ("AAAAAAAA", most of a ledger's unused space) are skipped.
int64_t base64_decode(std::string_view text, unsigned char* out, size_t capacity, bool out_is_zeroed = false);

}  // namespace hangshim::report
