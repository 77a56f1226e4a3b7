#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "model_samples.h"
#include "pyframes/json_reader.h"
#include "pyframes/json_writer.h"
#include "pyframes/render.h"
#include "pyframes/utf8.h"

using namespace pyframes;

TEST_CASE("json reader: values, exact 64-bit integers, escapes") {
  auto doc = parse_json(
      R"( {"a": [1, -2, 3.5, 1e3, true, false, null], "big": 18446744073709551615, "min": -9223372036854775808,
          "s": "q\"\\\/\b\f\n\r\tx\u00e9\ud83d\ude00", "nested": {"k": {}} } )");
  REQUIRE(doc.ok());
  const JsonValue& a = *doc->find("a");
  REQUIRE(a.items().size() == 7);
  CHECK(a.items()[0].int64() == 1);
  CHECK(a.items()[1].int64() == -2);
  CHECK_FALSE(a.items()[1].uint64().has_value());
  CHECK_FALSE(a.items()[2].int64().has_value());
  CHECK(a.items()[2].number() == 3.5);
  CHECK(a.items()[3].number() == 1000.0);
  CHECK_FALSE(a.items()[3].int64().has_value());
  CHECK(a.items()[4].boolean() == true);
  CHECK(a.items()[5].boolean() == false);
  CHECK(a.items()[6].is_null());
  CHECK(doc->find("big")->uint64() == UINT64_MAX);
  CHECK_FALSE(doc->find("big")->int64().has_value());
  CHECK(doc->find("min")->int64() == INT64_MIN);
  CHECK(*doc->find("s")->string() == "q\"\\/\b\f\n\r\tx\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(doc->find("nested")->find("k")->is_object());
  CHECK(doc->find("missing") == nullptr);
  CHECK(a.find("x") == nullptr);
}

TEST_CASE("json reader: a lone surrogate becomes U+FFFD") {
  auto doc = parse_json(R"(["\ud800", "\udc00x", "\ud800\u0041"])");
  REQUIRE(doc.ok());
  CHECK(*doc->items()[0].string() == "\xEF\xBF\xBD");
  CHECK(*doc->items()[1].string() == "\xEF\xBF\xBDx");
  CHECK(*doc->items()[2].string() == "\xEF\xBF\xBD" "A");
}

TEST_CASE("json reader: malformed input is an error naming the byte, never a crash") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "1e", "-", "\"abc", "\"a\x01\"", "[1 2]",
                          "{\"a\" 1}", "{1:2}", "tru", "nul", "\"\\x\"", "\"\\u12g4\"", "[] []", "+1", ".5"}) {
    INFO("input: " << bad);
    auto doc = parse_json(bad);
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.error().kind == ErrorKind::Corrupt);
    CHECK(doc.error().message.find("at byte") != std::string::npos);
  }
}

TEST_CASE("json reader: long strings (scanned 32 bytes at a time where the CPU can) end, unescape and fail where they should") {
  for (size_t length = 0; length < 140; ++length) {
    std::string plain(length, 'x');
    for (size_t i = 0; i < length; ++i) plain[i] = static_cast<char>('A' + (i * 7) % 26);
    auto doc = parse_json("[\"" + plain + "\", 1]");
    REQUIRE(doc.ok());
    REQUIRE(doc->items().size() == 2);
    CHECK(*doc->items()[0].string() == plain);
    for (size_t at = 0; at < length; at += length < 70 ? 1 : 5) {
      INFO("length " << length << ", special byte at " << at);
      std::string escaped = plain.substr(0, at) + "\\n" + plain.substr(at);  // an escape there
      auto e = parse_json("\"" + escaped + "\"");
      REQUIRE(e.ok());
      CHECK(*e->string() == plain.substr(0, at) + "\n" + plain.substr(at));
      std::string control = plain;  // a raw control character there
      control[at] = '\x1f';
      CHECK_FALSE(parse_json("\"" + control + "\"").ok());
      std::string cut = plain.substr(0, at);  // the string ends there
      auto c = parse_json("\"" + cut + "\"");
      REQUIRE(c.ok());
      CHECK(*c->string() == cut);
    }
  }
}

TEST_CASE("json reader: a Views parse keeps plain strings as views into the text and reads the same values") {
  for (size_t length = 0; length < 140; length += 3) {
    std::string plain(length, 'x');
    for (size_t i = 0; i < length; ++i) plain[i] = static_cast<char>('A' + (i * 5) % 26);
    for (size_t at = 0; at <= length; at += length < 40 ? 1 : 7) {
      INFO("length " << length << ", escape at " << at);
      std::string escaped = plain.substr(0, at) + "\\t" + plain.substr(at);
      const std::string text = "{\"plain\": \"" + plain + "\", \"escaped\": \"" + escaped + "\", \"n\": [\"" + plain + "\"]}";
      auto viewed = parse_json(text, JsonStrings::Views);
      auto copied = parse_json(text);
      REQUIRE(viewed.ok());
      REQUIRE(copied.ok());
      // The plain string lies in the text itself: its characters were not copied.
      std::string_view v = *viewed->find("plain")->text();
      CHECK(v == plain);
      CHECK(v.data() >= text.data());
      CHECK(v.data() + v.size() <= text.data() + text.size());
      CHECK(*viewed->find("n")->items()[0].text() == plain);
      // The escaped one was decoded into the value, as a Copied parse does.
      std::string_view e = *viewed->find("escaped")->text();
      CHECK(e == *copied->find("escaped")->string());
      CHECK((e.data() < text.data() || e.data() >= text.data() + text.size()));
      // string() reads the same as a Copied parse's, the view's characters copied once asked.
      CHECK(*viewed->find("plain")->string() == *copied->find("plain")->string());
      CHECK(*viewed->find("escaped")->string() == *copied->find("escaped")->string());
      CHECK(*copied->find("plain")->text() == plain);
    }
  }
  auto doc = parse_json(R"({"k": 1})", JsonStrings::Views);
  REQUIRE(doc.ok());
  CHECK_FALSE(doc->find("k")->text().has_value());
  CHECK(doc->find("k")->string() == nullptr);
  CHECK(doc->keys().front() == "k");
  CHECK_FALSE(parse_json("[\"unterminated]", JsonStrings::Views).ok());
  CHECK_FALSE(parse_json("[\"raw \x01 control\"]", JsonStrings::Views).ok());
}

TEST_CASE("json reader: nesting is bounded") {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  CHECK(parse_json(ok).ok());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto doc = parse_json(deep);
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.error().message.find("nesting deeper than") != std::string::npos);
}

TEST_CASE("json reader: documents one after another") {
  auto docs = parse_json_stream("{\"a\":1}\n{\"a\":2} [3]\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 3);
  CHECK(docs->at(1).find("a")->int64() == 2);
  CHECK_FALSE(parse_json_stream(" \n ").ok());
  CHECK_FALSE(parse_json_stream("{\"a\":1} {").ok());
}

TEST_CASE("json reader: every byte value written by JsonWriter reads back as its UTF-8 repair") {
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all += static_cast<char>(byte);
  all += "\xE2\x80\xA8\xF0\x9F\x98\x80";
  JsonWriter json;
  json.value(all);
  auto doc = parse_json(json.str());
  REQUIRE(doc.ok());
  CHECK(*doc->string() == render::repair_utf8(all));
}

TEST_CASE("json dump: render_json and dump_from_json are inverses") {
  Process process = samples::two_thread_process(4242);
  process.rank = "3";
  process.local_rank = "1";
  process.fatal_signal = "SIGABRT (raised by the process itself)";
  process.warnings = {"thread list cut short"};
  process.threads[0].frames[0].locals = {Local{"step", "1005", false}, Local{"self", "<Trainer object at 0x1>", true}};
  process.threads[0].frames[0].locals[0].address = 0x7f0000001000;
  process.threads[0].frames[0].globals = {Local{"STEP", "7", false, 0x7f0000002000}};
  process.threads[0].frames[0].builtins = {Local{"len", "<built-in function len>", false, 0x7f0000003000}};
  process.threads[0].frames[2].is_entry = true;
  process.threads[0].frames[1].frame_address = 0x7f00deadbe00;
  process.threads[1].truncated = true;
  process.threads[1].truncation_reason = "the frame chain loops";
  process.threads[1].thread_id = UINT64_MAX - 5;
  Frame native;
  native.kind = Frame::Kind::Native;
  native.function = "";
  native.module = "/lib/libc.so.6";
  native.address = 0x7f0000001234;
  native.offset = 0x1234;
  process.threads[1].frames.push_back(native);
  process.threads[0].native_note = "native stack not merged: 1 call of the evaluation loop for 2 runs of Python frames";
  process.threads[0].native_frames = {native, samples::native_frame("main", "/usr/bin/python3.11", 0x401000, 0x401000)};
  FailedTarget failure{77, "process 77", make_error(ErrorKind::PermissionDenied, "cannot read", "run as root")};

  auto doc = parse_json(render_json({process, samples::two_thread_process(5)}, {failure}));
  REQUIRE(doc.ok());
  auto dump = dump_from_json(*doc);
  REQUIRE(dump.ok());
  REQUIRE(dump->processes.size() == 2);
  const Process& back = dump->processes[0];
  CHECK(back.pid == 4242);
  CHECK(back.source == process.source);
  CHECK(back.python_version == "3.11.7");
  CHECK(back.executable == process.executable);
  CHECK(back.command_line == process.command_line);
  CHECK(back.rank == "3");
  CHECK(back.local_rank == "1");
  CHECK(back.fatal_signal == process.fatal_signal);
  CHECK(back.warnings == process.warnings);
  REQUIRE(back.threads.size() == 2);
  for (size_t t = 0; t < 2; ++t) {
    const Thread& want = process.threads[t];
    const Thread& got = back.threads[t];
    CHECK(got.thread_id == want.thread_id);
    CHECK(got.native_id == want.native_id);
    CHECK(got.name == want.name);
    CHECK(got.gil == want.gil);
    CHECK(got.state == want.state);
    CHECK(got.truncated == want.truncated);
    CHECK(got.truncation_reason == want.truncation_reason);
    CHECK(got.native_note == want.native_note);
    REQUIRE(got.frames.size() == want.frames.size());
    REQUIRE(got.native_frames.size() == want.native_frames.size());
    std::vector<std::pair<const Frame*, const Frame*>> pairs;
    for (size_t f = 0; f < want.frames.size(); ++f) pairs.emplace_back(&got.frames[f], &want.frames[f]);
    for (size_t f = 0; f < want.native_frames.size(); ++f) pairs.emplace_back(&got.native_frames[f], &want.native_frames[f]);
    for (const auto& [got_frame, want_frame] : pairs) {
      const Frame& a = *got_frame;
      const Frame& b = *want_frame;
      CHECK(a.kind == b.kind);
      CHECK(a.function == b.function);
      CHECK(a.qualname == (b.qualname.empty() ? b.function : b.qualname));
      CHECK(a.file == b.file);
      CHECK(a.line == b.line);
      CHECK(a.is_entry == b.is_entry);
      CHECK(a.frame_address == b.frame_address);
      CHECK(a.address == b.address);
      CHECK(a.offset == b.offset);
      CHECK(a.module == b.module);
      for (auto [x, y] : {std::pair{&a.locals, &b.locals}, std::pair{&a.globals, &b.globals},
                          std::pair{&a.builtins, &b.builtins}}) {
        REQUIRE(x->size() == y->size());
        for (size_t l = 0; l < x->size(); ++l) {
          CHECK((*x)[l].name == (*y)[l].name);
          CHECK((*x)[l].repr == (*y)[l].repr);
          CHECK((*x)[l].is_argument == (*y)[l].is_argument);
          CHECK((*x)[l].address == (*y)[l].address);
        }
      }
    }
  }
  REQUIRE(dump->failures.size() == 1);
  CHECK(dump->failures[0].pid == 77);
  CHECK(dump->failures[0].target == "process 77");
  CHECK(dump->failures[0].error.kind == ErrorKind::PermissionDenied);
  CHECK(dump->failures[0].error.message == "cannot read");
  CHECK(dump->failures[0].error.hint == "run as root");
}

TEST_CASE("json dump: a document of the wrong shape names the field") {
  struct Case {
    const char* text;
    const char* mentions;
  };
  const Case cases[] = {
      {"[]", "the document is not an object"},
      {"{}", "no \"processes\" array"},
      {R"({"processes": 3})", "processes is not an array"},
      {R"({"processes": [{"pid": 1}]})", "processes[0].threads is missing"},
      {R"({"processes": [{"threads": [{"frames": [{"function": "f", "file": "a.py", "line": "9"}]}]}]})",
       "processes[0].threads[0].frames[0].line is not an integer"},
      {R"({"processes": [{"threads": [{"frames": [{"function": "f", "line": 9}]}]}]})",
       "processes[0].threads[0].frames[0].file is missing"},
      {R"({"processes": [{"threads": [{"state": "asleep", "frames": []}]}]})",
       "processes[0].threads[0].state is not a thread state"},
      {R"({"processes": [{"threads": [{"frames": [{"function": "f", "file": "a", "line": 1, "kind": "rust"}]}]}]})",
       "kind is neither"},
      {R"({"processes": [{"pid": 1.5, "threads": []}]})", "processes[0].pid is not an integer"},
      {R"({"processes": [{"command_line": ["a", 2], "threads": []}]})", "command_line[1] is not a string"},
      {R"({"processes": [], "errors": [{"pid": 1}]})", "errors[0].target is missing"},
      {R"({"processes": [{"threads": [], "mappings": 7}]})", "processes[0].mappings is not an array"},
      {R"({"processes": [{"threads": [], "mappings": [{"start": 8192, "end": 4096, "path": "/x"}]}]})",
       "processes[0].mappings[0].end is not past start"},
      {R"({"processes": [{"threads": [], "mappings": [{"start": -1, "end": 4096}]}]})",
       "processes[0].mappings[0].start is not an unsigned integer"},
  };
  for (const Case& c : cases) {
    INFO("document: " << c.text);
    auto doc = parse_json(c.text);
    REQUIRE(doc.ok());
    auto dump = dump_from_json(*doc);
    REQUIRE_FALSE(dump.ok());
    CHECK(dump.error().kind == ErrorKind::Corrupt);
    CHECK(dump.error().message.find(c.mentions) != std::string::npos);
  }
}

TEST_CASE("json dump: a debugger's mappings are read per process (pyframes writes none)") {
  auto doc = parse_json(R"({"processes": [{"threads": []},
      {"threads": [], "mappings": [{"start": 4194304, "end": 4198400, "offset": 0, "path": "/usr/bin/python3.11"},
                                   {"start": 8192, "end": 12288}]}]})");
  REQUIRE(doc.ok());
  auto dump = dump_from_json(*doc);
  REQUIRE(dump.ok());
  REQUIRE(dump->mappings.size() == 2);
  CHECK(dump->mappings[0].empty());
  REQUIRE(dump->mappings[1].size() == 2);
  CHECK(dump->mappings[1][0].start == 0x400000);
  CHECK(dump->mappings[1][0].end == 0x401000);
  CHECK(dump->mappings[1][0].path == "/usr/bin/python3.11");
  CHECK(dump->mappings[1][1].path.empty());
  CHECK(render_json(dump->processes, {}).find("mappings") == std::string::npos);
}

TEST_CASE("json dump: unknown fields are ignored, nulls count as absent") {
  auto doc = parse_json(
      R"({"processes": [{"pid": 3, "rank": null, "future": {"x": [1]}, "threads": [{"frames": [], "new": 1}]}],
          "merged": {"tree": []}})");
  REQUIRE(doc.ok());
  auto dump = dump_from_json(*doc);
  REQUIRE(dump.ok());
  CHECK(dump->processes[0].pid == 3);
  CHECK(dump->processes[0].rank.empty());
}

TEST_CASE("json dump: a process's object offsets (what the gdb extension reads raw memory with) read back") {
  Process process = samples::two_thread_process(11);
  process.object_offsets = ObjectOffsets{24, 40, 40};  // a free-threaded header's
  auto doc = parse_json(render_json({process, samples::two_thread_process(12)}, {}));
  REQUIRE(doc.ok());
  auto dump = dump_from_json(*doc);
  REQUIRE(dump.ok());
  const ObjectOffsets& back = dump->processes[0].object_offsets;
  CHECK(back.ob_type == 24);
  CHECK(back.tp_name == 40);
  CHECK(back.cfunction_self == 40);
  CHECK_FALSE(dump->processes[1].object_offsets.known());  // unknown: not written, not made up

  auto wrong = parse_json(R"({"processes": [{"threads": [], "object_offsets": {"ob_type": 8, "tp_name": 24}}]})");
  REQUIRE(wrong.ok());
  auto refused = dump_from_json(*wrong);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("processes[0].object_offsets.cfunction_self is missing") != std::string::npos);
}
