"""gpu-comm-check.py with a rank that never arrives (run_torch_case.py --case commcheck):

    torchrun --nproc_per_node 2 ... comm_check_absent.py RECORD GPU_COMM_CHECK [ITS ARGUMENTS...]

Rank 1 writes its pid to RECORD and sleeps (it never joins the process group); every other rank
runs gpu-comm-check.py as torchrun would. Every process dies with its parent."""
import ctypes
import os
import runpy
import signal
import sys
import time

ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
record, script = sys.argv[1], sys.argv[2]
if os.environ["RANK"] == "1":
    with open(record + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(record + ".tmp", record)
    time.sleep(600)
    sys.exit(1)
sys.argv = [script] + sys.argv[3:]
runpy.run_path(script, run_name="__main__")
