// The CPython versions pyframes reads, said once. `pyframes --help` and `--version`, the error
// hints, the layout selection (the newest _Py_DebugOffsets layout), the gdb extension (which
// asks `pyframes --version`) and the docs check (tests/readme, which asks it too) all take the
// range from here: change the minors below, and everything that names the range follows.
#pragma once

// The oldest and the newest CPython 3.x minor version pyframes reads. Versions newer than the
// newest are read with its _Py_DebugOffsets layout, checked against the target first.
#define PYFRAMES_CPYTHON_OLDEST_MINOR 6
#define PYFRAMES_CPYTHON_NEWEST_MINOR 15

#define PYFRAMES_VERSIONS_STR_(x) #x
#define PYFRAMES_VERSIONS_STR(x) PYFRAMES_VERSIONS_STR_(x)

// "3.6" and "3.15", for string literals ("pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST ...).
#define PYFRAMES_CPYTHON_OLDEST "3." PYFRAMES_VERSIONS_STR(PYFRAMES_CPYTHON_OLDEST_MINOR)
#define PYFRAMES_CPYTHON_NEWEST "3." PYFRAMES_VERSIONS_STR(PYFRAMES_CPYTHON_NEWEST_MINOR)
// "3.6-3.15": how --help, --version and the documents write the range.
#define PYFRAMES_CPYTHON_RANGE PYFRAMES_CPYTHON_OLDEST "-" PYFRAMES_CPYTHON_NEWEST
// The free-threaded builds (--disable-gil) pyframes has tables for.
#define PYFRAMES_CPYTHON_FREE_THREADED "3.13t and 3.14t"

namespace pyframes {

inline constexpr int kOldestCPythonMinor = PYFRAMES_CPYTHON_OLDEST_MINOR;
inline constexpr int kNewestCPythonMinor = PYFRAMES_CPYTHON_NEWEST_MINOR;

}  // namespace pyframes
