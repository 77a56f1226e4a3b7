#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan), replays every committed finding
# (tests/fuzz/corpus/TARGET), then explores each target for a fixed time on seed corpora made
# from real interpreters, cores, ledgers and Flight Recorder dumps; fails on any crash, leak,
# OOM or input slower than --timeout seconds (a reader that spins is a finding, not a slow run).
#   scripts/fuzz.sh [--time SECONDS] [--jobs N] [--parallel N] [--seed N] [--timeout SECONDS] [--build-only] [TARGET...]
# Targets: linetable elf core walker ledger flight_recorder (default: all). --seed N makes the
# exploration repeatable (CI passes one; default 0: random). --jobs N: libFuzzer workers per
# target; --parallel N: targets fuzzed at once (default 1; each gets its whole --time, alone
# with its seed: the same walk as one at a time); --build-only: build, fuzz nothing.
# Environment: HANGSHIM_FUZZ_DIR
# (build and corpus directory, default build-fuzz), HANGSHIM_FUZZ_TIME (seconds per target,
# default 60), HANGSHIM_FUZZ_SEED. Findings are left in $HANGSHIM_FUZZ_DIR/artifacts/TARGET/:
# fix them and commit each input under tests/fuzz/corpus/TARGET/ (ctest replays them as
# fuzz/replay/*). The executions of each run are appended to $HANGSHIM_FUZZ_DIR/fuzz-log.tsv.
# shellcheck disable=SC2317  # functions run through a trap look unreachable to shellcheck
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=${HANGSHIM_FUZZ_DIR:-$top/build-fuzz}
seconds=${HANGSHIM_FUZZ_TIME:-60}
jobs=1
at_once=1
build_only=0
seed=${HANGSHIM_FUZZ_SEED:-0}
timeout=2
targets=()
while (($#)); do
  case $1 in
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --parallel) at_once=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --seed) seed=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(linetable elf core walker ledger flight_recorder)
for t in "${targets[@]}"; do
  case $t in linetable|elf|core|walker|ledger|flight_recorder) ;; *) echo "fuzz.sh: unknown target $t (linetable elf core walker ledger flight_recorder)" >&2; exit 2 ;; esac
done
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing: apt-get install -y clang libclang-rt-14-dev (or run scripts/setup.sh)" >&2; exit 1; }

# 1. A clang build of the libraries and the fuzz targets only.
# -O1 and line tables: what libFuzzer and the sanitizers' reports need, in a third less compile
# time than -O2 -g.
cmake -S "$top" -B "$out" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DHANGSHIM_FUZZ=ON -DHANGSHIM_BUILD_TESTS=OFF "-DHANGSHIM_SANITIZE=address;undefined" >/dev/null
build_targets=()
for t in "${targets[@]}"; do
  build_targets+=("fuzz_$t")
  case $t in walker) build_targets+=(make_walker_seed) ;; ledger) build_targets+=(make_ledger_seeds) ;; core) build_targets+=(make_core_seed) ;; esac
done
cmake --build "$out" -j"$(nproc)" --target "${build_targets[@]}"
((build_only == 0)) || exit 0
bin=$out/tests/fuzz

# 2. Seeds: the committed ones (tests/fuzz/corpus/TARGET) plus ones made here from the real thing.
seeds=$out/seeds
pythons=()
# pyenv's, oldest version first (found by scripts/pyenv-pythons.sh: a name sort put 3.10 first
# and 3.9 last), then Debian's.
mapfile -t pythons < <("$top/scripts/pyenv-pythons.sh")
[[ -x /usr/bin/python3.11 ]] && pythons+=(/usr/bin/python3.11)
children=()
cleanup() {
  local pid
  for pid in "${children[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Starts walker_target.py with `python`, waits for "ready"; sets $target_pid.
start_target() {
  local python=$1 log=$2
  MALLOC_ARENA_MAX=1 "$python" "$top/tests/fuzz/seeds/walker_target.py" >"$log" 2>&1 &
  target_pid=$!
  children+=("$target_pid")
  for _ in $(seq 100); do
    grep -q ready "$log" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "fuzz.sh: $python did not start walker_target.py: $(cat "$log")" >&2
  return 1
}

# Real cores of walker_target.py, shrunk to what read_core reads (make_core_seed): gcore dumps
# from the oldest, 3.10, 3.11 and newest interpreters and Debian's static one, a kernel dump
# (SIGABRT) where core_pattern writes plain files, a gzip copy, and a core of a non-Python program.
make_core_seeds() {
  local dir=$1 work python label n=${#pythons[@]}
  work=$(mktemp -d)
  local picked=("${pythons[0]}")
  for python in "${pythons[@]}"; do
    case $python in */3.10.*/*|*/3.11.*/*|/usr/bin/*) picked+=("$python") ;; esac
  done
  ((n > 1)) && picked+=("${pythons[n - 2]}")  # the newest pyenv one (the last is Debian's)
  for python in "${picked[@]}"; do
    label=$(basename "$(dirname "$(dirname "$python")")")
    [[ $python == /usr/bin/* ]] && label=deb$(basename "$python" | sed 's/python//')
    start_target "$python" "$work/log" || continue
    if gcore -o "$work/core" "$target_pid" >/dev/null 2>&1; then
      "$bin/make_core_seed" "$work/core.$target_pid" "$dir/gcore-$label" || true
    fi
    kill "$target_pid" 2>/dev/null || true
    wait "$target_pid" 2>/dev/null || true
    rm -f "$work/core.$target_pid"
  done
  if [[ $(cat /proc/sys/kernel/core_pattern) != \|* ]]; then
    (
      cd "$work" && ulimit -c unlimited
      MALLOC_ARENA_MAX=1 "${pythons[0]}" "$top/tests/fuzz/seeds/walker_target.py" >"$work/log" 2>&1 &
      pid=$!
      for _ in $(seq 100); do grep -q ready "$work/log" && break; sleep 0.1; done
      kill -ABRT "$pid"
      wait "$pid" 2>/dev/null || true
    )
    local kernel_core
    kernel_core=$(find "$work" -maxdepth 1 -name 'core*' -type f | head -1)
    if [[ -n $kernel_core ]]; then "$bin/make_core_seed" "$kernel_core" "$dir/kernel-abort" || true; fi
  fi
  local first
  first=$(find "$dir" -name 'gcore-*' | sort | head -1)
  [[ -n $first ]] && gzip -c "$first" >"$dir/$(basename "$first").gz"
  sleep 60 &
  local sleeper=$!
  children+=("$sleeper")
  gcore -o "$dir/not-python" "$sleeper" >/dev/null 2>&1 || true
  kill "$sleeper" 2>/dev/null || true
  rm -rf "$work"
}

make_seeds() {
  local t=$1 dir=$seeds/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ -d $top/tests/fuzz/corpus/$t ]]; then cp "$top/tests/fuzz/corpus/$t"/* "$dir"/ 2>/dev/null || true; fi
  case $t in
    linetable)
      python3 "$top/tests/fuzz/seeds/make_linetable_seeds.py" "$top/tests/pyframes/unit/fixtures/linetables" "$dir" ;;
    elf)
      local cc=${CC:-cc}
      "$cc" -O1 -shared -fPIC -o "$dir/libpython-seed.so" "$top/tests/fuzz/seeds/seed_elf.c"
      "$cc" -O1 -no-pie -o "$dir/python-seed-exe" "$top/tests/fuzz/seeds/seed_elf.c"
      cp "$dir/libpython-seed.so" "$dir/libpython-seed-stripped.so"
      strip "$dir/libpython-seed-stripped.so"
      # A function GCC splits into hot and cold parts, stripped: the split-part search's input.
      "$cc" -O2 -rdynamic -o "$dir/split-seed" "$top/tests/pyframes/unit/fixtures/split_function.c"
      strip --strip-all "$dir/split-seed" ;;
    ledger)
      "$bin/make_ledger_seeds" "$dir" ;;
    flight_recorder)
      python3 "$top/tests/fuzz/seeds/make_flight_recorder_seeds.py" "$dir" ;;
    walker)
      local python label
      for python in "${pythons[@]}"; do
        label=$(basename "$(dirname "$(dirname "$python")")")
        [[ $python == /usr/bin/* ]] && label=deb$(basename "$python" | sed 's/python//')
        start_target "$python" "$dir/.log" || continue
        "$bin/make_walker_seed" "$target_pid" "$dir/$label" || echo "fuzz.sh: no walker seed from $python" >&2
        kill "$target_pid" 2>/dev/null || true
        wait "$target_pid" 2>/dev/null || true
      done
      rm -f "$dir/.log" ;;
    core)
      make_core_seeds "$dir" ;;
  esac
  echo "fuzz.sh: $t: $(find "$dir" -type f | wc -l) seed(s), $(du -sh "$dir" | cut -f1)"
}

# True when `unit` (a timeout finding of fuzz_TARGET) is read within the timeout 3 times in a row.
slow_only_under_load() {
  local target=$1 unit=$2 _
  for _ in 1 2 3; do
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin/fuzz_$target" -timeout="$timeout" -rss_limit_mb=2560 "$unit" >/dev/null 2>&1 || return 1
  done
  return 0
}

# 3. Run. Each target's corpus persists in $out/corpus/TARGET between local runs.
status=0
log=$out/fuzz-log.tsv
[[ -f $log ]] || printf 'date\ttarget\tseconds\texecutions\tcorpus\tresult\n' >"$log"
# One target: replay, seeds, exploration; its exit status is the target's result. Run in a
# subshell of its own (its helper processes are ended by its own trap).
fuzz_target() {
  local t=$1 artifacts committed corpus max_len parallel run_log rc executions size result unit
  trap cleanup EXIT
  artifacts=$out/artifacts/$t
  mkdir -p "$artifacts"
  # Every committed finding first, each input once: a regression fails here, named.
  committed=()
  if [[ -d $top/tests/fuzz/corpus/$t ]]; then mapfile -t committed < <(find "$top/tests/fuzz/corpus/$t" -type f | sort); fi
  if ((${#committed[@]})); then
    echo "fuzz.sh: fuzz_$t: replaying ${#committed[@]} committed finding(s)"
    if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin/fuzz_$t" -timeout="$timeout" -rss_limit_mb=2560 -artifact_prefix="$artifacts/" "${committed[@]}" \
      >"$out/replay-$t.log" 2>&1; then
      grep -E 'ERROR|SUMMARY|Running:|timeout' "$out/replay-$t.log" | tail -20 >&2 || true
      echo "fuzz.sh: fuzz_$t: a committed finding fails again (full log $out/replay-$t.log)" >&2
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" 0 "${#committed[@]}" 0 "REPLAY FAILED" >>"$log"
      return 1
    fi
  fi
  make_seeds "$t"
  corpus=$out/corpus/$t
  mkdir -p "$corpus"
  max_len=()
  case $t in core) max_len=(-max_len=4194304) ;; ledger) max_len=(-max_len=262144) ;; walker) max_len=(-max_len=1048576) ;; flight_recorder) max_len=(-max_len=65536) ;; esac
  parallel=()
  ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
  run_log=$out/run-$t.log
  echo "fuzz.sh: fuzz_$t for ${seconds}s (seed $seed, timeout ${timeout}s per input)"
  set +e
  (
    # A fuzzed gzip core must not fill the disk with its inflated copy: files stop at 256 MiB
    # (writes past it fail with EFBIG instead of raising SIGXFSZ).
    trap '' XFSZ
    ulimit -f $((256 * 1024))
    mkdir -p "$out/work-$t" && cd "$out/work-$t" && rm -f fuzz-*.log
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin/fuzz_$t" -max_total_time="$seconds" -seed="$seed" -timeout="$timeout" -rss_limit_mb=2560 -print_final_stats=1 \
      "${parallel[@]}" "${max_len[@]}" -artifact_prefix="$artifacts/" "$corpus" "$seeds/$t"
  ) >"$run_log" 2>&1
  rc=$?
  set -e
  executions=$( (cat "$run_log" "$out/work-$t"/fuzz-*.log 2>/dev/null || true) | awk '/^stat::number_of_executed_units/ {s += $2} END {print s + 0}')
  size=$(find "$corpus" -type f | wc -l)
  result=ok
  if ((rc != 0)) && grep -q 'ERROR: libFuzzer: timeout' "$run_log"; then
    # libFuzzer's timeout is wall-clock time: on a loaded machine a 50 ms input can miss it.
    # A reader that spins (or is really slow) misses it again on every replay; one that read
    # the input in time three times over was only descheduled, and is said so, not failed.
    unit=$(grep -o 'Test unit written to .*' "$run_log" | tail -1 | sed 's/Test unit written to //')
    if [[ -f $unit ]] && slow_only_under_load "$t" "$unit"; then
      result="ok (a timeout under load did not reproduce: $(basename "$unit") read in time 3 times)"
      rc=0
    fi
  fi
  if ((rc != 0)); then result="FAILED (exit $rc)"; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$seconds" "$executions" "$size" "$result" >>"$log"
  echo "fuzz.sh: fuzz_$t: $executions executions, corpus $size, $result"
  if ((rc != 0)); then
    grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$run_log" | head -20 >&2 || true
    echo "fuzz.sh: full log $run_log; reproduce with $bin/fuzz_$t $artifacts/<file>" >&2
  fi
  return $((rc != 0))
}

# Up to $at_once targets at a time; each one's output is printed whole when it ends.
running=()
finish_one() {
  local pid=${running[0]} t
  t=${running[1]}
  running=("${running[@]:2}")
  wait "$pid" || status=1
  cat "$out/target-$t.out"
}
for t in "${targets[@]}"; do
  ((${#running[@]} / 2 < at_once)) || finish_one
  fuzz_target "$t" >"$out/target-$t.out" 2>&1 &
  running+=("$!" "$t")
done
while ((${#running[@]})); do finish_one; done
exit $status
