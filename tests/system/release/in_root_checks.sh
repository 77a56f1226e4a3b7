#!/bin/bash
# Runs inside a distribution's root (chroot; run_root_checks.py puts it and the release wheel in
# /tmp/hangshim-release-test, with the NCCL stand-in in fakenccl/, a copy of tests/ and the
# root_*.py checks beside it), with that system's python3, pip and gdb and nothing of the build:
# installs the wheel into a venv and uses it as a new user would. One line per check,
# "ok: ..." or "FAILED: ..."; exit 1 if any failed.
set -u
work=/tmp/hangshim-release-test
cd "$work" || exit 1
failed=0
ok() { echo "ok: $*"; }
fail() { echo "FAILED: $*"; failed=1; }
contains() {  # NAME TEXT NEEDLE
  if grep -q -- "$3" <<<"$2"; then ok "$1"; else fail "$1: no '$3' in: $(head -c 1500 <<<"$2")"; fi
}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8 HOME=$work

echo "system: $(. /etc/os-release; echo "$PRETTY_NAME"), $(ldd --version | head -n 1), $(python3 --version)"
python3 -m venv venv || { fail "python3 -m venv"; exit 1; }
if out=$(venv/bin/pip install --no-index --disable-pip-version-check ./hangshim-*.whl 2>&1); then
  ok "pip $(venv/bin/pip --version | cut -d' ' -f2) installs $(ls hangshim-*.whl)"
else
  fail "pip install: $out"
  exit 1
fi
bundle=$(venv/bin/python -c 'import hangshim, os; print(os.path.join(os.path.dirname(hangshim.__file__), "_bundle"))')
contains "pyframes --version" "$(venv/bin/pyframes --version 2>&1)" "pyframes "
contains "hangshim --version" "$(venv/bin/hangshim --version 2>&1)" "hangshim "

# A live process of this system's python, waiting in a function of known name.
cat >target.py <<'PY'
import os, sys, time
def release_test_leaf():
    open(sys.argv[1], "w").write(str(os.getpid()))
    time.sleep(300)
def release_test_outer():
    release_test_leaf()
release_test_outer()
PY
rm -f target.pid
python3 target.py target.pid &
target=$!
for _ in $(seq 100); do [[ -s target.pid ]] && break; sleep 0.1; done
contains "pyframes PID ($(python3 --version))" "$(venv/bin/pyframes "$target" 2>&1)" "release_test_leaf"
contains "pyframes --native PID" "$(venv/bin/pyframes --native "$target" 2>&1)" "release_test_outer"
if command -v gcore >/dev/null; then
  # Bit 2 (file-backed private memory): gdb before 12 (Ubuntu 20.04's 9.1, Debian 11's 10.1)
  # counts a written page of a file mapping (the interpreter's .data: _PyRuntime) as file-backed
  # and leaves it out under the default 0x33, unlike the kernel; the README says so.
  echo 0x37 >"/proc/$target/coredump_filter"
  if gcore -o "$work/core" "$target" >gcore.log 2>&1; then
    contains "pyframes CORE (gcore)" "$(venv/bin/pyframes "$work/core.$target" 2>&1)" "release_test_leaf"
  else
    fail "gcore: $(tail -n 3 gcore.log)"
  fi
else
  echo "skipped: a core (this system has no gdb/gcore)"
fi
kill "$target" 2>/dev/null
wait "$target" 2>/dev/null

# The shim preloaded while Python loads C extensions (dlsym goes through the shim's interposer).
shim=$bundle/lib/libhangshim.so
out=$(LD_PRELOAD=$shim python3 -c 'import ctypes, decimal, sqlite3
print("imported", ctypes.CDLL(None).getpid() > 0, decimal.Decimal("1.5") * 2, sqlite3.connect(":memory:").execute("select 6*7").fetchone()[0])' 2>&1)
contains "LD_PRELOAD=libhangshim.so python3: import ctypes, decimal, sqlite3" "$out" "imported True 3.0 42"

# A hung 2-rank job over the NCCL stand-in (libnccl.so.2 and libcuda.so.1 for the CPU, built the
# portable way beside the release) under the wheel's `hangshim run`, and the report's verdict
# against the scenario's own record of where each rank blocked.
out=$(python3 root_hang_job.py --hangshim venv/bin/hangshim --fakenccl "$work/fakenccl" --tests "$work/tests" 2>&1)
if [[ $? == 0 ]]; then echo "$out"; else fail "${out#FAILED: }"; fi

# The gdb extension, loaded by this system's gdb; its py-bt on a live python3 of this system.
extension=$(venv/bin/python -m hangshim gdb-extension 2>&1)
if command -v gdb >/dev/null; then
  contains "gdb $(gdb --version | head -n 1 | awk '{print $NF}') loads the extension" \
    "$(gdb -batch -nx -x "$extension" -ex 'help py-bt' 2>&1)" "raceback"
  out=$(python3 root_py_bt.py --extension "$extension" 2>&1)
  if [[ $? == 0 ]]; then echo "$out"; else fail "${out#FAILED: }"; fi
else
  echo "skipped: the gdb extension (this system has no gdb)"
fi
exit $failed
