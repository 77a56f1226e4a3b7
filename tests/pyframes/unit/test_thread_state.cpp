#include <doctest/doctest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "model_samples.h"
#include "pyframes/thread_activity.h"

using namespace pyframes;

namespace {

Thread thread_in(const std::string& function, const std::string& file) {
  Thread thread;
  thread.native_id = 77;
  thread.frames = {samples::python_frame(function, file, 10), samples::python_frame("main", "/job/train.py", 5)};
  return thread;
}

KernelThreadState asleep_in(int64_t syscall, uint64_t first_argument = 0) {
  KernelThreadState kernel;
  kernel.state = 'S';
  kernel.syscall = syscall;
  kernel.syscall_args = {first_argument, 0x80, 0, 0, 0, 0};
  return kernel;
}

const GilLockRanges kGil = {AddressRange{0x1000, 0x10b0}};

}  // namespace

TEST_CASE("thread state: the GIL holder holds the GIL whatever the kernel says") {
  Thread thread = thread_in("step", "/job/train.py");
  thread.gil = true;
  KernelThreadState kernel = asleep_in(SYS_futex, 0x1010);
  CHECK(classify_thread(thread, &kernel, kGil, true) == ThreadState::HoldsGil);
  CHECK(classify_thread(thread, nullptr, {}, true) == ThreadState::HoldsGil);
}

TEST_CASE("thread state: on a CPU without the GIL is running") {
  KernelThreadState kernel;
  kernel.state = 'R';
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &kernel, kGil, true) == ThreadState::Running);
}

TEST_CASE("thread state: a futex on the GIL's locks is a wait for the GIL, any other futex is idle") {
  const Thread thread = thread_in("step", "/job/train.py");
  KernelThreadState on_gil = asleep_in(SYS_futex, 0x1040);
  KernelThreadState on_lock = asleep_in(SYS_futex, 0x2040);
  KernelThreadState past_end = asleep_in(SYS_futex, 0x10b0);
  CHECK(classify_thread(thread, &on_gil, kGil, true) == ThreadState::WaitingForGil);
  CHECK(classify_thread(thread, &on_lock, kGil, true) == ThreadState::Idle);
  CHECK(classify_thread(thread, &past_end, kGil, true) == ThreadState::Idle);
}

TEST_CASE("thread state: blocked in any other system call is idle") {
  const Thread thread = thread_in("step", "/job/train.py");
  for (int64_t call : {static_cast<int64_t>(SYS_clock_nanosleep), static_cast<int64_t>(SYS_read),
                       static_cast<int64_t>(SYS_epoll_wait), static_cast<int64_t>(SYS_wait4)}) {
    KernelThreadState kernel = asleep_in(call, 0x1040);
    CHECK(classify_thread(thread, &kernel, kGil, true) == ThreadState::Idle);
  }
  KernelThreadState disk = asleep_in(SYS_read);
  disk.state = 'D';
  CHECK(classify_thread(thread, &disk, kGil, true) == ThreadState::Idle);
}

TEST_CASE("thread state: without the GIL's address, a futex outside known waits while another holds the GIL") {
  KernelThreadState futex = asleep_in(SYS_futex, 0x5000);
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &futex, {}, true) == ThreadState::WaitingForGil);
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &futex, {}, false) == ThreadState::Idle);
  CHECK(classify_thread(thread_in("wait", "/usr/lib/python3.11/threading.py"), &futex, {}, true) == ThreadState::Idle);
  KernelThreadState unreadable;  // /proc/PID/task/TID/syscall denied: wchan only
  unreadable.state = 'S';
  unreadable.wchan = "futex_wait_queue";
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &unreadable, kGil, true) == ThreadState::WaitingForGil);
  unreadable.wchan = "do_nanosleep";
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &unreadable, kGil, true) == ThreadState::Idle);
}

TEST_CASE("thread state: without the kernel (core files) the frames tell idle threads") {
  for (const auto& [function, file] : std::vector<std::pair<std::string, std::string>>{
           {"wait", "/usr/lib/python3.11/threading.py"},
           {"_wait_for_tstate_lock", "/root/.pyenv/versions/3.8.18/lib/python3.8/threading.py"},
           {"get", "/usr/lib/python3.11/queue.py"},
           {"select", "/usr/lib/python3.11/selectors.py"},
           {"accept", "/usr/lib/python3.11/socket.py"},
           {"_try_wait", "/usr/lib/python3.11/subprocess.py"},
           {"_recv", "/usr/lib/python3.11/multiprocessing/connection.py"}}) {
    INFO(function << " in " << file);
    CHECK(classify_thread(thread_in(function, file), nullptr, {}, false) == ThreadState::Idle);
  }
  CHECK(classify_thread(thread_in("step", "/job/train.py"), nullptr, {}, false) == ThreadState::Unknown);
  CHECK(classify_thread(thread_in("wait", "/job/mythreading.py"), nullptr, {}, false) == ThreadState::Unknown);
  Frame native;
  native.kind = Frame::Kind::Native;
  native.function = "futex_wait";
  std::vector<Frame> native_first = {native};
  for (const Frame& frame : thread_in("wait", "/usr/lib/python3.11/threading.py").frames) native_first.push_back(frame);
  CHECK(in_known_wait(native_first));
}

TEST_CASE("thread state: stopped threads fall back to the frames, zombies are unknown") {
  KernelThreadState stopped;
  stopped.state = 't';
  CHECK(classify_thread(thread_in("wait", "/usr/lib/python3.11/threading.py"), &stopped, kGil, true) ==
        ThreadState::Idle);
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &stopped, kGil, true) == ThreadState::Unknown);
  KernelThreadState zombie;
  zombie.state = 'Z';
  CHECK(classify_thread(thread_in("step", "/job/train.py"), &zombie, kGil, true) == ThreadState::Unknown);
}

TEST_CASE("thread state: assign_thread_states looks the kernel up by native id") {
  Process process;
  process.threads = {thread_in("step", "/job/train.py"), thread_in("step", "/job/train.py"),
                     thread_in("step", "/job/train.py")};
  process.threads[0].native_id = 10;
  process.threads[0].gil = true;
  process.threads[1].native_id = 11;
  process.threads[2].native_id = 12;
  std::unordered_map<int64_t, KernelThreadState> kernel;
  kernel[10].state = 'R';
  kernel[11] = asleep_in(SYS_futex, 0x1000);
  assign_thread_states(process, kernel, kGil);
  CHECK(process.threads[0].state == ThreadState::HoldsGil);
  CHECK(process.threads[1].state == ThreadState::WaitingForGil);
  CHECK(process.threads[2].state == ThreadState::Unknown);  // no kernel view, no known wait
  assign_thread_states(process);
  CHECK(process.threads[1].state == ThreadState::Unknown);
}

TEST_CASE("thread state: the kernel's view of this process's own threads") {
  std::mutex mutex;
  std::condition_variable condition;
  bool done = false;
  std::atomic<int64_t> waiter_tid{0};
  std::atomic<int64_t> sleeper_tid{0};
  std::atomic<bool> release_sleeper{false};
  std::thread waiter([&] {
    waiter_tid = static_cast<int64_t>(::syscall(SYS_gettid));
    std::unique_lock<std::mutex> lock(mutex);
    condition.wait(lock, [&] { return done; });
  });
  std::thread sleeper([&] {
    sleeper_tid = static_cast<int64_t>(::syscall(SYS_gettid));
    // Asleep until the test has looked (not for a fixed time a loaded machine can outlast).
    while (!release_sleeper.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  std::optional<KernelThreadState> wait_view;
  std::optional<KernelThreadState> sleep_view;
  // Until both are asleep in their calls; the deadline only ends a run where they never are.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (waiter_tid == 0 || sleeper_tid == 0) continue;
    wait_view = read_kernel_thread_state(::getpid(), waiter_tid);
    sleep_view = read_kernel_thread_state(::getpid(), sleeper_tid);
    if (wait_view && sleep_view && wait_view->syscall && sleep_view->syscall) break;
  }
  REQUIRE(wait_view.has_value());
  REQUIRE(sleep_view.has_value());
  CHECK(wait_view->state == 'S');
  CHECK(wait_view->syscall == SYS_futex);
  REQUIRE_FALSE(wait_view->syscall_args.empty());
  const auto futex = wait_view->syscall_args.front();
  const auto cv = reinterpret_cast<uint64_t>(&condition);
  CHECK(futex >= cv);
  CHECK(futex < cv + sizeof(condition));
  CHECK(sleep_view->state == 'S');
  CHECK((sleep_view->syscall == SYS_clock_nanosleep || sleep_view->syscall == SYS_nanosleep));
  const auto all = read_kernel_thread_states(::getpid());
  CHECK(all.count(waiter_tid) == 1);
  CHECK(all.count(::getpid()) == 1);
  CHECK_FALSE(read_kernel_thread_state(::getpid(), 0x3fffff).has_value());
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  condition.notify_all();
  release_sleeper = true;
  waiter.join();
  sleeper.join();
}
