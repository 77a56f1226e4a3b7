#!/usr/bin/env bash
# Measures libhangshim.so's overhead and prints docs/benchmarks.md's markdown table. Not a timed test:
# ctest runs only --smoke (tiny counts, proves the script works). Times are CPU time of the
# calling thread (other processes' load on a shared machine is not counted), best of rounds.
#   tests/bench/shim_bench.sh [--smoke] [--build DIR] [--python PY...]
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,5 "${1:-}"
smoke=0
pythons=()
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --build) build=$2; shift ;;
    --python) pythons+=("$2"); shift ;;
    *) echo "shim_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
shim=$build/preload/libhangshim.so
overhead=$build/tests/preload/shim/shim_overhead
probe=$build/tests/preload/shim/libshim_capture_probe.so
fake=$build/standin/lib
for f in "$shim" "$overhead" "$probe" "$fake/libnccl.so.2"; do
  [[ -e $f ]] || { echo "shim_bench: $f is not built (run scripts/setup.sh first)" >&2; exit 2; }
done
if ((${#pythons[@]} == 0)); then
  for p in /root/.pyenv/versions/3.{8,11,12,13}*/bin/python3; do [[ -x $p ]] && pythons+=("$p"); done
fi
((${#pythons[@]})) || { echo "shim_bench: no Python interpreter found (--python PY)" >&2; exit 2; }
calls=200000 rounds=7 pycalls=20000 capcalls=100000
if ((smoke)); then calls=2000 rounds=1 pycalls=200 capcalls=500 pythons=("${pythons[0]}"); fi
ledgers=$(mktemp -d /tmp/hangshim-bench-XXXXXX)
trap 'rm -rf "$ledgers"' EXIT
export LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} HANGSHIM_DIR=$ledgers
field() { sed -n "s/.*\"$1\": \([0-9.-]*\).*/\1/p"; }

echo "| measurement | ns per call |"
echo "| --- | ---: |"
base=$("$overhead" --calls $calls --rounds $rounds | field ns_per_call)
with=$(LD_PRELOAD=$shim "$overhead" --calls $calls --rounds $rounds | field ns_per_call)
echo "| C++: ncclAllReduce on the stand-in, no shim | $base |"
echo "| C++: same, with libhangshim.so | $with |"
private=$(LD_PRELOAD=$shim "$overhead" --calls $calls --rounds $rounds --private "$fake/libnccl.so.2" | field ns_per_call)
echo "| C++: same, looked up with dlsym(dlopen(RTLD_LOCAL)), with libhangshim.so | $private |"
record=$(HANGSHIM_CALLSITES=0 HANGSHIM_CUDA_EVENTS=0 "${pythons[0]}" -c "
import ctypes, time
p = ctypes.CDLL('$probe'); p.hangshim_bench_record.restype = ctypes.c_double
p.hangshim_bench_record(10); time.sleep(0.2)  # let the watchdog calibrate the clock
print(round(min(p.hangshim_bench_record($capcalls) for _ in range($rounds)), 1))")
echo "| recording alone (Recorder::begin + end, no call-site) | $record |"
for py in "${pythons[@]}"; do
  v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  for depth in 5 50; do
    cap=$("$py" "$here/shim_bench_python.py" --probe "$probe" --ledger "$ledgers/probe-$v-$depth.ledger" \
          --depth $depth --calls $capcalls --rounds $rounds | field capture_ns)
    echo "| Python $v: call-site capture alone, $depth-deep stack | $cap |"
  done
  plain=$("$py" "$here/shim_bench_python.py" --depth 50 --calls $pycalls --rounds $rounds | field ns_per_call)
  full=$(LD_PRELOAD=$shim "$py" "$here/shim_bench_python.py" --depth 50 --calls $pycalls --rounds $rounds | field ns_per_call)
  echo "| Python $v: ctypes ncclAllReduce, 50-deep stack, no shim | $plain |"
  echo "| Python $v: same, with libhangshim.so (call-sites on) | $full |"
done
size=$(stat -c %s "$(ls "$ledgers"/hangshim-*.ledger | head -1)")
echo
echo "Ledger size with the default settings: $size bytes."
