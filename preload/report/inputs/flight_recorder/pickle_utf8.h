// UTF-8 as a pickle's strings hold it: BINUNICODE bytes are decoded by Python with
// bytes.decode("utf-8", "surrogatepass"), so a string that does not pass that check is a
// damaged pickle to a reader, and a writer must not produce one.
#pragma once

#include <string>
#include <string_view>

namespace hangshim::report::pickle {

// UTF-8 without overlong forms or code points past U+10FFFF; encoded surrogates (ED A0..BF xx)
// pass, as Python's "surrogatepass" lets them.
bool is_valid_utf8(std::string_view text);

// `text` with every byte that starts no valid sequence replaced by U+FFFD: file names recorded
// as raw bytes (a Latin-1 path) still make a string Python can load.
std::string utf8_or_replaced(std::string_view text);

}  // namespace hangshim::report::pickle
