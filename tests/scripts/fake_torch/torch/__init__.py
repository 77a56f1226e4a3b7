"""A stand-in for the few parts of PyTorch that scripts/gpu-comm-check.py uses; it is NOT
PyTorch. The test machines have neither PyTorch nor GPUs, so the tests put this package on
PYTHONPATH: float32 tensors on the CPU (ones, min, max, item), a torch.cuda that finds no GPU,
and torch.distributed with gloo-like collectives over a directory the ranks share
(distributed.py)."""

import array

from . import cuda  # noqa: F401  (torch.cuda is an attribute of torch, as in PyTorch)

__version__ = "0.0+hangshim.stand-in"
float32 = "float32"


class Tensor(object):
    """A flat float32 tensor on the CPU."""

    def __init__(self, values):
        self.values = array.array("f", values)

    def numel(self):
        return len(self.values)

    def min(self):
        return Tensor([min(self.values)])

    def max(self):
        return Tensor([max(self.values)])

    def item(self):
        if len(self.values) != 1:
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % len(self.values))
        return float(self.values[0])


def ones(n, dtype=float32, device="cpu"):
    if dtype != float32:
        raise TypeError("the stand-in has only float32 tensors")
    if str(device) != "cpu":
        raise RuntimeError("Found no NVIDIA driver on your system (the stand-in has no GPUs)")
    return Tensor([1.0] * n)


from . import distributed  # noqa: E402,F401
