"""torch.distributed of the stand-in: the gloo backend's behaviour over a shared directory.

Every rank of a job gets the same FAKE_TORCH_STORE (a directory). init_process_group and each
collective are a rendezvous there: the rank publishes its contribution as file
<store>/<n>.<op>/<rank> (written whole, then renamed) and waits until all WORLD_SIZE ranks have
published theirs; all_reduce then sums them. A rank that does not arrive within the timeout
given to init_process_group makes the others raise RuntimeError, as gloo does.

The knob FAKE_TORCH_SKIP_RANK=R makes rank R never arrive at a collective (it blocks forever in
all_reduce, like a rank stuck before it), so the others must time out.
"""

import array
import os
import time

_POLL_S = 0.02


class ReduceOp(object):
    SUM = "sum"


class _Group(object):
    def __init__(self, store, rank, world_size, timeout_s):
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self.timeout_s = timeout_s
        self.calls = 0


_group = None


def is_available():
    return True


def is_initialized():
    return _group is not None


def _require_group():
    if _group is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return _group


def get_rank():
    return _require_group().rank


def get_world_size():
    return _require_group().world_size


def _publish(path, data):
    tmp = "%s.tmp" % path
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def _rendezvous(group, op, data):
    """Publishes this rank's data for the group's next call and returns every rank's, in order."""
    group.calls += 1
    where = os.path.join(group.store, "%d.%s" % (group.calls, op))
    try:
        os.mkdir(where)
    except OSError:
        pass  # another rank made it
    _publish(os.path.join(where, str(group.rank)), data)
    deadline = time.monotonic() + group.timeout_s
    while True:
        present = [r for r in range(group.world_size) if os.path.exists(os.path.join(where, str(r)))]
        if len(present) == group.world_size:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("[fake gloo] Timed out waiting %dms for recv operation to complete (call %d %s: "
                               "ranks %s arrived, %d expected)" % (group.timeout_s * 1000, group.calls, op, present,
                                                                  group.world_size))
        time.sleep(_POLL_S)
    out = []
    for r in range(group.world_size):
        with open(os.path.join(where, str(r)), "rb") as f:
            out.append(f.read())
    return out


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, **kwargs):
    global _group
    if _group is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend != "gloo":
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found! (the stand-in has only gloo)")
    store = os.environ.get("FAKE_TORCH_STORE")
    if not store or not os.path.isdir(store):
        raise ValueError("the stand-in's rendezvous needs FAKE_TORCH_STORE, a directory every rank shares")
    if rank < 0 or world_size < 1:
        rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    timeout_s = timeout.total_seconds() if timeout is not None else 1800.0
    group = _Group(store, rank, world_size, timeout_s)
    try:
        _rendezvous(group, "init", b"")
    except RuntimeError as e:
        raise RuntimeError("Timed out initializing process group in store based barrier on rank %d: %s" % (rank, e))
    _group = group


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    if op != ReduceOp.SUM or group is not None or async_op:
        raise NotImplementedError("the stand-in does synchronous SUM on the default group only")
    g = _require_group()
    if os.environ.get("FAKE_TORCH_SKIP_RANK") == str(g.rank):
        while True:  # this rank never arrives
            time.sleep(3600)
    parts = _rendezvous(g, "all_reduce", tensor.values.tobytes())
    total = array.array("f", bytes(len(tensor.values) * 4))
    for part in parts:
        values = array.array("f")
        values.frombytes(part)
        if len(values) != len(total):
            raise RuntimeError("[fake gloo] all_reduce: ranks sent %d and %d elements" % (len(values), len(total)))
        for i, v in enumerate(values):
            total[i] += v
    tensor.values = total
    return None


def barrier(group=None, async_op=False, device_ids=None):
    if device_ids is not None:
        raise RuntimeError("barrier device_ids is only for the NCCL backend")
    _rendezvous(_require_group(), "barrier", b"")


def destroy_process_group(group=None):
    global _group
    _require_group()
    _group = None

