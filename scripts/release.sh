#!/usr/bin/env bash
# Makes the release: programs that run on any x86-64 Linux with glibc >= 2.17 and nothing else
# installed, as a wheel and as a plain tarball.
#   scripts/release.sh
#   -> dist/hangshim-VERSION-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#      dist/hangshim-VERSION-linux-x86_64.tar.gz   (bin/, lib/libhangshim.so, share/hangshim/)
# The build is HANGSHIM_PORTABLE (cmake/HangshimPortable.cmake) in build-release/ (reused by the
# next run and by the release tests); the shim links against Ubuntu 20.04's glibc, a root that
# scripts/make-roots.sh makes once per machine. Before packaging, every artifact is checked:
# the CLIs static, the shim needing only glibc's own libraries and no symbol version past 2.17.
# The same build makes the NCCL stand-in the same portable way (build-release/standin/lib,
# for the release tests in the distribution roots; never packaged).
# HANGSHIM_RELEASE_BUILD_DIR (default build-release), HANGSHIM_RELEASE_JOBS (default 2).
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_RELEASE_BUILD_DIR:-$top/build-release}
jobs=${HANGSHIM_RELEASE_JOBS:-2}
roots=${HANGSHIM_ROOTS_DIR:-$HOME/.cache/hangshim/roots}
floor=2.17
platform=manylinux_2_17_x86_64.manylinux2014_x86_64
version=$(sed -n 's/^project(hangshim VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
dist=$top/dist

"$top/scripts/make-roots.sh" focal
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHANGSHIM_BUILD_TESTS=OFF -DHANGSHIM_PORTABLE=ON \
  -DHANGSHIM_PORTABLE_SYSROOT="$roots/focal" >/dev/null
cmake --build "$build" -j"$jobs"

"$top/scripts/check-portable.sh" "$floor" "$build/pyframes/pyframes" "$build/preload/hangshim" \
  "$build/preload/libhangshim.so"

mkdir -p "$dist"
rm -f "$dist/hangshim-$version-"*
# The tarball: what `cmake --install` lays out, less the pieces for building against pyframes.
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
prefix=$staging/hangshim-$version
cmake --install "$build" --prefix "$prefix" --strip >/dev/null
rm -rf "$prefix/include" "$prefix/lib/cmake" "$prefix/lib/libpyframes.a"
tar -C "$staging" -czf "$dist/hangshim-$version-linux-x86_64.tar.gz" "hangshim-$version"

# The wheel, from a copy of the packaging files and the build above (nothing compiled again).
source=$staging/source
mkdir "$source"
cp "$top/pyproject.toml" "$top/setup.py" "$top/setup.cfg" "$top/CMakeLists.txt" "$top/README.md" "$source/"
cp -r "$top/python" "$source/python"
HANGSHIM_WHEEL_BUILD_DIR=$build HANGSHIM_WHEEL_PLATFORM=$platform \
  /usr/bin/python3 -m build --wheel --no-isolation --outdir "$dist" "$source" >"$staging/wheel.log" 2>&1 ||
  { tail -n 30 "$staging/wheel.log" >&2; exit 1; }
ls -l "$dist/hangshim-$version-"*
