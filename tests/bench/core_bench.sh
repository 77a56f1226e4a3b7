#!/usr/bin/env bash
# Benchmark: pyframes on an ~80 MB core vs `gdb -batch -ex py-bt` on the same core; prints a
# markdown table (for docs/benchmarks.md).
#   tests/bench/core_bench.sh [--pyframes PATH] [--python /usr/bin/python3.11] [--smoke]
# Installs what it needs when missing (Debian, apt-get), and says so: gdb (gcore and py-bt),
# python3.11-dbg (the debug symbols of /usr/bin/python3.11 and the gdb extension behind py-bt)
# and time (GNU time, which measures peak RSS).
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,7 "${1:-}"
args=("$@")
if [[ " $* " != *" --pyframes "* ]]; then
  args+=(--pyframes "$build/pyframes/pyframes")
fi

smoke=0
[[ " $* " == *" --smoke "* ]] && smoke=1
if ((!smoke)); then
  missing=()
  for p in gdb python3.11-dbg time; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "core_bench: installing ${missing[*]} (gdb: gcore, py-bt; python3.11-dbg: symbols and py-bt for" \
         "/usr/bin/python3.11; time: peak RSS)" >&2
    sudo=()
    [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
command -v gcore >/dev/null || { echo "core_bench: gcore not found: apt-get install -y gdb" >&2; exit 1; }
((smoke)) || [[ -x /usr/bin/time ]] || { echo "core_bench: /usr/bin/time not found: apt-get install -y time" >&2; exit 1; }
exec python3 "$top/tests/bench/core_bench.py" "${args[@]}"
