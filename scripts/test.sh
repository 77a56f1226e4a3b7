#!/usr/bin/env bash
# Sets up (dependencies, build with warnings as errors) and runs every test with ctest, then the
# portable release in its distribution roots and the reliability stages: ASan+UBSan,
# ThreadSanitizer and the fuzzers (docs/dev/testing.md).
#   scripts/test.sh [--full] [ctest args]   extra arguments go to the main ctest run, e.g. -R preload/unit
# --full: the longer run: every interpreter x case matrix whole and every program of /usr/bin in
# the shim's sweep (CI runs one interpreter per frame model for the matrices, and a sample).
# Stages (HANGSHIM_CI_STAGES, comma-separated; default all five, or only "tests" when ctest
# arguments are given): tests, release, asan, tsan, fuzz. HANGSHIM_FUZZ_TIME: seconds per fuzzer (30),
# HANGSHIM_FUZZ_SEED: the fuzzers' seed (1). HANGSHIM_CTEST_JOBS: tests run at once (4).
# Every stage runs even when an earlier one failed; the exit status is non-zero if any failed.
# At the end: each stage's time and the 20 slowest tests.
# shellcheck disable=SC2317  # functions run through run_stage / trap look unreachable to shellcheck
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
full=OFF
if [[ ${1:-} == --full ]]; then full=ON; shift; fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
jobs=$(nproc)
# Most tests wait (for a hang to happen, a stall limit to pass, a core to be written) rather than
# compute, so more run at once than there are cores; they were made to pass under a load of
# several times the cores (docs/dev/testing.md).
ctest_jobs=${HANGSHIM_CTEST_JOBS:-4}
logs=$(mktemp -d "${TMPDIR:-/tmp}/hangshim-test-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT
if (($#)); then default_stages=tests; else default_stages=tests,release,asan,tsan,fuzz; fi
IFS=, read -r -a stages <<<"${HANGSHIM_CI_STAGES:-$default_stages}"
for s in "${stages[@]}"; do
  case $s in tests|release|asan|tsan|fuzz) ;; *) echo "test.sh: unknown stage '$s' in HANGSHIM_CI_STAGES (tests,release,asan,tsan,fuzz)" >&2; exit 2 ;; esac
done
wants() { [[ ",${stages[*]}," == *",$1,"* ]] || [[ " ${stages[*]} " == *" $1 "* ]]; }

# The interpreters the sanitizer stages run against: the oldest pyenv one (3.6: frame objects,
# lnotab), the newest (_Py_DebugOffsets) and Debian's static, stripped python3.11 (the first
# _PyInterpreterFrame and location tables; .dynsym only, no libpython). Without Debian's, pyenv's
# 3.11 takes its place. (Pyenv's 3.11 beside Debian's cost about a minute of the 60 the test
# command may take: its frame model is Debian's, its discovery (a shared libpython) the other
# pyenv interpreters'.)
sanitizer_pythons() {
  local all=() picked=() p
  mapfile -t all < <("$top/scripts/pyenv-pythons.sh")  # oldest first
  if ((${#all[@]})); then
    picked+=("${all[0]}")
    if [[ ! -x /usr/bin/python3.11 ]]; then
      for p in "${all[@]}"; do [[ $p == */3.11.*/* ]] && picked+=("$p"); done
    fi
    picked+=("${all[${#all[@]} - 1]}")
  fi
  [[ -x /usr/bin/python3.11 ]] && picked+=(/usr/bin/python3.11)
  printf '%s\n' "${picked[@]}" | awk '!seen[$0]++' | paste -sd';'
}

declare -A took result
run_stage() {
  local name=$1 start rc
  shift
  echo "=== test.sh: stage $name ===" >&2
  start=$(date +%s)
  set +e
  (set -e; "$@")  # a stage stops at its first failing step
  rc=$?
  set -e
  took[$name]=$(($(date +%s) - start))
  if ((rc == 0)); then result[$name]=passed; else result[$name]="FAILED (exit $rc)"; fi
  echo "=== test.sh: stage $name ${result[$name]} in ${took[$name]} s ===" >&2
}

# ctest with its output kept for the summary's slowest tests ($1: the stage's name).
run_ctest() {
  local name=$1
  shift
  ctest "$@" 2>&1 | tee "$logs/ctest-$name.log"
  return "${PIPESTATUS[0]}"
}

# A sanitizer build: configured like the others, but only the targets the stage's tests run
# are built (scripts/test-targets.py reads them from ctest and CMake's file API), with -Og and
# line tables only: what the sanitizers' reports need. -Og compiled the ASan build in two thirds
# of -O1's CPU time (the later stages' builds are the CI's critical path on 2 cores); the
# sanitized tests run a little slower, which their timeouts allow.
sanitizer_build() {
  local dir=$1 regex=$2
  shift 2
  cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DHANGSHIM_WERROR=ON "-DHANGSHIM_FULL_TESTS=$full" "$@" >/dev/null
  local targets
  targets=$("$top/scripts/test-targets.py" "$dir" "$regex")
  # shellcheck disable=SC2086  # one target per word
  cmake --build "$dir" -j"$jobs" --target $targets
}

# The later stages' builds, in the background at low priority while the tests stage's tests run:
# those mostly wait (a ctest run of the tests stage used ~680 s of CPU in ~1150 s on 2 cores),
# so the cores have room. One after the other; each writes its exit status to $logs/built-NAME,
# and its stage waits for that before it builds again (a no-op when the build passed; a failed
# one is built again in the stage, where its errors show).
# Stages run in subshells, so the builder's pid goes through a file ($logs/prebuild.pid).
start_prebuilds() {
  (
    renice -n 10 "$BASHPID" >/dev/null
    set +e
    for s in release asan tsan fuzz; do
      wants "$s" || continue
      (set -e; "build_$s") >"$logs/build-$s.log" 2>&1
      echo $? >"$logs/built-$s"
    done
  ) &
  echo $! >"$logs/prebuild.pid"
}
prebuild_running() {
  [[ -s $logs/prebuild.pid ]] && kill -0 "$(cat "$logs/prebuild.pid")" 2>/dev/null
}
wait_prebuild() {
  [[ -s $logs/prebuild.pid ]] || return 0
  while [[ ! -e $logs/built-$1 ]] && prebuild_running; do sleep 2; done
  [[ -e $logs/built-$1 ]] &&
    echo "test.sh: the $1 build ran in the background during the tests stage (exit $(cat "$logs/built-$1"))" >&2
  return 0
}

# -g1 (line tables): a third less compile time than -g; backtraces keep their lines.
stage_tests() {
  local release_tests=()
  wants release && release_tests=(-LE release)  # the release stage runs them, once it is built
  # The shared-libpython 3.14 only in --full: its frame model is Debian's 3.14's, its discovery (a
  # shared libpython) pyenv's 3.6-3.13's; it is one CPython build (minutes of CPU) less.
  local variants=${HANGSHIM_PYTHON_VARIANTS:-"3.13t 3.14t"}
  [[ $full == OFF ]] || variants=${HANGSHIM_PYTHON_VARIANTS:-"3.13t 3.14t 3.14-shared"}
  HANGSHIM_RELEASE=0 HANGSHIM_PYTHON_VARIANTS=$variants "$top/scripts/setup.sh" -DHANGSHIM_WERROR=ON "-DHANGSHIM_FULL_TESTS=$full" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  start_prebuilds
  cd "$build"
  run_ctest tests --output-on-failure -j"$ctest_jobs" --timeout 600 "${release_tests[@]}" "$@"
}

# The portable release (scripts/release.sh: build-release/, dist/) in the distribution roots
# setup.sh made: tests/system/release, label release.
build_release() {
  HANGSHIM_RELEASE_JOBS=$jobs "$top/scripts/release.sh"
}
stage_release() {
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  wait_prebuild release
  build_release
  [[ -d $build ]] || "$top/scripts/setup.sh" -DHANGSHIM_WERROR=ON
  cd "$build"
  run_ctest release --output-on-failure -j"$ctest_jobs" --timeout 900 -L release
}

# ASan+UBSan: the unit tests, the fuzz findings' replay and pyframes' CLI on live processes and
# core files on the interpreters above, plus the fault-injection tests. Of pyframes/core, the core
# cases (pyframes/core/LABEL/CASE and bad_inputs), not the benchmark's smoke run.
asan_tests='^(pyframes/unit/|preload/unit/|fuzz/replay/|pyframes/live/|pyframes/core/(bad_inputs$|[^/]+/)|system/faults/)'
build_asan() {
  sanitizer_build "$top/build-asan" "$asan_tests" "-DHANGSHIM_SANITIZE=address;undefined" "-DHANGSHIM_TEST_PYTHONS=$(sanitizer_pythons)"
}
stage_asan() {
  local dir=$top/build-asan
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  wait_prebuild asan
  build_asan
  cd "$dir"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest asan --output-on-failure -j"$ctest_jobs" --timeout 900 -R "$asan_tests"
}

# ThreadSanitizer: the shim's concurrency — the ledger under concurrent writers and readers,
# the recorder's threads, and the shim preloaded into the multi-threaded C++ drivers (a revoke
# from another thread, nonblocking calls settled by polls).
tsan_tests='^(preload/unit/(ledger|recorder|shim|callsite).*|preload/shim/(threads|fork|async|stall|signals|killed|results|comm_state/.*))$'
build_tsan() {
  sanitizer_build "$top/build-tsan" "$tsan_tests" -DHANGSHIM_SANITIZE=thread "-DHANGSHIM_TEST_PYTHONS=$(sanitizer_pythons | cut -d';' -f1)"
}
stage_tsan() {
  local dir=$top/build-tsan
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  wait_prebuild tsan
  build_tsan
  cd "$dir"
  # die_after_fork=0: the fork test's child starts the shim's watchdog anew, which is what it
  # tests; TSan only refuses that by default because it cannot model all such programs.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
    run_ctest tsan --output-on-failure -j"$ctest_jobs" --timeout 900 -R "$tsan_tests"
}

build_fuzz() {
  "$top/scripts/fuzz.sh" --build-only
}
stage_fuzz() {
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  wait_prebuild fuzz
  # A fixed seed: CI's exploration is the same walk every run (longer random exploration is
  # scripts/fuzz.sh's job during development); the committed findings are replayed first.
  # The targets two at a time on two cores: each still explores alone for its whole time.
  HANGSHIM_FUZZ_TIME=${HANGSHIM_FUZZ_TIME:-30} HANGSHIM_FUZZ_SEED=${HANGSHIM_FUZZ_SEED:-1} "$top/scripts/fuzz.sh" --parallel "$jobs"
}

wants tests && run_stage tests stage_tests "$@"
wants release && run_stage release stage_release
wants asan && run_stage asan stage_asan
wants tsan && run_stage tsan stage_tsan
wants fuzz && run_stage fuzz stage_fuzz
# Nothing of the background builds outlives the run (a stage cut short leaves its build running).
kill_tree() {
  local child
  for child in $(pgrep -P "$1"); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
if prebuild_running; then kill_tree "$(cat "$logs/prebuild.pid")"; fi

status=0
echo "=== test.sh: summary ===" >&2
total=0
for s in "${stages[@]}"; do
  printf '  %-7s %-20s %6s s\n' "$s" "${result[$s]:-not run}" "${took[$s]:-0}" >&2
  total=$((total + ${took[$s]:-0}))
  [[ ${result[$s]:-} == passed ]] || status=1
done
printf '  %-27s %6s s\n' "all" "$total" >&2
# ctest's lines: "  12/345 Test  #67: name .....   Passed    1.23 sec".
echo "=== test.sh: the 20 slowest tests ===" >&2
for f in "$logs"/ctest-*.log; do
  [[ -e $f ]] || continue
  stage=${f##*/ctest-}
  sed -nE "s/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: (.*[^ .]) \.+.* ([0-9.]+) sec\$/\2\t${stage%.log}\t\1/p" "$f"
done | sort -rn | awk -F'\t' 'NR <= 20 {printf "  %8.1f s  %-7s %s\n", $1, $2, $3}' >&2  # awk reads all: no SIGPIPE
exit $status
