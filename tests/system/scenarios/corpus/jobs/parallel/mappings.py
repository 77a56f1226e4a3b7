"""Megatron-like tensor-parallel state and mappings (project code) over the pynccl wrapper: a
layer's forward reduces its partial output across the tensor-parallel group."""

import ncclpy as dist

from parallel.pynccl import PyNcclCommunicator

_TP = None
_DP = None


def initialize_model_parallel(tp_size):
    """Tensor-parallel groups of tp_size consecutive ranks; data-parallel over the world."""
    global _TP, _DP
    n, r = dist.get_world_size(), dist.get_rank()
    mine = None
    for start in range(0, n, tp_size):
        ranks = list(range(start, start + tp_size))
        group = dist.new_group(ranks)
        if r in ranks:
            mine = group
    _TP = PyNcclCommunicator(mine)
    _DP = PyNcclCommunicator(None)


def tp_ranks(tp_size, rank):
    start = rank - rank % tp_size
    return list(range(start, start + tp_size))


def get_tp_communicator():
    return _TP


def get_dp_communicator():
    return _DP


def _reduce(tensor):
    return get_tp_communicator().all_reduce(tensor)  # site: mapping_reduce


def reduce_from_tensor_model_parallel_region(tensor):
    return _reduce(tensor)  # site: mapping_region


class RowParallelLinear(object):
    def __init__(self, size):
        self.size = size

    def forward(self, batch):
        partial = dist.full((self.size,), float(sum(batch) % 5))
        return reduce_from_tensor_model_parallel_region(partial)  # site: layer_forward


class GPTModel(object):
    def __init__(self, size=8, layers=1):
        self.layers = [RowParallelLinear(size) for _ in range(layers)]

    def forward(self, batch):
        out = None
        for layer in self.layers:
            out = layer.forward(batch)  # site: model_forward
        return out
