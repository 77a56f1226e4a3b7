"""What the corpus jobs share: the job's own truth, written the way tests/system/scenarios state theirs
(scenario_lib), reduced to the four facts the corpus scores:

  kind       the verdict kind ("iteration_mismatch", ..., "healthy" for a job that only pauses
             or finishes);
  culprits   the ranks at fault (for "cannot tell" shapes: both sides, with `sides`);
  line       the loop line the headline must name: the outermost line of the job's own code,
             inside the loop, on the path to the collective the verdict is about (the culprits'
             when they are in a collective, else the waiting ranks');
  iteration  how many times that line has issued a collective on those ranks, counting the
             current call (the loop iteration as the ledgers count it).

Lines are found by their `# site: NAME` markers (scenario_lib.site), iterations computed from
the job's parameters, never written down by hand. `pause` marks a healthy job inspected during
a pause; `exits` a job whose ranks leave through os._exit.
"""

import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # tests/system/scenarios: ncclpy, scenario_lib
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "site-packages"))  # the framework stand-ins

import ncclpy as dist  # noqa: E402,F401  (jobs import it from here)
import scenario_lib as lab  # noqa: E402


def rank():
    return lab.env_int("RANK")


def world_size():
    return lab.env_int("WORLD_SIZE")


def start():
    """Joins the job: device, world communicator."""
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")


def odd_rank(n):
    """The rank that behaves differently: first, last or middle, by world size."""
    return [0, n - 1, n // 2][n % 3]


def truth(job_file, style, shape, kind, culprits, line_site, iteration, **extra):
    """Writes the job's truth (rank 0 writes it; every rank computes it)."""
    n = world_size()
    line = lab.site(line_site, extra.pop("line_file", job_file)) if line_site else None
    return lab.write_truth(job_file, kind, extra.pop("summary", shape), n, sorted(culprits), lab.world(n),
                           extra.pop("seq", None), extra.pop("op", None), {}, style=style, shape=shape,
                           line=line, iteration=iteration, **extra)


def block_forever():
    """A wait outside NCCL that never ends (a data loader, a file system, a service)."""
    threading.Event().wait()


def pause(seconds):
    time.sleep(seconds)


def batches(count, seed=0):
    return [[seed + 2 * i, seed + 2 * i + 1] for i in range(count)]


def grad_of(batch, size=16, dtype="float32"):
    g = dist.zeros((size,), dtype)
    for i in range(size):
        g[i] = float(sum(batch) % 7 + i % 3)
    return g
