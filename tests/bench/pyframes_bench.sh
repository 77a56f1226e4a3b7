#!/usr/bin/env bash
# Benchmarks pyframes against pystack and `gdb -batch -ex py-bt` on the same live process and
# prints a markdown table (docs/benchmarks.md's table comes from here). Not run by ctest, except
# the quick --smoke mode (label bench), which installs nothing.
#   tests/bench/pyframes_bench.sh [--smoke] [--pyframes PATH] [--python PATH] [--pystack PATH] [--depths M,W]
#     [--before PYFRAMES] [--no-gdb]
# Installs with apt-get when missing (not in --smoke mode): gdb, python3.11 and python3.11-dbg
# (debug symbols of Debian's /usr/bin/python3.11 and the py-bt gdb extension, which gdb needs;
# pyframes needs neither), and time (GNU time, for peak memory). pystack has no Debian package:
# it is used when found (--pystack, PATH, or tests/bench/build_pystack.sh's default prefix
# ~/.cache/hangshim/pystack, where that script builds it from a pystack checkout), else its column
# says why it is empty.
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,12 "${1:-}"
smoke=0
pyframes=${HANGSHIM_BUILD_DIR:-$top/build}/pyframes/pyframes
python=/usr/bin/python3.11
extra=()
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --pyframes) pyframes=$2; shift ;;
    --python) python=$2; shift ;;
    --pystack | --depths | --before) extra+=("$1" "$2"); shift ;;
    --no-gdb) extra+=("$1") ;;
    *) echo "pyframes_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ ! -x $pyframes ]]; then
  echo "pyframes_bench: $pyframes is not built (run scripts/setup.sh first)" >&2
  exit 2
fi

if ((!smoke)); then
  missing=()
  for p in gdb python3.11 python3.11-dbg time; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "pyframes_bench: installing ${missing[*]} (for the gdb py-bt comparison)" >&2
    sudo=()
    [[ $(id -u) -ne 0 ]] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
if [[ ! -x $python ]]; then
  echo "pyframes_bench: $python is missing (apt-get install python3.11, or pass --python)" >&2
  exit 2
fi
args=(--pyframes "$pyframes" --python "$python" "${extra[@]}")
((smoke)) && args+=(--smoke)
exec python3 "$here/pyframes_bench.py" "${args[@]}"
