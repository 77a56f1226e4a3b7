#!/usr/bin/env bash
# Sets up (dependencies, build with warnings as errors) and runs every test with ctest, then the
# reliability stages: ASan+UBSan, ThreadSanitizer and the fuzzers (README "Reliability").
#   scripts/test.sh [ctest args]        extra arguments go to the main ctest run, e.g. -R unit
# Stages (HANGSHIM_CI_STAGES, comma-separated; default all four, or only "tests" when ctest
# arguments are given): tests, asan, tsan, fuzz. HANGSHIM_FUZZ_TIME: seconds per fuzzer (40),
# HANGSHIM_FUZZ_SEED: the fuzzers' seed (1).
# Every stage runs even when an earlier one failed; the exit status is non-zero if any failed.
# shellcheck disable=SC2317  # functions run through run_stage / trap look unreachable to shellcheck
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
jobs=$(nproc)
if (($#)); then default_stages=tests; else default_stages=tests,asan,tsan,fuzz; fi
IFS=, read -r -a stages <<<"${HANGSHIM_CI_STAGES:-$default_stages}"
for s in "${stages[@]}"; do
  case $s in tests|asan|tsan|fuzz) ;; *) echo "test.sh: unknown stage '$s' in HANGSHIM_CI_STAGES (tests,asan,tsan,fuzz)" >&2; exit 2 ;; esac
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
  for p in /root/.pyenv/versions/3.*/bin/python3; do [[ -x $p ]] && all+=("$p"); done
  if ((${#all[@]})); then
    mapfile -t all < <(printf '%s\n' "${all[@]}" | sort -V)
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

stage_tests() {
  "$top/scripts/setup.sh" -DHANGSHIM_WERROR=ON
  cd "$build"
  ctest --output-on-failure -j"$jobs" --timeout 600 "$@"
}

# ASan+UBSan: the unit tests and the integration tests (pyframes CLI and core files) on the
# interpreters above, plus the fault-injection tests.
stage_asan() {
  local dir=$top/build-asan
  HANGSHIM_BUILD_DIR=$dir "$top/scripts/setup.sh" -DHANGSHIM_WERROR=ON "-DHANGSHIM_SANITIZE=address;undefined" \
    "-DHANGSHIM_TEST_PYTHONS=$(sanitizer_pythons)"
  cd "$dir"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j"$jobs" --timeout 900 -R '^(unit/|pyframes/|core/|faults/)'
}

# ThreadSanitizer: the shim's concurrency — the ledger under concurrent writers and readers,
# the recorder's threads, and the shim preloaded into the multi-threaded C++ drivers (a revoke
# from another thread, nonblocking calls settled by polls).
stage_tsan() {
  local dir=$top/build-tsan
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  cmake -S "$top" -B "$dir" -DHANGSHIM_WERROR=ON -DHANGSHIM_SANITIZE=thread \
    "-DHANGSHIM_TEST_PYTHONS=$(sanitizer_pythons | cut -d';' -f1)" >/dev/null
  cmake --build "$dir" -j"$jobs" --target unit_tests hangshim hangshim_cli pyframes_cli shim_driver comm_state_driver fakenccl fakecuda
  cd "$dir"
  # die_after_fork=0: the fork test's child starts the shim's watchdog anew, which is what it
  # tests; TSan only refuses that by default because it cannot model all such programs.
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
    ctest --output-on-failure -j"$jobs" --timeout 900 \
    -R '^(unit/(ledger|recorder|shim|callsite).*|shim/(threads|fork|async|stall|signals|killed|results|comm_state/.*))$'
}

stage_fuzz() {
  HANGSHIM_SETUP_DEPS_ONLY=1 "$top/scripts/setup.sh"
  # A fixed seed: CI's exploration is the same walk every run (longer random exploration is
  # scripts/fuzz.sh's job during development); the committed findings are replayed first.
  HANGSHIM_FUZZ_TIME=${HANGSHIM_FUZZ_TIME:-40} HANGSHIM_FUZZ_SEED=${HANGSHIM_FUZZ_SEED:-1} "$top/scripts/fuzz.sh"
}

wants tests && run_stage tests stage_tests "$@"
wants asan && run_stage asan stage_asan
wants tsan && run_stage tsan stage_tsan
wants fuzz && run_stage fuzz stage_fuzz

status=0
echo "=== test.sh: summary ===" >&2
for s in "${stages[@]}"; do
  printf '  %-6s %-20s %6s s\n' "$s" "${result[$s]:-not run}" "${took[$s]:-0}" >&2
  [[ ${result[$s]:-} == passed ]] || status=1
done
exit $status
