// Hand-built models for renderer and CLI tests (the engine's output has this shape).
#pragma once

#include <cstdint>
#include <string>

#include "pyframes/model.h"

namespace samples {

inline pyframes::Frame python_frame(std::string function, std::string file, int line, std::string qualname = {}) {
  pyframes::Frame frame;
  frame.function = std::move(function);
  frame.qualname = qualname.empty() ? frame.function : std::move(qualname);
  frame.file = std::move(file);
  frame.line = line;
  return frame;
}

inline pyframes::Frame native_frame(std::string function, std::string module, uint64_t address, uint64_t offset) {
  pyframes::Frame frame;
  frame.kind = pyframes::Frame::Kind::Native;
  frame.function = std::move(function);
  frame.module = std::move(module);
  frame.address = address;
  frame.offset = offset;
  return frame;
}

inline pyframes::Process two_thread_process(int64_t pid = 4242) {
  pyframes::Process process;
  process.pid = pid;
  process.source = "pid " + std::to_string(pid);
  process.python_version = "3.11.7";
  process.executable = "/usr/bin/python3.11";
  process.command_line = {"python3", "train.py", "--epochs", "3"};

  pyframes::Thread main_thread;
  main_thread.thread_id = 0x7f0011223340;
  main_thread.native_id = pid;
  main_thread.name = "MainThread";
  main_thread.gil = true;
  main_thread.state = pyframes::ThreadState::HoldsGil;
  main_thread.frames = {python_frame("step", "/srv/train.py", 88, "Trainer.step"),
                        python_frame("run", "/srv/train.py", 120, "Trainer.run"),
                        python_frame("<module>", "/srv/train.py", 140)};

  pyframes::Thread loader;
  loader.thread_id = 0x7f0011225550;
  loader.native_id = pid + 7;
  loader.name = "data-loader";
  loader.state = pyframes::ThreadState::Idle;
  loader.frames = {python_frame("wait", "/usr/lib/python3.11/threading.py", 327, "Condition.wait")};

  process.threads = {main_thread, loader};
  return process;
}

}  // namespace samples
