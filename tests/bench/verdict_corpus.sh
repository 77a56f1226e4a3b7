#!/usr/bin/env bash
# Scores `hangshim report` on the whole verdict corpus (tests/system/scenarios/corpus: jobs in the styles
# of plain torch.distributed, Lightning, accelerate, DeepSpeed, Megatron, vLLM and the Hugging Face
# Trainer, each writing its own truth) and prints the per-job table and the totals that
# docs/verdict-corpus.md keeps: four facts per job (culprits, the loop line and the iteration in
# the headline, the cause). ctest runs the same jobs per style (report/corpus/*).
#   tests/bench/verdict_corpus.sh [--build DIR] [--python PY] [--parallel N] [--out DIR]
# --out: also keep corpus.json and corpus.md there.
set -euo pipefail
# shellcheck source=tests/bench/bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
bench_help 2,8 "${1:-}"
python=python3
parallel=4
out=""
while (($#)); do
  case $1 in
    --build) build=$2; shift ;;
    --python) python=$2; shift ;;
    --parallel) parallel=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "verdict_corpus: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
hangshim=$build/preload/hangshim
shim=$build/preload/libhangshim.so
fakenccl=$build/standin/lib
for tool in "$hangshim" "$shim" "$fakenccl/libnccl.so.2"; do
  [[ -e $tool ]] || { echo "verdict_corpus: $tool is not built (cmake --build $build)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
python3 "$top/tests/system/scenarios/corpus/run_corpus.py" --hangshim "$hangshim" --shim "$shim" --fakenccl "$fakenccl" \
  --python "$python" --parallel "$parallel" --json "$work/corpus.json" --markdown "$work/corpus.md" || status=$?
echo
cat "$work/corpus.md"
if [[ -n $out ]]; then
  mkdir -p "$out"
  cp "$work/corpus.json" "$work/corpus.md" "$out/"
fi
exit "$status"
