#include "native/native_reader.h"

#include <elf.h>

#include <algorithm>
#include <fmt/format.h>

#include "native/merge_native.h"

namespace pyframes::native {

namespace {

// A native stack is a few C frames per Python frame (<= 3.10: about five); the bound only
// keeps a damaged stack from being followed forever.
constexpr size_t kNativeFramesPerPythonFrame = 8;

}  // namespace

NativeReader::NativeReader(const Memory& memory, const ModuleMap& modules, FileResolver resolve,
                           const ReadOptions& options)
    : modules_(modules, std::move(resolve)),
      unwinder_(memory, modules_),
      symbolizer_(modules_),
      max_frames_(std::max<size_t>(options.max_frames * kNativeFramesPerPythonFrame, 256)),
      all_threads_(options.native_all) {}

std::vector<RawStack> NativeReader::unwind_stopped_threads(const std::vector<pid_t>& tids) {
  std::vector<RawStack> stacks;
  stacks.reserve(tids.size());
  for (pid_t tid : tids) {
    auto registers = stopped_thread_registers(tid);
    RawStack stack;
    if (registers) {
      stack = unwinder_.unwind(*registers, max_frames_);
    } else {
      stack.problem = registers.error().message;
    }
    stack.tid = tid;
    stacks.push_back(std::move(stack));
  }
  return stacks;
}

std::vector<RawStack> NativeReader::unwind_core_threads(const std::vector<CoreThread>& threads) {
  std::vector<RawStack> stacks;
  stacks.reserve(threads.size());
  for (const CoreThread& thread : threads) {
    RawStack stack;
    auto registers = thread.machine == EM_X86_64
                         ? registers_from_kernel_order(thread.registers)
                         : Result<Registers>(make_error(ErrorKind::UnsupportedVersion,
                                                        "native stacks are read from x86-64 cores only"));
    if (registers) {
      stack = unwinder_.unwind(*registers, max_frames_);
    } else {
      stack.problem = registers.error().message;
    }
    stack.tid = thread.tid;
    stacks.push_back(std::move(stack));
  }
  return stacks;
}

void NativeReader::merge(Process& process, const std::vector<RawStack>& stacks) {
  std::vector<NativeStack> named;
  named.reserve(stacks.size());
  for (const RawStack& raw : stacks) {
    NativeStack stack;
    stack.tid = raw.tid;
    stack.problem = raw.problem;
    stack.frames.reserve(raw.frames.size());
    for (const RawFrame& frame : raw.frames) stack.frames.push_back(symbolizer_.frame(frame));
    named.push_back(std::move(stack));
  }
  merge_native_stacks(process, std::move(named), all_threads_);
}

}  // namespace pyframes::native
