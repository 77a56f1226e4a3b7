#!/usr/bin/env bash
# Proves hangshim on a GPU node in one short run: the shim, the report and pyframes on real CUDA,
# NCCL and PyTorch (docs/gpu-check.md). One line per check, PASS|FAIL|SKIP name: figures; the
# details as JSON in $OUT/gpu-checks.json when OUT is set.
#   tests/system/gpu/run.sh [--list] [--rehearse] [--artifacts DIR] [--standin DIR] [--python PY]
#   --list            print the checks and what each proves, run nothing
#   --rehearse        no GPU needed: run the checks that have a CPU analogue on the NCCL
#                     stand-in (standin/), the others SKIP with their reason
#   --artifacts DIR   the tools: a release prefix (bin/, lib/) or a build directory; default
#                     HANGSHIM_GPU_TOOLS, else dist/'s tarball, build-release/, build/
#   --standin DIR     the stand-in's libnccl.so.2 and libcuda.so.1 (--rehearse; default
#                     build/standin/lib)
#   --python PY       the interpreter (default python3; on a GPU the one with torch)
# Exit: 0 every check passed or skipped; 1 a check failed; 2 bad usage or no tools;
# 77 no GPU here and no --rehearse (nothing checked).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
checks=(training overhead device_hang flight_recorder cuda_graph pyframes watchdog_abort)
check_timeout=${HANGSHIM_GPU_CHECK_TIMEOUT:-120}  # seconds per check; 7 checks stay under 8 minutes in practice

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "tests/system/gpu/run.sh: $*" >&2; exit 2; }

list=0 rehearse=0 artifacts=${HANGSHIM_GPU_TOOLS:-} standin="" python=python3
while [[ $# -gt 0 ]]; do
  case $1 in
    --list) list=1 ;;
    --rehearse) rehearse=1 ;;
    --artifacts) [[ $# -ge 2 ]] || die "--artifacts needs a directory"; artifacts=$2; shift ;;
    --standin) [[ $# -ge 2 ]] || die "--standin needs a directory"; standin=$2; shift ;;
    --python) [[ $# -ge 2 ]] || die "--python needs an interpreter"; python=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (try --help)" ;;
  esac
  shift
done

if [[ $list == 1 ]]; then
  for name in "${checks[@]}"; do
    # the first sentence of the check's docstring: "Check N, name: what it proves."
    printf '%-16s %s\n' "$name" "$(sed -n '/^"""/,/^$/p' "$here/check_$name.py" | tr '\n' ' ' |
      sed 's/^"""//; s/\([.]\) .*/\1/')"
  done
  exit 0
fi

# A GPU: a device node or nvidia-smi, and a torch that sees CUDA (what every check needs).
gpu_reason() {
  local why=()
  if [[ ! -e /dev/nvidia0 ]] && ! nvidia-smi -L >/dev/null 2>&1; then
    why+=("no /dev/nvidia0 and no working nvidia-smi")
  fi
  local seen
  if ! seen=$("$python" -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null); then
    why+=("$python cannot import torch")
  elif [[ $seen != True ]]; then
    why+=("torch.cuda.is_available() is $seen")
  fi
  local joined="" part
  for part in "${why[@]}"; do joined+=${joined:+, }$part; done
  echo "$joined"
}

mode=gpu
reason=$(gpu_reason)
if [[ -n $reason ]]; then
  if [[ $rehearse == 0 ]]; then
    echo "tests/system/gpu/run.sh: no GPU here ($reason): nothing checked; --rehearse runs the checks on the CPU stand-in"
    exit 77
  fi
  mode=rehearse
elif [[ $rehearse == 1 ]]; then
  mode=rehearse
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hangshim-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The tools: a release prefix (bin/hangshim, lib/libhangshim.so) or a build directory.
use_tools() {
  local dir=$1
  if [[ -x $dir/bin/hangshim && -f $dir/lib/libhangshim.so && -x $dir/bin/pyframes ]]; then
    hangshim=$dir/bin/hangshim shim=$dir/lib/libhangshim.so pyframes=$dir/bin/pyframes
  elif [[ -x $dir/preload/hangshim && -f $dir/preload/libhangshim.so && -x $dir/pyframes/pyframes ]]; then
    hangshim=$dir/preload/hangshim shim=$dir/preload/libhangshim.so pyframes=$dir/pyframes/pyframes
  else
    return 1
  fi
  tools_from=$dir
}
hangshim="" shim="" pyframes="" tools_from=""
if [[ -n $artifacts ]]; then
  use_tools "$artifacts" || die "--artifacts/HANGSHIM_GPU_TOOLS $artifacts holds neither bin/hangshim, bin/pyframes and lib/libhangshim.so nor a build's preload/ and pyframes/"
else
  tarball=$(find "$top/dist" -maxdepth 1 -name 'hangshim-*-linux-x86_64.tar.gz' 2>/dev/null | sort | tail -n 1)
  if [[ -n $tarball ]] && tar -C "$work" -xzf "$tarball"; then
    use_tools "$(find "$work" -maxdepth 1 -name 'hangshim-*' -type d | head -n 1)"
  fi
  [[ -n $hangshim ]] || use_tools "$top/build-release" || use_tools "$top/build" ||
    die "no tools: no dist/hangshim-*-linux-x86_64.tar.gz, no build-release/ or build/ with the programs; build them or give --artifacts DIR"
fi

if [[ $mode == rehearse ]]; then
  standin=${standin:-$top/build/standin/lib}
  [[ -f $standin/libnccl.so.2 && -f $standin/libcuda.so.1 ]] ||
    die "--rehearse needs the NCCL stand-in: no libnccl.so.2 and libcuda.so.1 in $standin (cmake --build build --target fakenccl fakecuda, or --standin DIR)"
  ranks=2
else
  ranks=$("$python" -c 'import torch; print(torch.cuda.device_count())')
fi

if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT" || die "cannot create OUT=$OUT"
  rm -f "$OUT/gpu-checks.json"
fi
echo "tests/system/gpu/run.sh: mode $mode, $ranks rank(s), tools from $tools_from"
export GPU_CHECK_MODE=$mode GPU_CHECK_HANGSHIM=$hangshim GPU_CHECK_SHIM=$shim GPU_CHECK_PYFRAMES=$pyframes
export GPU_CHECK_PYTHON=$python GPU_CHECK_STANDIN=$standin GPU_CHECK_WORK=$work GPU_CHECK_RANKS=$ranks

failed=0
start=$SECONDS
for name in "${checks[@]}"; do
  t0=$SECONDS
  timeout --kill-after=10 "$check_timeout" "$python" "$here/check_$name.py"
  code=$?
  if [[ $code == 124 || $code == 137 ]]; then
    echo "FAIL $name: ran past the per-check limit of ${check_timeout}s (HANGSHIM_GPU_CHECK_TIMEOUT)"
  fi
  [[ $code == 0 ]] || failed=1
  echo "  ($name: $((SECONDS - t0)) s)"
done
echo "tests/system/gpu/run.sh: $((SECONDS - start)) s in all, ${OUT:+details in $OUT/gpu-checks.json, }$([[ $failed == 0 ]] && echo "no check failed" || echo "some check failed")"
exit "$failed"
