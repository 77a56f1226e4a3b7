#!/usr/bin/env bash
# Sets up (dependencies, build) and runs the demo: a 4-rank data-parallel training job on the
# CPU stand-in for NCCL hangs the way the field guide's "uneven data" story does (one rank's
# loader has one batch more: drop_last=False). The job runs under `hangshim run`; the shim's
# watchdog notices the stall; `hangshim watch` prints the verdict; pyframes shows the ranks'
# merged Python stacks. Then the job is stopped. Takes well under a minute after the build.
#   scripts/demo.sh [--ranks N] [--keep]   (--keep: leave the hung job running, print its pids)
# HANGSHIM_DEMO_TOOLS=DIR: take hangshim and pyframes from DIR (e.g. a venv's bin/ after pip
# install) instead of the build, and set nothing up; the NCCL stand-in still comes from the build.
set -euo pipefail
ranks=4
keep=0
while (($#)); do
  case $1 in
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --ranks) ranks=${2:?--ranks needs a number}; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}
if [[ -n ${HANGSHIM_DEMO_TOOLS:-} ]]; then
  hangshim=$HANGSHIM_DEMO_TOOLS/hangshim
  pyframes=$HANGSHIM_DEMO_TOOLS/pyframes
  for tool in "$hangshim" "$pyframes"; do
    [[ -x $tool ]] || { echo "demo.sh: $tool is not an executable (HANGSHIM_DEMO_TOOLS=$HANGSHIM_DEMO_TOOLS)" >&2; exit 2; }
  done
  [[ -e $build/standin/lib/libnccl.so.2 ]] ||
    { echo "demo.sh: the NCCL stand-in is not built in $build (run scripts/setup.sh, or set HANGSHIM_BUILD_DIR)" >&2; exit 2; }
else
  # The demo needs none of the interpreters build-pythons.sh compiles for the tests, nor the
  # release and its distribution roots (minutes of build and download); the tests' configure
  # still finds any interpreter that an earlier set-up built.
  HANGSHIM_BUILD_PYTHONS=${HANGSHIM_BUILD_PYTHONS:-0} HANGSHIM_RELEASE=${HANGSHIM_RELEASE:-0} \
    HANGSHIM_ROOTS=${HANGSHIM_ROOTS:-0} "$top/scripts/setup.sh"
  hangshim=$build/preload/hangshim
  pyframes=$build/pyframes/pyframes
fi
python=$(command -v python3)
work=$(mktemp -d "${TMPDIR:-/tmp}/hangshim-demo.XXXXXX")
ledgers=$work/ledgers
launcher_pid=
cleanup() {
  if [[ -n $launcher_pid && $keep -eq 0 ]]; then
    kill -TERM "$launcher_pid" 2>/dev/null || true
    wait "$launcher_pid" 2>/dev/null || true
  fi
  [[ $keep -eq 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

section "A ${ranks}-rank training job with an uneven data loader (CPU stand-in for NCCL)"
echo "\$ hangshim run --stall 5 -- launch -n $ranks train (tests/system/scenarios/ddp_uneven.py)"
# launch.py plays torchrun: RANK/WORLD_SIZE/LOCAL_RANK per rank, output prefixed "[rank N]".
# It never gives up on its own here (--hang-after 3600): the demo stops the job at the end.
# ncclpy.py is the stand-in's torch.distributed: library code, as /torch/ is by default, so the
# call-site recorded for each collective is the training script's line.
export HANGSHIM_LIBRARY_PATHS=/torch/:/deepspeed/:/site-packages/:/dist-packages/:/ncclpy.py:/scenario_lib.py
LD_LIBRARY_PATH=$build/standin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$hangshim" run --dir "$ledgers" --stall 5 -- \
  "$python" "$top/tests/system/scenarios/launch.py" -n "$ranks" --timeout 300 --hang-after 3600 \
  --workdir "$work/job" --quiet -- "$python" "$top/tests/system/scenarios/ddp_uneven.py" &
launcher_pid=$!

section "hangshim watch: ranks' positions, then the verdict when progress stops"
"$hangshim" watch --interval 4 --stall 8 --timeout 120 "$ledgers"

section "pyframes --children: the ranks' Python stacks, merged"
"$pyframes" --children "$launcher_pid" --locals

if [[ $keep -eq 1 ]]; then
  echo
  echo "The hung job is still running (launcher pid $launcher_pid, ledgers in $ledgers)."
  echo "Stop it with: kill $launcher_pid"
fi
