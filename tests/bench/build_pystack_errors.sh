#!/usr/bin/env bash
# ctest bench/build_pystack_errors: every bad input of tests/bench/build_pystack.sh ends it with
# status 2 and one line on stderr that names what was wrong (the path, option or version given),
# before it installs, configures or writes anything. Quick (no build, no apt-get): each case fails
# before the Debian packages are looked at. The build itself is checked by hand (docs/benchmarks.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/build_pystack.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=$(command -v python3)
prefix=$work/prefix
failures=0

# A pystack tree of the Cython era (no CMake build) and one of the nanobind era, as far as the
# script looks at them; a nanobind tree without its robin_map submodule.
mkdir -p "$work/cython/src/pystack" "$work/nanobind-era/src/pystack" "$work/empty" "$work/nanobind/cmake"
echo '__version__ = "1.6.0"' >"$work/cython/src/pystack/_version.py"
echo '__version__ = "1.7.0"' >"$work/nanobind-era/src/pystack/_version.py"
echo 'find_package(nanobind CONFIG REQUIRED)' >"$work/nanobind-era/CMakeLists.txt"
touch "$work/nanobind/cmake/nanobind-config.cmake"

# expect NAMED ARG...: build_pystack.sh ARG... must exit 2 with one stderr line that contains NAMED.
expect() {
  local named=$1 status=0 lines
  shift
  "$script" "$@" --prefix "$prefix" >"$work/out" 2>"$work/err" || status=$?
  lines=$(wc -l <"$work/err")
  if ((status != 2)) || ((lines != 1)) || ! grep -qF -- "$named" "$work/err" || [[ -s $work/out ]] ||
    [[ -e $prefix ]]; then
    echo "FAIL: build_pystack.sh $* --prefix $prefix: status $status, $lines stderr lines, wanted 2 and one" \
      "line naming '$named'; stderr: $(cat "$work/err"); stdout: $(cat "$work/out"); prefix made: $([[ -e $prefix ]] && echo yes || echo no)"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $(cat "$work/err")"
  fi
}

expect "SRC_DIR" --python "$python"
expect "$work/missing" "$work/missing"
expect "$work/empty" "$work/empty"
expect "1.6.0" "$work/cython"
expect "Cython" "$work/cython"
expect "--bogus" "$work/nanobind-era" --bogus
expect "$work/empty" "$work/nanobind-era" "$work/empty"
expect "$work/no-python" "$work/nanobind-era" --python "$work/no-python"
expect "$work/empty" "$work/nanobind-era" --python "$python" --nanobind "$work/empty"
expect "robin_map" "$work/nanobind-era" --python "$python" --nanobind "$work/nanobind"
# --prefix without a value (the helper's own --prefix comes first here, so this one is last).
status=0
"$script" "$work/nanobind-era" --prefix 2>"$work/err" || status=$?
if ((status == 2)) && grep -qF -- "--prefix" "$work/err"; then
  echo "ok: --prefix (no value) -> $(cat "$work/err")"
else
  echo "FAIL: --prefix without a value: status $status, stderr: $(cat "$work/err")"
  failures=$((failures + 1))
fi

echo "$((11 - failures)) passed, $failures failed"
((failures == 0))
