#!/usr/bin/env bash
# Benchmarks `hangshim report` on synthetic jobs of 8, 512, 8192 and 32768 ranks (one ledger per rank,
# written by the real ledger writer; rank N/2 stuck outside NCCL, the others waiting in
# collective #C) and prints a markdown table (docs/benchmarks.md's report table comes from
# here): wall and CPU time (user + system) of the text and the JSON report (median of 3 runs)
# and peak memory, then what reading the largest job's ledgers costs per ledger, step by step
# (ledger_read_bench). Wall time on a shared machine depends on its load, also printed.
#   tests/bench/report_bench.sh [--smoke] [--large] [--exports] [--build DIR] [--dir DIR] [--collectives C] [--ring R]
# --smoke: 8 and 64 ranks only (ctest runs this). --large: 131072 ranks too (about 5.6 GiB of
# ledgers; never in CI): when the directory's file system lacks the room, 65536 instead, said
# so. --exports: the multi-node path instead: nodes of 8 ranks, one `hangshim export` each, one
# report over all the exports (a second table; the exports cost about as much room again, so
# each node's ledgers are removed once exported). --dir: where the ledgers go (default: a new directory under /dev/shm, where real ledgers
# live; removed at the end).
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,8 "${1:-}"
smoke=0
large=0
exports=0
base=""
collectives=200
ring=256
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --large) large=1 ;;
    --exports) exports=1 ;;
    --build) build=$2; shift ;;
    --dir) base=$2; shift ;;
    --collectives) collectives=$2; shift ;;
    --ring) ring=$2; shift ;;
    *) echo "report_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
hangshim=$build/preload/hangshim
fixture=$build/tests/preload/report/report_fixture
read_bench=$build/tests/bench/ledger_read_bench  # optional: its table is left out when not built
read_table=
for tool in "$hangshim" "$fixture"; do
  [[ -x $tool ]] || { echo "report_bench: $tool is not built (cmake --build $build)" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "report_bench: GNU time is missing (apt-get install time)" >&2; exit 2; }
if [[ -z $base ]]; then
  base=$(mktemp -d /dev/shm/hangshim-report-bench.XXXXXX 2>/dev/null || mktemp -d)
fi
trap 'rm -rf "$base"' EXIT
sizes=(8 512 8192 32768)
if ((large)); then
  # 45 KiB per ledger with the default ring of 256 calls, and a margin of a tenth.
  need_kib=$((131072 * 45 * 11 / 10))
  free_kib=$(df -Pk "$base" | awk 'NR == 2 { print $4 }')
  if ((free_kib >= need_kib)); then
    sizes+=(131072)
  else
    echo "report_bench: $((free_kib / 1024)) MiB free under $base, 131072 ranks need about $((need_kib / 1024)); measuring 65536" >&2
    sizes+=(65536)
  fi
fi
((smoke)) && sizes=(8 64)

# Median of three runs (by wall time): "wall_s cpu_s peak_kib" of `hangshim report ARGS`.
measure() {
  local runs=()
  for _ in 1 2 3; do
    /usr/bin/time -o "$base/time" -f '%e %U %S %M' "$hangshim" report "$@" >/dev/null
    runs+=("$(tail -n 1 "$base/time" | awk '{ printf "%s %.2f %s", $1, $2 + $3, $4 }')")
  done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p
}

# The job of $1 ranks in $2: its ledgers, or (--exports) one export per node of 8 ranks.
make_job() {
  local n=$1 dir=$2
  mkdir -p "$dir"
  chmod 700 "$dir"
  if ((!exports)); then
    "$fixture" job "$dir" --ranks "$n" --collectives "$collectives" --ring "$ring"
    return
  fi
  local nodes=$(((n + 7) / 8))
  mkdir -p "$dir.ledgers"
  chmod 700 "$dir.ledgers"
  "$fixture" job "$dir.ledgers" --ranks "$n" --nodes "$nodes" --collectives "$collectives" --ring "$ring"
  for ((i = 0; i < nodes; ++i)); do
    local node=$dir.ledgers/node$i
    ((nodes == 1)) && node=$dir.ledgers  # one node: the fixture writes no node0/
    "$hangshim" export --no-stacks "$node" -o "$dir/node$i.json" 2>/dev/null
    ((nodes == 1)) || rm -rf "$node"
  done
  rm -rf "$dir.ledgers"
}

what="ledgers on disk"
((exports)) && what="exports on disk"
echo "| ranks | $what | report (text): wall / CPU | report --json: wall / CPU | peak memory | per rank |"
echo "|---:|---:|---:|---:|---:|---:|"
worst=0
for n in "${sizes[@]}"; do
  dir=$base/n$n
  make_job "$n" "$dir"
  disk=$(du -sk "$dir" | cut -f1)
  first=$("$hangshim" report --no-stacks "$dir" | head -n 1)
  expected="HANG: rank $((n / 2)) never issued all_reduce #$collectives"
  if [[ $first != "$expected"* ]]; then
    echo "report_bench: wrong verdict at $n ranks: $first" >&2
    exit 1
  fi
  read -r text_s text_cpu text_kib < <(measure --no-stacks "$dir")
  read -r json_s json_cpu json_kib < <(measure --no-stacks --json "$dir")
  peak=$((text_kib > json_kib ? text_kib : json_kib))
  printf '| %d | %d MiB | %.2f s / %.2f s | %.2f s / %.2f s | %d MiB | %d KiB |\n' "$n" $((disk / 1024)) "$text_s" \
    "$text_cpu" "$json_s" "$json_cpu" $((peak / 1024)) $((peak / n))
  if [[ $n -eq 8192 ]] && awk -v t="$text_s" -v j="$json_s" 'BEGIN { exit !(t > 1.0 || j > 1.0) }'; then worst=1; fi
  # The largest job's ledgers: what reading them costs, step by step (ledger_read_bench.cpp).
  if ((!exports)) && [[ $n -eq ${sizes[-1]} && -x $read_bench ]]; then
    read_table=$("$read_bench" "$dir") || { echo "report_bench: ledger_read_bench failed on $dir" >&2; exit 1; }
  fi
  rm -rf "$dir"
done
if [[ -n $read_table ]]; then
  echo
  echo "$read_table"
fi
echo
echo "(synthetic jobs: $collectives collectives per rank, ring of $ring calls per ledger; $(nproc) cores," \
  "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); load average $(cut -d' ' -f1-3 /proc/loadavg))"
if ((worst)); then
  echo "report_bench: over budget: more than 1 s at 8192 ranks" >&2
  exit 1
fi
