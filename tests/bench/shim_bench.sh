#!/usr/bin/env bash
# Measures libhangshim.so's overhead and prints docs/benchmarks.md's markdown table. Not a timed test:
# ctest runs only --smoke (tiny counts, proves the script works). Times are CPU time of the
# calling thread (other processes' load on a shared machine is not counted), best of rounds,
# and of --repeat runs of each measurement.
#   tests/bench/shim_bench.sh [--smoke] [--build DIR] [--baseline DIR] [--repeat N] [--python PY...]
# --baseline DIR: a build of another commit (e.g. main) measured in turn with --build, run for run
# (interleaved, so both see the same machine load); the table gets a column for each.
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,8 "${1:-}"
smoke=0
baseline=
repeat=3
pythons=()
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --build) build=$2; shift ;;
    --baseline) baseline=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --python) pythons+=("$2"); shift ;;
    *) echo "shim_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
builds=("$build")
[[ -n $baseline ]] && builds=("$baseline" "$build")
for b in "${builds[@]}"; do
  for f in preload/libhangshim.so tests/preload/shim/shim_overhead tests/preload/shim/libshim_capture_probe.so \
           standin/lib/libnccl.so.2; do
    [[ -e $b/$f ]] || { echo "shim_bench: $b/$f is not built (run scripts/setup.sh first)" >&2; exit 2; }
  done
done
if ((${#pythons[@]} == 0)); then
  mapfile -t pythons < <(for v in 3.8 3.11 3.12 3.13; do "$(dirname "$0")/../../scripts/pyenv-pythons.sh" "$v*"; done)
fi
((${#pythons[@]})) || { echo "shim_bench: no Python interpreter found (--python PY)" >&2; exit 2; }
calls=200000 rounds=7 pycalls=20000 capcalls=100000
if ((smoke)); then calls=2000 rounds=1 pycalls=200 capcalls=500 repeat=1 pythons=("${pythons[0]}"); fi
ledgers=$(mktemp -d /tmp/hangshim-bench-XXXXXX)
trap 'rm -rf "$ledgers"' EXIT
export HANGSHIM_DIR=$ledgers
field() { sed -n "s/.*\"$1\": \([0-9.-]*\).*/\1/p"; }

# measure BUILD KIND [PY]: one run of one measurement with BUILD's shim, its ns per call.
measure() {
  local b=$1 kind=$2 py=${3:-} shim=$1/preload/libhangshim.so probe=$1/tests/preload/shim/libshim_capture_probe.so
  local overhead=$1/tests/preload/shim/shim_overhead
  export LD_LIBRARY_PATH=$b/standin/lib
  case $kind in
    cxx) "$overhead" --calls $calls --rounds $rounds | field ns_per_call ;;
    cxx-shim) LD_PRELOAD=$shim "$overhead" --calls $calls --rounds $rounds | field ns_per_call ;;
    cxx-private)
      LD_PRELOAD=$shim "$overhead" --calls $calls --rounds $rounds --private "$b/standin/lib/libnccl.so.2" |
        field ns_per_call ;;
    # The probe is preloaded: loaded with dlopen it would need more static TLS than glibc keeps
    # in reserve (preload/shim/core/callsite_capture.cpp, OwnMemos).
    record)
      LD_PRELOAD=$probe HANGSHIM_CALLSITES=0 HANGSHIM_CUDA_EVENTS=0 "$py" -c "
import ctypes, time
p = ctypes.CDLL('$probe'); p.hangshim_bench_record.restype = ctypes.c_double
p.hangshim_bench_record(10); time.sleep(0.2)  # let the watchdog calibrate the clock
print(round(min(p.hangshim_bench_record($capcalls) for _ in range($rounds)), 1))" ;;
    capture-5 | capture-50)
      LD_PRELOAD=$probe "$py" "$here/shim_bench_python.py" --probe "$probe" --ledger "$(mktemp -u "$ledgers/probe-XXXXXX.ledger")" \
        --depth "${kind#capture-}" --calls $capcalls --rounds $rounds | field capture_ns ;;
    py-pair)
      LD_PRELOAD=$shim "$py" "$here/shim_bench_python.py" --depth 50 --calls $pycalls --rounds $rounds --pair \
        ${alternate:+--alternate} ;;
  esac
}

# best KIND [PY]: sets best_by[i] for each build i, the least of $repeat runs taken in turn.
best_by=()
best() {
  local r i v
  best_by=()
  for ((r = 0; r < repeat; ++r)); do
    for i in "${!builds[@]}"; do
      v=$(measure "${builds[$i]}" "$@")
      [[ -n $v ]] || { echo "shim_bench: no figure from ${builds[$i]} for $*" >&2; exit 1; }
      if [[ -z ${best_by[$i]:-} ]] || awk -v a="$v" -v b="${best_by[$i]}" 'BEGIN { exit !(a < b) }'; then
        best_by[$i]=$v
      fi
    done
  done
}

print_row() {  # print_row LABEL FIGURE...: one markdown table row
  local out="| $1" v
  shift
  for v in "$@"; do out+=" | $v"; done
  echo "$out |"
}

row() {  # row LABEL KIND [PY]: measures and prints one table row
  local label=$1
  shift
  best "$@"
  print_row "$label" "${best_by[@]}"
}

# end_to_end: a collective from Python with and without the shim, in the same process (the shim
# preloaded; "without" is pncclAllReduce, NCCL's unwrapped name of the same function; see
# shim_bench_python.py --pair): a Python process runs this loop in one of two speeds about 1 µs
# apart, so differences between two processes came out anywhere from -570 to +400 ns. Sets plain
# and full (the least per build over $repeat processes) and diff (the median of the processes'
# own differences, the shim's cost).
end_to_end() {
  local r i out
  plain=() full=() diff=()
  local -A diffs=()
  for ((r = 0; r < repeat; ++r)); do
    for i in "${!builds[@]}"; do
      out=$(measure "${builds[$i]}" py-pair "$py")
      local p f d
      p=$(field direct_ns_per_call <<<"$out") f=$(field ns_per_call <<<"$out") d=$(field shim_ns <<<"$out")
      [[ -n $p && -n $f && -n $d ]] || { echo "shim_bench: no figure from ${builds[$i]} for $py: $out" >&2; exit 1; }
      plain[$i]=$(awk -v a="$p" -v b="${plain[$i]:-}" 'BEGIN { print (b == "" || a < b) ? a : b }')
      full[$i]=$(awk -v a="$f" -v b="${full[$i]:-}" 'BEGIN { print (b == "" || a < b) ? a : b }')
      diffs[$i]+="$d "
    done
  done
  for i in "${!builds[@]}"; do
    diff[$i]=$(tr ' ' '\n' <<<"${diffs[$i]}" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
  done
}

if [[ -n $baseline ]]; then
  echo "| measurement | ns per call, baseline | ns per call, this build |"
  echo "| --- | ---: | ---: |"
else
  echo "| measurement | ns per call |"
  echo "| --- | ---: |"
fi
row "C++: ncclAllReduce on the stand-in, no shim" cxx
row "C++: same, with libhangshim.so" cxx-shim
row "C++: same, looked up with dlsym(dlopen(RTLD_LOCAL)), with libhangshim.so" cxx-private
row "recording alone (Recorder::begin + end, no call-site)" record "${pythons[0]}"
for py in "${pythons[@]}"; do
  version=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  row "Python $version: call-site capture alone, 5-deep stack" capture-5 "$py"
  row "Python $version: call-site capture alone, 50-deep stack" capture-50 "$py"
  end_to_end
  print_row "Python $version: ctypes pncclAllReduce (not wrapped), 50-deep stack, shim preloaded" "${plain[@]}"
  print_row "Python $version: same as ncclAllReduce, through the shim (call-sites on)" "${full[@]}"
  print_row "Python $version: the shim's cost (the two in one process, median of processes)" "${diff[@]}"
  alternate=1 end_to_end
  print_row "Python $version: the shim's cost, calls from two call-sites in turn" "${diff[@]}"
done
size=$(stat -c %s "$(ls "$ledgers"/hangshim-*.ledger | head -1)")
echo
echo "Ledger size with the default settings: $size bytes."
