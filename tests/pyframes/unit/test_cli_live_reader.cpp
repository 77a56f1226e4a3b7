#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "pyframes/live_reader.h"
#include "model_samples.h"

using namespace pyframes;

namespace {
bool gone(int64_t) { return true; }
bool alive(int64_t) { return false; }
}  // namespace

TEST_CASE("cli live reader: a zombie and a reaped child have exited, this process has not") {
  CHECK_FALSE(process_exited(::getpid()));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  // Until it is reaped the child is a zombie; give the kernel a moment to finish its exit.
  bool zombie = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // only a bug reaches it
  while (!zombie && std::chrono::steady_clock::now() < deadline) {
    zombie = process_exited(child);
    if (!zombie) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(zombie);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  CHECK(process_exited(child));
}

TEST_CASE("cli live reader: failures and cut stacks of an exited process become one ProcessGone") {
  auto corrupt = explain_exit(7, Result<Process>(make_error(ErrorKind::Corrupt, "bad frame")), gone);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.error().kind == ErrorKind::ProcessGone);

  Process cut = samples::two_thread_process(7);
  cut.threads[0].truncated = true;
  auto truncated = explain_exit(7, Result<Process>(cut), gone);
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().kind == ErrorKind::ProcessGone);
}

TEST_CASE("cli live reader: complete reads, live targets and errors that already explain stay as they are") {
  CHECK(explain_exit(7, Result<Process>(samples::two_thread_process(7)), gone).ok());  // complete: keep it
  Process cut = samples::two_thread_process(7);
  cut.threads[1].truncated = true;
  auto kept = explain_exit(7, Result<Process>(cut), alive);
  REQUIRE(kept.ok());
  CHECK(kept->threads[1].truncated);
  auto denied = explain_exit(7, Result<Process>(make_error(ErrorKind::PermissionDenied, "no")), alive);
  CHECK(denied.error().kind == ErrorKind::PermissionDenied);
  auto missing = explain_exit(7, Result<Process>(make_error(ErrorKind::NotFound, "no process 7")), gone);
  CHECK(missing.error().kind == ErrorKind::NotFound);
}
