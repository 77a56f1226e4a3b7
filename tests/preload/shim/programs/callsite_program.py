"""The Python side of the call-site test (run by run_callsite_case.py with libhangshim.so
preloaded, on every interpreter). It issues NCCL calls from known places and writes, for each
call, the chain of frames the interpreter itself reports at that moment (sys._getframe: file,
line, qualname) — the ground truth the ledger's call-sites are compared with.

    callsite_program.py calls TRUTH.json HELPER.so       one rank: loops, callers, barrier, threads
    callsite_program.py stall TRUTH.json RENDEZVOUS      RANK 0/1: rank 1 skips a collective

NCCL is bound through the global scope (RTLD_GLOBAL, then CDLL(None)), as a linked extension
would be: an LD_PRELOADed shim sees the calls.
"""

import ctypes
import json
import os
import sys
import threading
import time

ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
_nccl = ctypes.CDLL(None)
_vp, _int, _sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


_nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(_vp), _int, UniqueId, _int]
_nccl.ncclAllReduce.argtypes = [_vp, _vp, _sz, _int, _int, _vp, _vp]
_nccl.ncclBroadcast.argtypes = [_vp, _vp, _sz, _int, _int, _vp, _vp]
FLOAT, SUM = 7, 0
CALLS = []  # [{"op", "count", "chain", "borrowed"}] in issue order


def chain_of(frame):
    """The frames from `frame` outwards, as the interpreter reports them."""
    out = []
    while frame is not None:
        code = frame.f_code
        out.append({"file": code.co_filename, "line": frame.f_lineno,
                    "function": getattr(code, "co_qualname", code.co_name)})
        frame = frame.f_back
    return out


def note(op, count, frame, borrowed=False):
    CALLS.append({"op": op, "count": count, "chain": chain_of(frame), "borrowed": borrowed})


_buffer = (ctypes.c_float * 8)()


def all_reduce(comm, count=4):
    note("all_reduce", count, sys._getframe()); rc = _nccl.ncclAllReduce(_buffer, _buffer, count, FLOAT, SUM, comm, None)  # noqa: E702
    assert rc == 0, rc


def broadcast(comm, count=2):
    note("broadcast", count, sys._getframe()); rc = _nccl.ncclBroadcast(_buffer, _buffer, count, FLOAT, 0, comm, None)  # noqa: E702
    assert rc == 0, rc


def barrier(comm):
    """Like torch.distributed.barrier: a one-element all_reduce from a function named barrier."""
    note("barrier", 1, sys._getframe()); rc = _nccl.ncclAllReduce(_buffer, _buffer, 1, FLOAT, SUM, comm, None)  # noqa: E702
    assert rc == 0, rc


def step(comm, i):
    all_reduce(comm)
    if i % 2 == 0:
        broadcast(comm)


def first_caller(comm):
    all_reduce(comm, 3)


def second_caller(comm):
    all_reduce(comm, 3)


def deep(comm, n):
    if n == 0:
        all_reduce(comm, 1)
        return
    deep(comm, n - 1)


class Trainer(object):
    def sync(self, comm):
        all_reduce(comm, 5)


def native(helper, comm, calls):
    # The helper's thread has no Python frames: its calls borrow this (the main) thread's.
    note("all_reduce", 1, sys._getframe(), borrowed=True); failures = helper.hangshim_test_native_allreduce(comm, calls)  # noqa: E702
    CALLS.extend([dict(CALLS[-1]) for _ in range(calls - 1)])
    assert failures == 0


def init(nranks, rank, uid):
    comm = _vp()
    rc = _nccl.ncclCommInitRank(ctypes.byref(comm), nranks, uid, rank)
    assert rc == 0, rc
    return comm


def calls_mode(truth_path, helper_path):
    uid = UniqueId()
    assert _nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
    comm = init(1, 0, uid)
    for i in range(6):
        step(comm, i)
    first_caller(comm)
    second_caller(comm)
    first_caller(comm)
    barrier(comm)
    barrier(comm)
    deep(comm, 40)
    Trainer().sync(comm)
    # A library engine whose own path changes after two steps: one iteration count for the line.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
    import fake_engine
    for i in range(4):
        fake_engine.backward(all_reduce, comm, i)
    worker = threading.Thread(target=lambda: [all_reduce(comm, 6) for _ in range(3)], name="worker")
    worker.start()
    worker.join()
    helper = ctypes.CDLL(helper_path)
    helper.hangshim_test_native_allreduce.argtypes = [_vp, _int]
    native(helper, comm, 3)
    with open(truth_path, "w") as f:
        json.dump({"calls": CALLS}, f)


def write_truth(path, where):
    with open(path + ".tmp", "w") as f:
        json.dump({"blocked_at": where}, f)
    os.rename(path + ".tmp", path)
    return True


def stall_mode(truth_path, rendezvous):
    rank, nranks = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    id_path = os.path.join(rendezvous, "uid")
    uid = UniqueId()
    if rank == 0:
        assert _nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
        with open(id_path + ".tmp", "wb") as f:
            f.write(bytes(uid))
        os.rename(id_path + ".tmp", id_path)
    else:
        while not os.path.exists(id_path):
            time.sleep(0.01)
        with open(id_path, "rb") as f:
            ctypes.memmove(ctypes.byref(uid), f.read(), 128)
    comm = init(nranks, rank, uid)
    all_reduce(comm)
    if rank == nranks - 1:
        while True:
            time.sleep(3600)  # skips the second all_reduce; the test ends the job
    # One line: the interpreter's own record of where the call is, the truth written (rank 0;
    # before the call, which blocks until the test ends the job), then the call.
    where = chain_of(sys._getframe()); rank == 0 and write_truth(truth_path, where); _nccl.ncclAllReduce(_buffer, _buffer, 4, FLOAT, SUM, comm, None)  # noqa: E501,E702


if __name__ == "__main__":
    {"calls": calls_mode, "stall": stall_mode}[sys.argv[1]](sys.argv[2], sys.argv[3])
