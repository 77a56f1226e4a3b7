#!/usr/bin/env bash
# Sets up (dependencies, build) and runs the demo: a sample Python program is started and
# pyframes prints its Python stacks.
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
"$top/scripts/setup.sh"
python3 "$top/tests/integration/programs/demo_sleeper.py" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 1
"$build/pyframes/pyframes" "$pid"
