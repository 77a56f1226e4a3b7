// What discovery found about the CPython runtime in a target, independent of where the bytes
// come from (live process, core file, the current process). The engine needs nothing else to
// pick a layout and walk interpreters, threads and frames.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pyframes {

struct PyVersion {
  int major = 0;
  int minor = 0;
  int micro = -1;  // -1 when only major.minor is known
  uint32_t hex = 0;  // PY_VERSION_HEX when known (Py_Version, _Py_DebugOffsets), else 0

  std::string str() const;  // "3.11.7", or "3.11" when the micro version is unknown
  bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};

struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  bool contains(uint64_t address) const { return address >= start && address < end; }
};

struct PythonTarget {
  PyVersion version;
  std::string python_module;             // libpython*.so or the executable holding the runtime
  uint64_t runtime_address = 0;          // &_PyRuntime (3.7+), 0 when not found by symbol
  uint64_t interp_head_address = 0;      // &interp_head (3.6, a .symtab-only local), 0 if unknown
  uint64_t tstate_current_address = 0;   // &_PyThreadState_Current (3.6), 0 if unknown
  std::vector<AddressRange> data_ranges; // writable data of python_module, for the scan fallback
};

}  // namespace pyframes
