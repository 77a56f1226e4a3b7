// The walker on synthetic address spaces built with each version's real layout: a healthy
// chain reads back exactly, and loops, garbage pointers, non-code objects, huge depths and
// random bytes end a thread's walk with a reason instead of a crash or a hang.
#include <doctest/doctest.h>

#include <random>

#include "fake_target.h"
#include "pyframes/callsite.h"
#include "pyframes/pyframes.h"

using namespace pyframes;
using test_support::CountingMemory;
using test_support::FakeTarget;
using test_support::NoMemory;

namespace {

Layout layout_for(int minor) {
  PythonTarget target;
  target.version = PyVersion{3, minor, 0, 0};
  NoMemory memory;
  auto layout = select_layout(memory, target);
  REQUIRE(layout.ok());
  return *layout;
}

const int kMinors[] = {6, 9, 10, 11, 12, 13};

// "Never hangs", decided by work rather than wall time: a walk is bounded by its caps (4096
// frames, each a bounded number of reads), so it makes far fewer reads than this (a garbage
// walk here makes under a hundred); a walk that loops without end passes it.
const uint64_t kMaxReads = 4096 * 1000;

Process read(FakeTarget& fake, size_t max_frames = 4096) {
  ReadOptions options;
  options.max_frames = max_frames;
  auto process = read_stacks(fake.memory(), fake.target(), fake.layout(), options);
  REQUIRE_MESSAGE(process.ok(), process.error().message);
  return *process;
}

}  // namespace

TEST_CASE("a synthetic frame chain reads back exactly, for every frame model") {
  for (int minor : kMinors) {
    CAPTURE(minor);
    FakeTarget fake(layout_for(minor));
    uint64_t outer = fake.make_frame(fake.make_code("outer", "/src/a.py", 10), 0);
    uint64_t inner = fake.make_frame(fake.make_code("inner", "/src/b.py", 20), outer);
    fake.add_thread(0x1234, inner);
    Process process = read(fake);
    REQUIRE(process.threads.size() == 1);
    const Thread& thread = process.threads[0];
    CHECK(thread.thread_id == 0x1234);
    CHECK_FALSE(thread.truncated);
    REQUIRE(thread.frames.size() == 2);
    CHECK(thread.frames[0].function == "inner");
    CHECK(thread.frames[0].file == "/src/b.py");
    CHECK(thread.frames[0].line == 21);
    CHECK(thread.frames[1].function == "outer");
    CHECK(thread.frames[1].line == 11);
    CHECK(thread.frames[0].qualname == (minor >= 11 ? "Q.inner" : "inner"));
  }
}

TEST_CASE("3.12+ shim frames are skipped and mark the frame above them as an entry frame") {
  for (int minor : {12, 13}) {
    CAPTURE(minor);
    FakeTarget fake(layout_for(minor));
    uint64_t code = fake.make_code("f", "/f.py", 1);
    uint64_t shim_owner = static_cast<uint64_t>(fake.layout().interpreter_frame.owner_shim);
    uint64_t bottom_shim = fake.make_frame(fake.make_code("shim", "", 0), 0, 0, static_cast<uint8_t>(shim_owner));
    uint64_t outer = fake.make_frame(code, bottom_shim);
    uint64_t middle = fake.make_frame(code, outer);
    uint64_t shim = fake.make_frame(code, middle, 0, static_cast<uint8_t>(shim_owner));
    uint64_t inner = fake.make_frame(code, shim);
    fake.add_thread(1, inner);
    Process process = read(fake);
    REQUIRE(process.threads[0].frames.size() == 3);
    CHECK(process.threads[0].frames[0].is_entry);   // called from C: a shim below it
    CHECK_FALSE(process.threads[0].frames[1].is_entry);
    CHECK(process.threads[0].frames[2].is_entry);
  }
}

TEST_CASE("a looping frame chain is cut with a reason") {
  for (int minor : kMinors) {
    CAPTURE(minor);
    FakeTarget fake(layout_for(minor));
    uint64_t code = fake.make_code("loop", "/l.py", 1);
    uint64_t a = fake.make_frame(code, 0);
    uint64_t b = fake.make_frame(code, a);
    uint64_t c = fake.make_frame(code, b);
    fake.set_frame_back(a, c);  // a -> c -> b -> a ...
    fake.add_thread(1, c);
    Process process = read(fake);
    const Thread& thread = process.threads[0];
    CHECK(thread.truncated);
    CHECK(thread.truncation_reason.find("loops") != std::string::npos);
    CHECK(thread.frames.size() <= 8);
    // The shim's walk stops too, within its capacity.
    CodeLocation out[16];
    CHECK(collect_code_locations(fake.memory(), fake.layout(), fake.add_thread(2, c), out, 16) <= 8);
  }
}

TEST_CASE("garbage pointers and non-code objects end the walk with a reason") {
  for (int minor : kMinors) {
    CAPTURE(minor);
    FakeTarget fake(layout_for(minor));
    uint64_t good = fake.make_frame(fake.make_code("good", "/g.py", 1), 0xdead0000);  // back into nothing
    fake.add_thread(1, good);
    uint64_t not_code = fake.make_frame(fake.make_str("not a code object"), 0);
    fake.add_thread(2, not_code);
    fake.add_thread(3, 0x7);  // misaligned frame pointer
    Process process = read(fake);
    REQUIRE(process.threads.size() == 3);
    for (const auto& thread : process.threads) {
      CAPTURE(thread.thread_id);
      CHECK(thread.truncated);
      CHECK_FALSE(thread.truncation_reason.empty());
    }
    CHECK(process.threads[0].frames.size() == 1);  // thread 1 keeps its readable frame
  }
}

TEST_CASE("max_frames bounds deep stacks") {
  FakeTarget fake(layout_for(12));
  uint64_t code = fake.make_code("deep", "/d.py", 1);
  uint64_t frame = 0;
  for (int i = 0; i < 500; ++i) frame = fake.make_frame(code, frame);
  fake.add_thread(1, frame);
  Process process = read(fake, 100);
  CHECK(process.threads[0].frames.size() == 100);
  CHECK(process.threads[0].truncated);
  Process full = read(fake);
  CHECK(full.threads[0].frames.size() == 500);
  CHECK_FALSE(full.threads[0].truncated);
}

TEST_CASE("a looping thread list and an unreadable interpreter are reported, not followed forever") {
  FakeTarget fake(layout_for(10));
  uint64_t code = fake.make_code("f", "/f.py", 1);
  uint64_t t1 = fake.add_thread(1, fake.make_frame(code, 0));
  uint64_t t2 = fake.add_thread(2, fake.make_frame(code, 0));
  fake.memory().put<uint64_t>(t1 + static_cast<uint64_t>(fake.layout().thread_state.next), t2);  // t2 -> t1 -> t2
  Process process = read(fake);
  CHECK(process.threads.size() <= 4);
  CHECK_FALSE(process.warnings.empty());

  PythonTarget nowhere = fake.target();
  nowhere.runtime_address = 0xdead0000;  // a runtime address where nothing is mapped
  auto failed = read_stacks(fake.memory(), nowhere, fake.layout(), ReadOptions{});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().kind == ErrorKind::BadAddress);
}

TEST_CASE("random bytes never crash or hang the walk") {
  std::mt19937_64 random(20240607);
  for (int minor : kMinors) {
    CAPTURE(minor);
    for (int round = 0; round < 40; ++round) {
      FakeTarget fake(layout_for(minor));
      uint64_t code = fake.make_code("f", "/f.py", 1);
      uint64_t frame = 0;
      for (int i = 0; i < 5; ++i) frame = fake.make_frame(code, frame);
      fake.add_thread(1, frame);
      // Overwrite a random part of the address space (after the type objects) with noise, some
      // of it pointers back into the space.
      auto& bytes = fake.memory().raw();
      size_t start = 3 * 1024 + random() % (bytes.size() - 3 * 1024);
      size_t length = std::min<size_t>(bytes.size() - start, 64 + random() % 512);
      for (size_t i = 0; i + 8 <= length; i += 8) {
        uint64_t value = random() % 3 == 0 ? test_support::FakeMemory::kBase + random() % bytes.size() : random();
        std::memcpy(bytes.data() + start + i, &value, 8);
      }
      ReadOptions options;
      options.locals = true;
      CountingMemory counted(fake.memory());
      auto process = read_stacks(counted, fake.target(), fake.layout(), options);
      CHECK(counted.reads < kMaxReads);
      if (process.ok()) {
        for (const auto& thread : process->threads) CHECK(thread.frames.size() <= 4096);
      }
    }
  }
}
