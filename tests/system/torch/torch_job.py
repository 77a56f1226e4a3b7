"""A torchrun gloo job that hangs, and records where (run by run_torch_case.py):

    torchrun --nproc_per_node 2 ... torch_job.py RECORD_DIR SCENARIO

Scenarios:
  uneven      rank 1 has one batch more than rank 0: rank 1 blocks in the step's all_reduce,
              rank 0 in the epoch-end all_reduce (in a group of its own: gloo aborts on a size
              mismatch within one group)
  barrier     rank 0 alone calls barrier() (after a "checkpoint"), rank 1 goes on and blocks in
              the next step's all_reduce
  dataloader  a DataLoader with one worker per rank; rank 1's worker blocks in the dataset's
              __getitem__ (opening RECORD_DIR/fifo, a FIFO nobody writes); rank 1 waits for the
              batch, rank 0 blocks in the step's all_reduce
Just before it blocks, each process writes RECORD_DIR/rankR.json (workers: workerR.json): its
rank, pid, parent pid and its stack (sys._getframe, innermost first, the first frame's line being
the blocking call's: the record and the call share one line). Every process dies with its parent.
"""
import ctypes
import datetime
import json
import os
import signal
import sys

import torch
import torch.distributed as dist

RECORDS, SCENARIO = sys.argv[1], sys.argv[2]
RANK = int(os.environ["RANK"])


def die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def record(name, blocking=True, **fields):
    """Writes RECORDS/name.json about the caller: called on the line of the blocking call."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        frames.append({"function": frame.f_code.co_name, "file": frame.f_code.co_filename, "line": frame.f_lineno})
        frame = frame.f_back
    document = {"rank": RANK, "pid": os.getpid(), "ppid": os.getppid(), "frames": frames, "blocking": blocking}
    document.update(fields)
    path = os.path.join(RECORDS, name + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(document, f)
    os.rename(path + ".tmp", path)


def train_step(step, group=None):
    tensor = torch.ones(4)
    record("rank%d" % RANK, step=step); dist.all_reduce(tensor, group=group)  # noqa: E702


def epoch_end(group):
    loss = torch.ones(1)
    record("rank%d" % RANK); dist.all_reduce(loss, group=group)  # noqa: E702


def uneven():
    epoch_group = dist.new_group(backend="gloo")
    steps = 3 + (1 if RANK == 1 else 0)
    for step in range(steps):
        tensor = torch.ones(4)
        if step == steps - 1 and RANK == 1:
            train_step(step)  # the batch rank 0 does not have
        else:
            dist.all_reduce(tensor)
    epoch_end(epoch_group)


def save_checkpoint():
    record("rank%d" % RANK); dist.barrier()  # noqa: E702


def barrier():
    next_group = dist.new_group(backend="gloo")
    if RANK == 0:
        save_checkpoint()
    train_step(1, group=next_group)


class Blocking(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        name = "worker%d" % RANK
        if RANK == 1:
            fifo = os.path.join(RECORDS, "fifo")
            record(name); open(fifo).read()  # noqa: E702
        if not os.path.exists(os.path.join(RECORDS, name + ".json")):
            record(name, blocking=False)  # rank 0's worker: its pid; it goes on
        return torch.full((2,), float(index))


def dataloader():
    loader = torch.utils.data.DataLoader(Blocking(), batch_size=1, num_workers=1,
                                         worker_init_fn=lambda worker_id: die_with_parent())
    batches = iter(loader)
    if RANK == 1:
        record("rank%d" % RANK); batch = next(batches)  # noqa: E702
    else:
        batch = next(batches)
    train_step(0)
    return batch


die_with_parent()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=600))
{"uneven": uneven, "barrier": barrier, "dataloader": dataloader}[SCENARIO]()
