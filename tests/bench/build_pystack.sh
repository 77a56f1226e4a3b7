#!/usr/bin/env bash
# Builds pystack (bloomberg/pystack, 1.7.0 or newer: its nanobind build) from a source tree you
# cloned, for one Python, into a prefix that tests/bench/pyframes_bench.sh finds; no PyPI needed.
#   tests/bench/build_pystack.sh SRC_DIR [--nanobind DIR] [--python PATH] [--prefix DIR]
# SRC_DIR: a pystack checkout (git clone, then git checkout v1.7.0). --nanobind: a nanobind source
# tree with its robin_map submodule (git clone --recursive, a v2 tag); not needed where
# `PYTHON -m nanobind` works (Debian 13's python3-nanobind). --python: the interpreter pystack runs
# on (default /usr/bin/python3.11, Debian's). --prefix: where it goes (default
# ${XDG_CACHE_HOME:-~/.cache}/hangshim/pystack): PREFIX/bin/pystack, PREFIX/lib/pystack/, the
# CMake build in PREFIX/build. Installs the Debian build packages it lacks with apt-get (cmake,
# g++, make, pkg-config, libelf-dev, libdw-dev, pythonX.Y-dev). Ends by running `pystack remote`
# on a sleeping child of PYTHON and checking that its frames are there.
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,12 "${1:-}"

fail() {
  echo "build_pystack: $*" >&2
  exit 2
}

src=
nanobind=
python=/usr/bin/python3.11
prefix=${XDG_CACHE_HOME:-$HOME/.cache}/hangshim/pystack
while (($#)); do
  case $1 in
    --nanobind | --python | --prefix)
      (($# >= 2)) || fail "$1 needs a value (see --help)"
      case $1 in
        --nanobind) nanobind=$2 ;;
        --python) python=$2 ;;
        --prefix) prefix=$2 ;;
      esac
      shift ;;
    -*) fail "unknown option '$1' (see --help)" ;;
    *) [[ -z $src ]] || fail "one SRC_DIR only, got '$src' and '$1' (see --help)"; src=$1 ;;
  esac
  shift
done

[[ -n $src ]] || fail "no SRC_DIR: pass a pystack checkout (git clone bloomberg/pystack, then git checkout v1.7.0)"
[[ -d $src ]] || fail "$src does not exist: pass a pystack checkout (git clone bloomberg/pystack, then git checkout v1.7.0)"
[[ -f $src/src/pystack/_version.py ]] ||
  fail "$src is not a pystack source tree (no src/pystack/_version.py): pass the top of a bloomberg/pystack checkout"
src=$(cd "$src" && pwd)
version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$src/src/pystack/_version.py")
if ! grep -qs nanobind "$src/CMakeLists.txt"; then
  fail "pystack $version in $src builds with Cython (setup.py), which this script does not do: git checkout v1.7.0 or newer (the nanobind build)"
fi
[[ -x $python ]] || fail "$python is not an executable Python: pass --python PATH (or apt-get install python3.11)"
python_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
  fail "$python does not run: pass a working --python PATH"

# nanobind: a source tree given with --nanobind, or a nanobind package of this Python.
if [[ -n $nanobind ]]; then
  [[ -f $nanobind/cmake/nanobind-config.cmake ]] ||
    fail "$nanobind is not a nanobind source tree (no cmake/nanobind-config.cmake): pass the top of a wjakob/nanobind checkout"
  [[ -f $nanobind/ext/robin_map/include/tsl/robin_map.h ]] ||
    fail "$nanobind has no ext/robin_map (a git submodule): run git submodule update --init in it, or clone with --recursive"
  nanobind_cmake=$(cd "$nanobind/cmake" && pwd)
elif nanobind_cmake=$("$python" -m nanobind --cmake_dir 2>/dev/null) && [[ -n $nanobind_cmake ]]; then
  :
else
  fail "nanobind is not found for $python: pass --nanobind DIR, a wjakob/nanobind checkout (git clone --recursive, tag v2.15.0), or apt-get install python3-nanobind (Debian 13 and newer)"
fi

# The Debian build packages that are missing, one per missing tool, library or header.
missing_packages() {
  local include
  command -v cmake >/dev/null || echo cmake
  command -v c++ >/dev/null || echo g++
  command -v make >/dev/null || echo make
  if command -v pkg-config >/dev/null; then
    pkg-config --exists libelf || echo libelf-dev
    pkg-config --exists libdw || echo libdw-dev
  else
    echo pkg-config libelf-dev libdw-dev
  fi
  include=$("$python" -c 'import sysconfig; print(sysconfig.get_path("include"))')
  [[ -f $include/Python.h ]] || echo "python$python_version-dev"
}
# shellcheck disable=SC2207  # package names have no spaces
missing=($(missing_packages))
if ((${#missing[@]})); then
  command -v apt-get >/dev/null ||
    fail "missing ${missing[*]} (the Debian names): install them with your package manager, then run this again"
  echo "build_pystack: installing ${missing[*]} with apt-get" >&2
  sudo=()
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >/dev/null ||
    fail "apt-get update failed: install ${missing[*]} by hand, then run this again"
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed: install them by hand, then run this again"
  # shellcheck disable=SC2207
  still=($(missing_packages))
  ((${#still[@]} == 0)) || fail "still missing after apt-get: ${still[*]} (is $python Debian's? else install its headers)"
fi

build=$prefix/build
mkdir -p "$build" || fail "cannot create $build: pass a writable --prefix DIR"
# RelWithDebInfo is what pystack's wheels are built with (pyproject.toml, tool.scikit-build).
configure_log=$build/configure.log
if ! cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$python" \
  -Dnanobind_DIR="$nanobind_cmake" >"$configure_log" 2>&1; then
  if grep -q 'SABIModule' "$configure_log"; then
    fail "this pystack checkout (version $version) asks CMake for Development.SABIModule, which needs CMake 3.26 or newer (this is $(cmake --version | sed -n '1s/.* //p')): git checkout v1.7.0 in $src, or use a newer CMake"
  fi
  fail "configuring pystack failed: $(grep -m1 -A2 'CMake Error' "$configure_log" | tr -s ' \n' ' ') (all of it in $configure_log)"
fi
echo "build_pystack: building pystack $version for $python (nanobind from $nanobind_cmake) in $build" >&2
build_log=$build/build.log
nice -n 10 cmake --build "$build" -j"$(nproc)" >"$build_log" 2>&1 ||
  fail "building pystack failed: $(grep -m1 -E 'error|Error' "$build_log") (all of it in $build_log)"
module=$(find "$build" -name '_pystack*.so' -print -quit)
[[ -n $module ]] || fail "the build made no _pystack module (see $build_log)"

# The package as a wheel would install it: pystack's Python files and the extension module, and a
# launcher of the shape pip writes for its console script.
lib=$prefix/lib
rm -rf "$lib/pystack"
mkdir -p "$lib" "$prefix/bin"
cp -r "$src/src/pystack" "$lib/"
rm -rf "$lib/pystack/_pystack"
cp "$module" "$lib/pystack/"
cat >"$prefix/bin/pystack" <<EOF
#!$python
# pystack $version from $src, built by tests/bench/build_pystack.sh.
import sys
sys.path.insert(0, "$lib")
from pystack.__main__ import main
sys.exit(main())
EOF
chmod +x "$prefix/bin/pystack"

# Proof: a sleeping Python, 5 calls of `nest` deep, read back by pystack.
check_dir=$(mktemp -d)
child=
trap '[[ -z $child ]] || { kill "$child" 2>/dev/null; wait "$child" 2>/dev/null || true; }; rm -rf "$check_dir"' EXIT
"$python" -c '
import sys, time
def nest(n):
    if n:
        return nest(n - 1)
    open(sys.argv[1], "w").close()
    time.sleep(600)
nest(4)' "$check_dir/ready" &
child=$!
for ((tries = 0; tries < 100; tries++)); do
  [[ -e $check_dir/ready ]] && break
  kill -0 "$child" 2>/dev/null || fail "$python -c ... exited before it was ready (does $python run?)"
  sleep 0.1
done
[[ -e $check_dir/ready ]] || fail "$python did not start its sleeping test function within 10 s"
out=$("$prefix/bin/pystack" remote "$child" 2>&1) || fail "pystack remote $child failed: $(tail -1 <<<"$out")"
frames=$(grep -c 'line [0-9]*, in nest' <<<"$out" || true)
((frames == 5)) || fail "pystack remote $child showed $frames frames of nest, not 5: $(tr '\n' ' ' <<<"$out")"
echo "build_pystack: pystack $version built and checked ($prefix/bin/pystack remote read 5 frames of a sleeping $python)"
