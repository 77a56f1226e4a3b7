// The JSON reader behind exports: exact integers, escapes, and hostile text as errors.
#include <doctest/doctest.h>

#include <string>

#include "pyframes/json_writer.h"
#include "report/json_value.h"

using hangshim::report::JsonValue;
using hangshim::report::parse_json;

TEST_CASE("report json: values, exact 64-bit integers and escapes round-trip through the writer") {
  pyframes::JsonWriter w;
  w.begin_object().field("big", uint64_t{18446744073709551615ull}).field("neg", int64_t{-9223372036854775807ll - 1});
  w.field("text", std::string("tab\there \"q\" \xE2\x82\xAC \x01 end")).field("flag", true);
  w.key("list").begin_array().value(1).value("two").null().end_array().end_object();
  auto v = parse_json(w.str(), "test");
  REQUIRE(v);
  CHECK(v->get_u64("big") == 18446744073709551615ull);
  CHECK(v->get_i64("neg") == -9223372036854775807ll - 1);
  CHECK(v->get_str("text") == "tab\there \"q\" \xE2\x82\xAC \x01 end");
  CHECK(v->get_bool("flag"));
  REQUIRE(v->find("list") != nullptr);
  CHECK(v->find("list")->items().size() == 3);
  CHECK(v->find("list")->items()[1].str() == "two");
  auto pair = parse_json("\"\\ud83d\\ude00 \\u00e9\"", "test");
  REQUIRE(pair);
  CHECK(pair->str() == "\xF0\x9F\x98\x80 \xC3\xA9");
  // Mistyped reads fall back instead of failing.
  CHECK(v->get_u64("text", 7) == 7);
  CHECK(v->get_u64("neg", 9) == 9);
}

TEST_CASE("report json: malformed and hostile text is an error naming the offset") {
  const char* bad[] = {"", "{", "[1,]", "{\"a\" 1}", "01", "\"unterminated", "[1] 2", "tru", "{\"a\":\"\x01\"}", "1.", "-"};
  for (const char* text : bad) {
    auto v = parse_json(text, "bad.json");
    CHECK_FALSE(v);
    if (!v) CHECK(v.error().message.find("bad.json: not valid JSON at byte") == 0);
  }
  std::string deep(100000, '[');
  auto v = parse_json(deep, "deep.json");
  REQUIRE_FALSE(v);
  CHECK(v.error().message.find("nested deeper than 64 levels") != std::string::npos);
}
