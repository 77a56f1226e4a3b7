#include <doctest/doctest.h>

#include <vector>

#include <string>

#include "mini_json.h"
#include "model_samples.h"
#include "pyframes/json_writer.h"
#include "pyframes/render.h"
#include "pyframes/utf8.h"

using namespace pyframes;

namespace {

std::string round_trip(const std::string& text) {
  JsonWriter json;
  json.value(text);
  return mini_json::parse(json.str()).str();
}

bool has_raw_control(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') return true;
  }
  return false;
}

}  // namespace

TEST_CASE("JSON strings: every byte value survives as valid JSON") {
  std::string all;
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    CHECK(round_trip(one) == render::repair_utf8(one));
    all += one;
  }
  CHECK(round_trip(all) == render::repair_utf8(all));
  JsonWriter json;
  json.value(all);
  CHECK_FALSE(has_raw_control(json.str()));
  CHECK(render::repair_utf8(json.str()) == json.str());  // the document itself is valid UTF-8
}

TEST_CASE("JSON strings: non-ASCII text is kept, line separators escaped") {
  const std::string text = "gr\xC3\xBC\xC3\x9F" "e \xE5\x90\x8D\xE5\x89\x8D \xF0\x9F\x90\x8D \xE2\x80\xA8 \"q\" \\ /";
  CHECK(round_trip(text) == text);
  JsonWriter json;
  json.value(text);
  CHECK(json.str().find("\xE2\x80\xA8") == std::string::npos);
  CHECK(json.str().find("\xC3\xBC") != std::string::npos);  // UTF-8 written as is, not \u escaped
}

TEST_CASE("JSON strings: invalid UTF-8 becomes U+FFFD, one per bad byte") {
  const std::string overlong = "a\xC0\xAF" "b";            // overlong '/'
  const std::string surrogate = "\xED\xA0\x80";            // U+D800
  const std::string truncated = "\xE5\x90";                // cut 3-byte sequence
  const std::string too_big = "\xF4\x90\x80\x80";          // beyond U+10FFFF
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(round_trip(overlong) == "a" + fffd + fffd + "b");
  CHECK(round_trip(surrogate) == fffd + fffd + fffd);
  CHECK(round_trip(truncated) == fffd + fffd);
  CHECK(round_trip(too_big) == fffd + fffd + fffd + fffd);
}

TEST_CASE("JsonWriter: compact and pretty output describe the same tree") {
  for (bool pretty : {false, true}) {
    JsonWriter json(pretty);
    json.begin_object();
    json.key("empty_object").begin_object().end_object();
    json.key("empty_array").begin_array().end_array();
    json.key("numbers").begin_array().value(int64_t{-5}).value(uint64_t{18446744073709551615u}).value(0).end_array();
    json.key("flags").begin_array().value(true).value(false).null().end_array();
    json.key("nested").begin_array().begin_object().key("k").value("v").end_object().end_array();
    json.end_object();
    CHECK(json.complete());
    const mini_json::Value doc = mini_json::parse(json.str());
    CHECK(doc["empty_object"].object().empty());
    CHECK(doc["empty_array"].array().empty());
    CHECK(doc["numbers"][0].number() == -5);
    CHECK(doc["numbers"][1].number() == doctest::Approx(18446744073709551615.0));
    CHECK(doc["flags"][0].boolean());
    CHECK_FALSE(doc["flags"][1].boolean());
    CHECK(doc["nested"][0]["k"].str() == "v");
    CHECK((json.str().find('\n') != std::string::npos) == pretty);
  }
}

TEST_CASE("JsonWriter: elements written apart and appended give the same document") {
  // Ten objects in an array inside an object, written in one go, and written as parts of any
  // sizes (empty ones too) by writers from elements_of(), appended in order.
  auto element = [](JsonWriter& j, int i) {
    j.begin_object().field("i", i).key("list").begin_array();
    for (int k = 0; k < i % 3; ++k) j.value(k);
    j.end_array().end_object();
  };
  for (bool pretty : {false, true}) {
    JsonWriter whole(pretty);
    whole.begin_object().key("items").begin_array();
    for (int i = 0; i < 10; ++i) element(whole, i);
    whole.end_array().field("after", true).end_object();
    for (std::vector<int> cuts : {std::vector<int>{0, 10}, {0, 0, 3, 3, 10}, {0, 1, 2, 9, 10, 10}}) {
      CAPTURE(pretty);
      JsonWriter parted(pretty);
      parted.begin_object().key("items").begin_array();
      for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        JsonWriter part = parted.elements_of();
        for (int i = cuts[c]; i < cuts[c + 1]; ++i) element(part, i);
        parted.append_elements(std::move(part));
      }
      parted.end_array().field("after", true).end_object();
      CHECK(parted.str() == whole.str());
    }
    // Nothing appended: an empty array, as written directly.
    JsonWriter none(pretty), direct(pretty);
    none.begin_array();
    none.append_elements(none.elements_of());
    none.end_array();
    direct.begin_array().end_array();
    CHECK(none.str() == direct.str());
  }
}

TEST_CASE("render_json: the document mirrors the model, frames innermost first") {
  Process process = samples::two_thread_process(4242);
  process.warnings = {"thread 4249: state unreadable"};
  process.threads[1].truncated = true;
  process.threads[1].truncation_reason = "frame chain loops back";
  const Frame native = samples::native_frame("epoll_wait", "/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000001234, 0x1234);
  process.threads[0].frames.insert(process.threads[0].frames.begin(), native);

  const auto doc = mini_json::parse(render_json({process}, {}));
  REQUIRE(doc["processes"].array().size() == 1);
  CHECK_FALSE(doc.has("errors"));
  const auto& p = doc["processes"][0];
  CHECK(p["pid"].number() == 4242);
  CHECK(p["python"].str() == process.python_version);
  CHECK(p["truncated"].boolean());
  CHECK(p["warnings"][0].str() == process.warnings[0]);
  REQUIRE(p["threads"].array().size() == process.threads.size());
  for (size_t t = 0; t < process.threads.size(); ++t) {
    const Thread& thread = process.threads[t];
    const auto& jt = p["threads"][t];
    CHECK(jt["thread_id"].number() == doctest::Approx(static_cast<double>(thread.thread_id)));
    CHECK(jt["native_id"].number() == thread.native_id);
    CHECK(jt["name"].str() == thread.name);
    CHECK(jt["gil"].boolean() == thread.gil);
    CHECK(jt.has("truncated") == thread.truncated);
    REQUIRE(jt["frames"].array().size() == thread.frames.size());
    for (size_t f = 0; f < thread.frames.size(); ++f) {
      const Frame& frame = thread.frames[f];
      const auto& jf = jt["frames"][f];
      CHECK(jf["function"].str() == frame.function);
      CHECK(jf["qualname"].str() == (frame.qualname.empty() ? frame.function : frame.qualname));  // never empty
      CHECK(jf["file"].str() == frame.file);
      CHECK(jf["line"].number() == frame.line);
      CHECK(jf["kind"].str() == (frame.kind == Frame::Kind::Native ? "native" : "python"));
    }
  }
  CHECK(p["threads"][0]["frames"][0]["module"].str() == native.module);
  CHECK(p["threads"][0]["frames"][0]["address"].number() == doctest::Approx(static_cast<double>(native.address)));
  CHECK_FALSE(p["threads"][0].has("native_note"));
  CHECK_FALSE(p["threads"][0].has("native_frames"));
}

TEST_CASE("render_json: an unmerged native stack comes with its note") {
  Process process = samples::two_thread_process(4242);
  const Frame native =
      samples::native_frame("pthread_cond_wait", "/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000001234, 0x1234);
  process.threads[1].native_note = "native stack not merged: 1 call of the evaluation loop for 2 runs of Python frames";
  process.threads[1].native_frames = {native};
  const auto doc = mini_json::parse(render_json({process}, {}));
  const auto& thread = doc["processes"][0]["threads"][1];
  CHECK(thread["native_note"].str() == process.threads[1].native_note);
  REQUIRE(thread["native_frames"].array().size() == 1);
  CHECK(thread["native_frames"][0]["kind"].str() == "native");
  CHECK(thread["native_frames"][0]["function"].str() == native.function);
  CHECK(thread["native_frames"][0]["module"].str() == native.module);
  CHECK(thread["frames"].array().size() == process.threads[1].frames.size());  // the Python frames, as read
}

TEST_CASE("render_json: a process without truncation or warnings has neither key, failures are listed") {
  const Process process = samples::two_thread_process(7);
  const FailedTarget failure{99, "process 99", make_error(ErrorKind::PermissionDenied, "cannot attach")};
  const auto doc = mini_json::parse(render_json({process}, {failure}, JsonOptions{true}));
  const auto& p = doc["processes"][0];
  CHECK_FALSE(p.has("truncated"));
  CHECK_FALSE(p.has("warnings"));
  REQUIRE(doc["errors"].array().size() == 1);
  CHECK(doc["errors"][0]["pid"].number() == 99);
  CHECK(doc["errors"][0]["kind"].str() == "permission_denied");
  CHECK(doc["errors"][0]["message"].str() == failure.error.message);
  CHECK(doc["errors"][0]["hint"].str() == default_hint(ErrorKind::PermissionDenied));
}

TEST_CASE("render_json: no processes still gives a valid document") {
  const auto doc = mini_json::parse(render_json({}, {}));
  CHECK(doc["processes"].array().empty());
}
