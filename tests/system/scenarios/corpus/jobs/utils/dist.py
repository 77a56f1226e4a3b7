"""The project's own distributed helpers (project code, not a library: `utils/dist.py` as most
training repositories have one). Every collective of the plain-style jobs goes through here."""

import ncclpy as dist


def all_reduce(tensor, group=None):
    dist.all_reduce(tensor, group=group)  # site: utils_all_reduce
    return tensor


def reduce_mean(tensor, group=None):
    all_reduce(tensor, group)  # site: utils_reduce_mean
    n = dist.get_world_size(group)
    for i in range(tensor.numel):
        tensor[i] = tensor[i] / n
    return tensor


def broadcast(tensor, src=0, group=None):
    dist.broadcast(tensor, src, group=group)  # site: utils_broadcast
    return tensor


def barrier():
    dist.barrier()  # site: utils_barrier


def sync_grads(grad):
    return all_reduce(grad)  # site: utils_sync_grads
