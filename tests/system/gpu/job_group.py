"""How every torch job of tests/system/gpu starts: its options (each with a default whose type is the
option's type) and joining the NCCL process group on the GPU torchrun's LOCAL_RANK names. Imported
by the jobs only (the checks run without torch)."""

import argparse
import os

import torch
import torch.distributed as dist


def job_options(**defaults):
    """The parsed command line: one --name option per keyword (underscores as dashes), typed and
    defaulted by its value."""
    parser = argparse.ArgumentParser()
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return parser.parse_args()


def join_nccl(**init_options):
    """Binds this rank to its GPU and joins the NCCL group (init_options go to init_process_group);
    returns the local rank."""
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank), **init_options)
    return local_rank
