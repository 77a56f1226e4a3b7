"""The stand-in CUDA driver (libcuda.so.1) for ncclpy: device selection and streams.

set_device() does what torch.cuda.set_device does to the driver: cuInit, retain the device's
primary context, make it current on this thread. Stream wraps cuStreamCreate/Synchronize and stream capture; Graph, the captured graph's
launches.
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
        for name in ("cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch"):
            getattr(lib, name).restype = _int
        lib.cuStreamBeginCapture_v2.argtypes = [_vp, _int]
        lib.cuStreamEndCapture.argtypes = [_vp, ctypes.POINTER(_vp)]
        lib.cuGraphInstantiateWithFlags.argtypes = [ctypes.POINTER(_vp), _vp, ctypes.c_ulonglong]
        lib.cuGraphLaunch.argtypes = [_vp, _vp]
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

    def begin_capture(self):
        """cuStreamBeginCapture (global mode), as torch.cuda.graph() does on its capture stream."""
        _cu_check(_cuda.cuStreamBeginCapture_v2(self.handle, 0), "cuStreamBeginCapture")

    def end_capture(self):
        """cuStreamEndCapture and cuGraphInstantiate: the graph, ready to launch on this stream."""
        graph, graph_exec = _vp(), _vp()
        _cu_check(_cuda.cuStreamEndCapture(self.handle, ctypes.byref(graph)), "cuStreamEndCapture")
        _cu_check(_cuda.cuGraphInstantiateWithFlags(ctypes.byref(graph_exec), graph, 0), "cuGraphInstantiate")
        return Graph(graph_exec, self)


class Graph(object):
    """An instantiated graph of the stand-in driver. replay() launches it: on a GPU the captured
    kernels run again without NCCL being called; the stand-in ran the captured work once, at
    capture, and a launch runs nothing (what NCCL and the shim see is the same)."""

    def __init__(self, graph_exec, stream):
        self.graph_exec = graph_exec
        self.stream = stream

    def replay(self):
        _cu_check(_cuda.cuGraphLaunch(self.graph_exec, self.stream.handle), "cuGraphLaunch")
