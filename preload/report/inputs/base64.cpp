#include "report/inputs/base64.h"

#include "report/inputs/base64_avx2.h"

#include <array>
#include <bit>
#include <cstring>

namespace hangshim::report {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each byte's 6-bit value, kInvalid for bytes outside the alphabet: one load per character
// (an export carries every ledger's bytes as base64; decoding them was a third of a report's
// time over 4096 exports).
constexpr uint8_t kInvalid = 0xff;
constexpr auto kDecode = [] {
  std::array<uint8_t, 256> table{};
  table.fill(kInvalid);
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<uint8_t>(i);
  return table;
}();

// Two characters at once, as a little-endian 16-bit load sees them (the first in the low
// byte): their 12 bits, or 0xffff when either is outside the alphabet. 128 KiB, made on first
// use rather than by the compiler: 65536 entries exceed clang's constexpr step limit.
using PairTable = std::array<uint16_t, 65536>;
const PairTable& decode_pair_table() {
  static const PairTable table = [] {
    PairTable t{};
    for (uint32_t pair = 0; pair < 65536; ++pair) {
      uint8_t first = kDecode[pair & 0xff], second = kDecode[pair >> 8];
      t[pair] = first == kInvalid || second == kInvalid ? uint16_t{0xffff} : static_cast<uint16_t>((first << 6) | second);
    }
    return t;
  }();
  return table;
}

int decode_char(char c) {
  uint8_t v = kDecode[static_cast<unsigned char>(c)];
  return v == kInvalid ? -1 : v;
}
}  // namespace

std::string base64_encode(const unsigned char* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (size - i == 1) {
    uint32_t v = uint32_t{data[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (size - i == 2) {
    uint32_t v = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

int64_t base64_decode(std::string_view text, unsigned char* out, size_t capacity, bool out_is_zeroed) {
  if (text.size() % 4 != 0) return -1;
  size_t written = 0;
  size_t i = 0;
  // Every quad but the last has no padding and makes three bytes.
  if (text.size() > 4) {
    size_t full = text.size() - 4;
    if (full / 4 * 3 > capacity) return -1;
    const auto* in = reinterpret_cast<const unsigned char*>(text.data());
    Avx2Decoded blocks = base64_decode_avx2(in, full, out, capacity, out_is_zeroed);
    if (blocks.invalid) return -1;
    i = blocks.chars;
    written = blocks.bytes;
    constexpr uint64_t kZeros = 0x4141414141414141ull;  // "AAAAAAAA": six zero bytes
    if constexpr (std::endian::native == std::endian::little) {
      // Eight characters at a time, two per table load.
      const PairTable& decode_pair = decode_pair_table();
      for (; i + 8 <= full; i += 8) {
        uint64_t eight;
        std::memcpy(&eight, in + i, sizeof eight);
        if (out_is_zeroed && eight == kZeros) {
          written += 6;
          continue;
        }
        uint32_t p0 = decode_pair[eight & 0xffff], p1 = decode_pair[(eight >> 16) & 0xffff];
        uint32_t p2 = decode_pair[(eight >> 32) & 0xffff], p3 = decode_pair[eight >> 48];
        if (((p0 | p1 | p2 | p3) & ~uint32_t{0xfff}) != 0) return -1;
        uint32_t v0 = (p0 << 12) | p1, v1 = (p2 << 12) | p3;
        out[written] = static_cast<unsigned char>(v0 >> 16);
        out[written + 1] = static_cast<unsigned char>(v0 >> 8);
        out[written + 2] = static_cast<unsigned char>(v0);
        out[written + 3] = static_cast<unsigned char>(v1 >> 16);
        out[written + 4] = static_cast<unsigned char>(v1 >> 8);
        out[written + 5] = static_cast<unsigned char>(v1);
        written += 6;
      }
    }
    for (; i < full; i += 4) {
      if (out_is_zeroed && i + 8 <= full) {
        uint64_t eight;
        std::memcpy(&eight, in + i, sizeof eight);
        if (eight == kZeros) {
          written += 6;
          i += 4;  // the loop adds the other 4
          continue;
        }
      }
      uint32_t a = kDecode[in[i]], b = kDecode[in[i + 1]], c = kDecode[in[i + 2]], d = kDecode[in[i + 3]];
      if (((a | b | c | d) & 0xc0) != 0) return -1;  // kInvalid has those bits; no value does
      uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
      out[written] = static_cast<unsigned char>(v >> 16);
      out[written + 1] = static_cast<unsigned char>(v >> 8);
      out[written + 2] = static_cast<unsigned char>(v);
      written += 3;
    }
  }
  for (; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int a = decode_char(text[i]);
    int b = decode_char(text[i + 1]);
    if (a < 0 || b < 0) return -1;
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    int c = pad >= 2 ? 0 : decode_char(text[i + 2]);
    int d = pad >= 1 ? 0 : decode_char(text[i + 3]);
    if (c < 0 || d < 0) return -1;
    uint32_t v = (uint32_t(a) << 18) | (uint32_t(b) << 12) | (uint32_t(c) << 6) | uint32_t(d);
    size_t n = 3 - static_cast<size_t>(pad);
    if (written + n > capacity) return -1;
    out[written++] = static_cast<unsigned char>(v >> 16);
    if (n > 1) out[written++] = static_cast<unsigned char>(v >> 8);
    if (n > 2) out[written++] = static_cast<unsigned char>(v);
  }
  return static_cast<int64_t>(written);
}

}  // namespace hangshim::report
