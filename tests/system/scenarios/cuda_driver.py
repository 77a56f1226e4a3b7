"""The stand-in CUDA driver (libcuda.so.1) for ncclpy: device selection and streams.

set_device() does what torch.cuda.set_device does to the driver: cuInit, retain the device's
primary context, make it current on this thread. Stream wraps cuStreamCreate/Synchronize.
"""

import ctypes
import sys

import progress

progress.register_library(sys._getframe(0).f_code.co_filename)

_vp = ctypes.c_void_p
_int = ctypes.c_int
_cuda = None  # loaded by the first set_device() or Stream()


def _load_cuda():
    global _cuda
    if _cuda is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError("ncclpy: cannot load libcuda.so.1 (%s): put the stand-in's directory "
                               "(build/standin/lib) on LD_LIBRARY_PATH" % e)
        for name in ("cuInit", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuStreamCreate",
                     "cuStreamSynchronize"):
            getattr(lib, name).restype = _int
        lib.cuInit.argtypes = [ctypes.c_uint]
        lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(_vp), _int]
        lib.cuCtxSetCurrent.argtypes = [_vp]
        lib.cuStreamCreate.argtypes = [ctypes.POINTER(_vp), ctypes.c_uint]
        lib.cuStreamSynchronize.argtypes = [_vp]
        _cuda = lib
    return _cuda


def _cu_check(result, call):
    if result != 0:
        raise RuntimeError("ncclpy: %s failed with CUresult %d" % (call, result))


def set_device(local_rank):
    """Like torch.cuda.set_device: makes device `local_rank`'s primary context current on this
    thread in the stand-in driver (the communicator then reports that device)."""
    cuda = _load_cuda()
    _cu_check(cuda.cuInit(0), "cuInit")
    ctx = _vp()
    _cu_check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), _int(local_rank)), "cuDevicePrimaryCtxRetain")
    _cu_check(cuda.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


class Stream(object):
    """A stream of the stand-in driver (needs set_device first)."""

    def __init__(self):
        self.handle = _vp()
        _cu_check(_load_cuda().cuStreamCreate(ctypes.byref(self.handle), 0), "cuStreamCreate")

    def synchronize(self):
        _cu_check(_cuda.cuStreamSynchronize(self.handle), "cuStreamSynchronize")
