#!/usr/bin/env bash
# Sets up (dependencies, build with warnings as errors) and runs every test with ctest.
# Extra arguments go to ctest, e.g. scripts/test.sh -R unit
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
"$top/scripts/setup.sh" -DHANGSHIM_WERROR=ON
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@"
