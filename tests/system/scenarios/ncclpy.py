"""A torch.distributed look-alike over libnccl.so.2, for the hang scenarios.

ctypes over the NCCL C API (the hangshim CPU stand-in from standin/, found through
LD_LIBRARY_PATH) with host buffers. Works on every CPython 3.6+ and needs nothing but the
standard library. The functions mirror torch.distributed: init_process_group, new_group,
all_reduce, broadcast, reduce, all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single,
gather, scatter, send, recv, batch_isend_irecv, barrier, destroy_process_group.

Every collective issues exactly one NCCL call, from one line of this file, so that a tool
recording the Python call site of each NCCL call (the hangshim shim) sees: the ncclpy function,
then the caller's line. barrier() is a one-element all_reduce issued from a function literally
named `barrier`, as torch's is.

Besides the NCCL calls, each rank keeps a small progress record (see progress.py) that the
launcher uses to tell a hung job from a slow one and that tests compare with a scenario's
stated diagnosis.

Environment: RANK, WORLD_SIZE, LOCAL_RANK (as set by launch.py or torchrun);
HANGSHIM_RENDEZVOUS: directory where rank 0 publishes the NCCL unique id (like torch's store);
HANGSHIM_SCENARIO_STREAM=1: issue collectives on a CUDA stream of the stand-in driver and wait
for them with cuStreamSynchronize (the asynchronous mode) instead of the NULL stream.
"""

import ctypes
import os
import sys
import time

import progress
from cuda_driver import Stream, set_device  # noqa: F401 (re-exported)
from tensor import Tensor, as_buffer, empty, full, tensor, zeros  # noqa: F401 (re-exported)

NCCL_SPLIT_NOCOLOR = -1


class ReduceOp(object):
    SUM = 0
    PRODUCT = 1
    MAX = 2
    MIN = 3
    AVG = 4


class NcclError(RuntimeError):
    """An NCCL call returned an error; the message carries ncclGetLastError's text."""


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


_vp = ctypes.c_void_p
_sz = ctypes.c_size_t
_int = ctypes.c_int
_SIGNATURES = {
    "ncclGetUniqueId": [ctypes.POINTER(_UniqueId)],
    "ncclCommInitRank": [ctypes.POINTER(_vp), _int, _UniqueId, _int],
    "ncclCommSplit": [_vp, _int, _int, ctypes.POINTER(_vp), _vp],
    "ncclCommDestroy": [_vp],
    "ncclCommAbort": [_vp],
    "ncclCommGetAsyncError": [_vp, ctypes.POINTER(_int)],
    "ncclAllReduce": [_vp, _vp, _sz, _int, _int, _vp, _vp],
    "ncclBroadcast": [_vp, _vp, _sz, _int, _int, _vp, _vp],
    "ncclReduce": [_vp, _vp, _sz, _int, _int, _int, _vp, _vp],
    "ncclAllGather": [_vp, _vp, _sz, _int, _vp, _vp],
    "ncclReduceScatter": [_vp, _vp, _sz, _int, _int, _vp, _vp],
    "ncclAlltoAll": [_vp, _vp, _sz, _int, _vp, _vp],
    "ncclGather": [_vp, _vp, _sz, _int, _int, _vp, _vp],
    "ncclScatter": [_vp, _vp, _sz, _int, _int, _vp, _vp],
    "ncclSend": [_vp, _sz, _int, _int, _vp, _vp],
    "ncclRecv": [_vp, _sz, _int, _int, _vp, _vp],
    "ncclGroupStart": [],
    "ncclGroupEnd": [],
}


def _load_nccl():
    # Default: bind NCCL the way an extension linked against it (PyTorch, CuPy) does: loaded
    # into the global symbol scope and every function looked up there. With
    # HANGSHIM_SCENARIO_NCCL_LOAD=private, the way vLLM's PyNcclCommunicator does: a plain
    # CDLL (RTLD_LOCAL) whose functions are looked up through the library's own handle, which
    # reaches libhangshim.so only through its dlsym interposer.
    private = os.environ.get("HANGSHIM_SCENARIO_NCCL_LOAD") == "private"
    try:
        if private:
            lib = ctypes.CDLL("libnccl.so.2")
            if hasattr(ctypes.CDLL(None), "hangshimFakeNcclDescription"):
                raise RuntimeError("ncclpy: HANGSHIM_SCENARIO_NCCL_LOAD=private, but NCCL is in the "
                                   "global scope: the private lookup would not be exercised")
        else:
            ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(None)
    except OSError as e:
        raise RuntimeError("ncclpy: cannot load libnccl.so.2 (%s): put the stand-in's directory "
                           "(build/standin/lib) on LD_LIBRARY_PATH" % e)
    if not hasattr(lib, "hangshimFakeNcclDescription"):
        raise RuntimeError("ncclpy: the libnccl.so.2 on LD_LIBRARY_PATH is a real NCCL, whose "
                           "collectives need GPU memory; point LD_LIBRARY_PATH at "
                           "build/standin/lib")
    for name, args in _SIGNATURES.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = _int
    lib.ncclGetErrorString.argtypes = [_int]
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclGetLastError.argtypes = [_vp]
    lib.ncclGetLastError.restype = ctypes.c_char_p
    return lib


_nccl = _load_nccl()
progress.register_library(sys._getframe(0).f_code.co_filename)
def _check(result, call, group=None):
    if result != 0:
        message = "%s failed: %s: %s" % (call, _nccl.ncclGetErrorString(result).decode(),
                                          (_nccl.ncclGetLastError(None) or b"").decode())
        progress.failed(message)
        raise NcclError(message)


class ProcessGroup(object):
    """One NCCL communicator: its member ranks (global), this rank's place, and how many
    collectives it has issued (the sequence number of the next is seq + 1)."""

    def __init__(self, name, comm, ranks, rank):
        self.name = name
        self.comm = comm
        self.ranks = list(ranks)
        self.rank = rank  # rank in this group, -1 for a non-member
        self.seq = 0
        self.splits = 0

    @property
    def is_member(self):
        return self.rank >= 0

    def size(self):
        return len(self.ranks)


_world = None
_groups = []
_stream = None  # set by set_stream() or HANGSHIM_SCENARIO_STREAM


def _env_int(name):
    value = os.environ.get(name)
    if value is None:
        raise RuntimeError("ncclpy: %s is not set (start ranks with tests/system/scenarios/launch.py)" % name)
    return int(value)


def set_stream(stream):
    """Collectives from now on go to `stream` (None: the NULL stream, synchronous)."""
    global _stream
    _stream = stream


def _rendezvous_id(rank, name):
    directory = os.environ.get("HANGSHIM_RENDEZVOUS")
    if not directory:
        raise RuntimeError("ncclpy: HANGSHIM_RENDEZVOUS is not set (start ranks with tests/system/scenarios/launch.py)")
    path = os.path.join(directory, "nccl-id." + name)
    uid = _UniqueId()
    if rank == 0:
        _check(_nccl.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "wb") as f:
            f.write(ctypes.string_at(ctypes.addressof(uid), ctypes.sizeof(uid)))
        os.rename(tmp, path)  # readers see all 128 bytes or nothing
        return uid
    limit = float(os.environ.get("HANGSHIM_RENDEZVOUS_TIMEOUT", "300"))
    start = time.time()
    while not os.path.exists(path):
        if time.time() - start > limit:
            raise RuntimeError("ncclpy: rank 0 did not publish %s within %g s" % (path, limit))
        time.sleep(0.01)
    with open(path, "rb") as f:
        data = f.read()
    ctypes.memmove(ctypes.addressof(uid), data, len(data))
    return uid


def init_process_group(backend="nccl"):
    """Creates the world communicator: rank 0 makes the unique id and publishes it through
    HANGSHIM_RENDEZVOUS, every rank calls ncclCommInitRank (which blocks until all joined)."""
    global _world, _stream
    if backend != "nccl":
        raise ValueError("ncclpy only has the nccl backend")
    rank, world_size = _env_int("RANK"), _env_int("WORLD_SIZE")
    progress.start(rank)
    uid = _rendezvous_id(rank, "world")
    comm = _vp()
    _check(_nccl.ncclCommInitRank(ctypes.byref(comm), world_size, uid, rank), "ncclCommInitRank")
    _world = ProcessGroup("world", comm, range(world_size), rank)
    _groups.append(_world)
    if os.environ.get("HANGSHIM_SCENARIO_STREAM") == "1" and _stream is None:
        _stream = Stream()
    progress.note_init()


def _group(group):
    if _world is None:
        raise RuntimeError("ncclpy: call init_process_group() first")
    return _world if group is None else group


def get_rank(group=None):
    return _group(group).rank


def get_world_size(group=None):
    return _group(group).size()


def new_group(ranks):
    """Like torch.distributed.new_group: every rank must call it; members get a communicator
    split from the world (ncclCommSplit, members ordered by global rank), others a non-member
    group."""
    world = _group(None)
    ranks = sorted(ranks)
    member = world.rank in ranks
    child = _vp()
    color = 0 if member else NCCL_SPLIT_NOCOLOR
    key = ranks.index(world.rank) if member else 0
    _check(_nccl.ncclCommSplit(world.comm, color, key, ctypes.byref(child), None), "ncclCommSplit")
    world.splits += 1
    group = ProcessGroup("group%d" % len(_groups), child if member else None, ranks,
                         ranks.index(world.rank) if member else -1)
    _groups.append(group)
    return group


def _stream_handle():
    return _stream.handle if _stream is not None else None


def _wait(group):
    """In asynchronous mode the collective returned at once: wait for it like torch does
    (NCCL_BLOCKING_WAIT) and surface errors recorded on the stream."""
    if _stream is None:
        return
    _stream.synchronize()
    error = _int(0)
    _nccl.ncclCommGetAsyncError(group.comm, ctypes.byref(error))
    _check(error.value, "ncclCommGetAsyncError", group)


def _collective(group, op, buf, root=None):
    pg = _group(group)
    if not pg.is_member:
        raise RuntimeError("ncclpy: %s on group %s, which this rank is not a member of" % (op, pg.name))
    root_rank = None if root is None else _group_rank(pg, root)
    pg.seq += 1
    progress.enter(op, pg, buf, root_rank)
    return pg


def _done(pg):
    _wait(pg)
    progress.leave(pg)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    buf = as_buffer(tensor)
    pg = _collective(group, "all_reduce", buf)
    _check(_nccl.ncclAllReduce(buf.ptr, buf.ptr, buf.count, buf.dtype, op, pg.comm, _stream_handle()), "ncclAllReduce", pg)
    _done(pg)


def barrier(group=None):
    """torch.distributed.barrier: a one-element all_reduce."""
    buf = as_buffer(zeros((1,), "float32"))
    pg = _collective(group, "barrier", buf)
    _check(_nccl.ncclAllReduce(buf.ptr, buf.ptr, 1, buf.dtype, ReduceOp.SUM, pg.comm, _stream_handle()), "ncclAllReduce", pg)
    _done(pg)


def _group_rank(pg, global_rank):
    if global_rank not in pg.ranks:
        raise ValueError("ncclpy: rank %d is not in group %s" % (global_rank, pg.name))
    return pg.ranks.index(global_rank)


def broadcast(tensor, src, group=None):
    buf = as_buffer(tensor)
    pg = _collective(group, "broadcast", buf, src)
    root = _group_rank(pg, src)
    _check(_nccl.ncclBroadcast(buf.ptr, buf.ptr, buf.count, buf.dtype, root, pg.comm, _stream_handle()), "ncclBroadcast", pg)
    _done(pg)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    buf = as_buffer(tensor)
    pg = _collective(group, "reduce", buf, dst)
    root = _group_rank(pg, dst)
    _check(_nccl.ncclReduce(buf.ptr, buf.ptr, buf.count, buf.dtype, op, root, pg.comm, _stream_handle()), "ncclReduce", pg)
    _done(pg)


def all_gather_into_tensor(output, input, group=None):
    out, buf = as_buffer(output), as_buffer(input)
    pg = _collective(group, "all_gather", buf)
    _check(_nccl.ncclAllGather(buf.ptr, out.ptr, buf.count, buf.dtype, pg.comm, _stream_handle()), "ncclAllGather", pg)
    _done(pg)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None):
    out, buf = as_buffer(output), as_buffer(input)
    pg = _collective(group, "reduce_scatter", out)
    _check(_nccl.ncclReduceScatter(buf.ptr, out.ptr, out.count, buf.dtype, op, pg.comm, _stream_handle()), "ncclReduceScatter", pg)
    _done(pg)


def all_to_all_single(output, input, group=None):
    out, buf = as_buffer(output), as_buffer(input)
    pg = _collective(group, "all_to_all", buf)
    _check(_nccl.ncclAlltoAll(buf.ptr, out.ptr, buf.count // pg.size(), buf.dtype, pg.comm, _stream_handle()), "ncclAlltoAll", pg)
    _done(pg)


def _rooted(kind, tensor, root_tensors, root, group):
    """gather and scatter: this rank's buffer, the group, the root's rank in it, and the root's one
    flat tensor of size * numel elements (None elsewhere)."""
    buf = as_buffer(tensor)
    pg = _collective(group, kind, buf, root)
    on_root = as_buffer(root_tensors).ptr if root_tensors is not None else None
    return buf, pg, _group_rank(pg, root), on_root


def gather(tensor, gather_list=None, dst=0, group=None):
    """gather_list: on dst, one flat output tensor of size * numel elements."""
    buf, pg, root, out = _rooted("gather", tensor, gather_list, dst, group)
    _check(_nccl.ncclGather(buf.ptr, out, buf.count, buf.dtype, root, pg.comm, _stream_handle()), "ncclGather", pg)
    _done(pg)


def scatter(tensor, scatter_list=None, src=0, group=None):
    """scatter_list: on src, one flat input tensor of size * numel elements."""
    buf, pg, root, inp = _rooted("scatter", tensor, scatter_list, src, group)
    _check(_nccl.ncclScatter(inp, buf.ptr, buf.count, buf.dtype, root, pg.comm, _stream_handle()), "ncclScatter", pg)
    _done(pg)


def send(tensor, dst, group=None):
    pg = _group(group)
    buf = as_buffer(tensor)
    _check(_nccl.ncclSend(buf.ptr, buf.count, buf.dtype, _group_rank(pg, dst), pg.comm, _stream_handle()), "ncclSend", pg)
    _wait(pg)


def recv(tensor, src, group=None):
    pg = _group(group)
    buf = as_buffer(tensor)
    _check(_nccl.ncclRecv(buf.ptr, buf.count, buf.dtype, _group_rank(pg, src), pg.comm, _stream_handle()), "ncclRecv", pg)
    _wait(pg)


class P2POp(object):
    def __init__(self, op, tensor, peer, group=None):
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group


isend = "isend"
irecv = "irecv"


def batch_isend_irecv(ops):
    """Issues the sends and receives inside one NCCL group so they progress together."""
    _check(_nccl.ncclGroupStart(), "ncclGroupStart")
    for p in ops:
        pg = _group(p.group)
        buf = as_buffer(p.tensor)
        peer = _group_rank(pg, p.peer)
        if p.op == isend:
            _check(_nccl.ncclSend(buf.ptr, buf.count, buf.dtype, peer, pg.comm, _stream_handle()), "ncclSend", pg)
        else:
            _check(_nccl.ncclRecv(buf.ptr, buf.count, buf.dtype, peer, pg.comm, _stream_handle()), "ncclRecv", pg)
    _check(_nccl.ncclGroupEnd(), "ncclGroupEnd")
    for p in ops:
        _wait(_group(p.group))


def destroy_process_group():
    """Destroys every communicator (sub-groups first)."""
    global _world
    for pg in reversed(_groups):
        if pg.comm is not None:
            _check(_nccl.ncclCommDestroy(pg.comm), "ncclCommDestroy", pg)
            pg.comm = None
    del _groups[:]
    _world = None
    progress.finished()
