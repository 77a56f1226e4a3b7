"""A vLLM-like pynccl wrapper (project code): a thin binding class over the NCCL calls and a
communicator object that owns one communicator and issues collectives through the binding."""

import ncclpy as dist


class NCCLLibrary(object):
    """The binding: one method per NCCL function."""

    def ncclAllReduce(self, tensor, group):
        dist.all_reduce(tensor, group=group)  # site: binding_all_reduce

    def ncclBroadcast(self, tensor, root, group):
        dist.broadcast(tensor, root, group=group)  # site: binding_broadcast


class PyNcclCommunicator(object):
    def __init__(self, group=None):
        self.group = group
        self.nccl = NCCLLibrary()
        self.disabled = False

    def all_reduce(self, tensor):
        self.nccl.ncclAllReduce(tensor, self.group)  # site: comm_all_reduce
        return tensor

    def broadcast(self, tensor, src):
        self.nccl.ncclBroadcast(tensor, src, self.group)  # site: comm_broadcast
        return tensor
