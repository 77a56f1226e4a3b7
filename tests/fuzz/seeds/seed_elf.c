/* ELF seeds for fuzz_elf: built by scripts/fuzz.sh as a shared object (with and without
 * .symtab) and as a non-PIE executable. It carries the symbols locate_python looks up: an
 * exported _PyRuntime in writable data that starts with the 3.13+ debug cookie, a read-only
 * Py_Version, and .symtab-only locals named like 3.6's interp_head and _PyThreadState_Current. */
#include <stdint.h>

struct runtime {
  char cookie[8];
  uint64_t version;
  void* interpreters_head;
  void* interpreters_main;
};

struct runtime _PyRuntime = {{'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'}, 0x030d00f0, 0, 0};
const uint32_t Py_Version = 0x030d00f0;
static void* interp_head __attribute__((used));
static void* _PyThreadState_Current __attribute__((used));
static const char build_info[] __attribute__((used)) = "3.13.0 (main, Oct  7 2024, 00:00:00) [GCC 12.2.0]";

int Py_Main(int argc, char** argv) {
  (void)argv;
  interp_head = &_PyRuntime;
  _PyThreadState_Current = interp_head;
  return argc + (int)build_info[0];
}

int main(int argc, char** argv) { return Py_Main(argc, argv); }
