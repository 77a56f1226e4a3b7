# Sourced by the benchmark scripts (tests/bench/*_bench.sh), which have set -euo pipefail:
# --help from the script's own header comment, and the paths every benchmark starts from.
# shellcheck shell=bash disable=SC2034  # each benchmark uses some of the paths set here

# bench_help LINES FIRST_ARG: when FIRST_ARG is --help or -h, prints the header comment's lines
# LINES (a sed range such as 2,8) without their "# " and exits.
bench_help() {
  if [[ ${2:-} == --help || ${2:-} == -h ]]; then
    sed -n "$1p" "$0" | sed 's/^# \{0,1\}//'
    exit 0
  fi
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
