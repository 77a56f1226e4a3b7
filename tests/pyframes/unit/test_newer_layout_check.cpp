// check_newer_layout (pyframes/src/layout/newer_layout_check.cpp) on synthetic address spaces
// built with 3.13's real layout: a layout that matches the target passes with what it saw; one
// whose offsets are shifted (what reading an older or rearranged _Py_DebugOffsets table as the
// newest layout gives) fails with the check that caught it; random bytes end it quickly.
#include <doctest/doctest.h>

#include <random>

#include "fake_target.h"
#include "layout/newer_layout_check.h"
#include "pyframes/pyframes.h"

using namespace pyframes;
using test_support::CountingMemory;
using test_support::FakeTarget;
using test_support::NoMemory;

namespace {

// 3.13's generated layout, as the layout a 3.16 would be read with.
Layout layout_313() {
  PythonTarget target;
  target.version = PyVersion{3, 13, 0, 0};
  NoMemory memory;
  auto layout = select_layout(memory, target);
  REQUIRE(layout.ok());
  REQUIRE(layout->interpreter.size > 0);
  REQUIRE(layout->thread_state.size > 0);
  REQUIRE(layout->interpreter_frame.size > 0);
  REQUIRE(layout->code.size > 0);
  return *layout;
}

// Two threads: one in b.py called from a.py, one with no Python frames.
void add_threads(FakeTarget& fake) {
  uint64_t outer = fake.make_frame(fake.make_code("outer", "/src/a.py", 10), 0);
  uint64_t inner = fake.make_frame(fake.make_code("inner", "/src/b.py", 20), outer);
  fake.add_thread(0x1234, inner);
  fake.add_thread(0x5678, 0);
}

std::string failure(FakeTarget& fake, const Layout& layout) {
  auto result = check_newer_layout(fake.memory(), fake.target(), layout);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::UnsupportedVersion);
  return result.error().message;
}

}  // namespace

TEST_CASE("newer layout check: a layout that matches the target passes with what it saw") {
  FakeTarget fake(layout_313());
  add_threads(fake);
  auto result = check_newer_layout(fake.memory(), fake.target(), fake.layout());
  REQUIRE_MESSAGE(result.ok(), result.error().message);
  CHECK(result->threads == 2);
  CHECK(result->code_objects == 2);
}

TEST_CASE("newer layout check: offsets the target does not bear out are refused, naming the check") {
  FakeTarget fake(layout_313());
  add_threads(fake);
  SUBCASE("a thread state's interp pointer") {
    Layout shifted = fake.layout();
    shifted.thread_state.interp += 8;
    CHECK(failure(fake, shifted).find("does not point back at its interpreter") != std::string::npos);
  }
  SUBCASE("a frame's executable") {
    Layout shifted = fake.layout();
    shifted.interpreter_frame.executable = shifted.interpreter_frame.previous;
    CHECK(failure(fake, shifted).find("instead of a code object") != std::string::npos);
  }
  SUBCASE("a code object's file name") {
    Layout shifted = fake.layout();
    shifted.code.filename = shifted.code.localsplusnames;  // a tuple in CPython, unset here
    CHECK(failure(fake, shifted).find("has no str file name") != std::string::npos);
  }
  SUBCASE("an offset outside its section") {
    Layout shifted = fake.layout();
    shifted.code.filename = shifted.code.size + 64;
    CHECK(failure(fake, shifted).find("code_object.filename at") != std::string::npos);
  }
  SUBCASE("a section size no CPython has") {
    Layout shifted = fake.layout();
    shifted.thread_state.size = 16;
    CHECK(failure(fake, shifted).find("thread_state size 16") != std::string::npos);
  }
  SUBCASE("a misaligned pointer field") {
    Layout shifted = fake.layout();
    shifted.interpreter.tstate_head += 4;
    CHECK(failure(fake, shifted).find("not 8-aligned") != std::string::npos);
  }
}

TEST_CASE("newer layout check: without Python frames nothing confirms the layout") {
  FakeTarget fake(layout_313());
  fake.add_thread(1, 0);
  CHECK(failure(fake, fake.layout()).find("no thread runs Python code") != std::string::npos);
  FakeTarget empty(layout_313());
  CHECK(failure(empty, empty.layout()).find("no thread state") != std::string::npos);
}

TEST_CASE("newer layout check: random bytes end it after a bounded number of reads") {
  std::mt19937_64 rng(21);
  for (int round = 0; round < 50; ++round) {
    FakeTarget fake(layout_313());
  add_threads(fake);
    auto& raw = fake.memory().raw();
    for (size_t i = 0; i < raw.size(); i += 8) {
      // Pointers into the fake space half the time, so the reads go somewhere.
      uint64_t value = rng() % 2 ? test_support::FakeMemory::kBase + (rng() % raw.size()) : rng();
      if (i + 8 <= raw.size()) std::memcpy(raw.data() + i, &value, 8);
    }
    CountingMemory counting(fake.memory());
    (void)check_newer_layout(counting, fake.target(), fake.layout());
    // Threads x frames x reads per frame (a type name is at most 16 one-byte reads), and the lists.
    CHECK(counting.reads < 64 * 64 * 48 + 64 * 4 + 16);
  }
}
