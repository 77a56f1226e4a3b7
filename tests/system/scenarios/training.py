"""The data-parallel training loop several scenarios share, and their main(): each rank states
the truth, joins the world, trains and leaves. A scenario changes one thing on some rank through
the loop's hooks (the gradients it computes, what it does before the gradient all_reduce or
after the optimizer step), so the loop itself is written once.

The loop's all_reduce is a user line like any other (this module is not one of the scenarios'
library files, as ncclpy.py and scenario_lib.py are): a scenario's truth names it with
grad_sync_site().
"""

import ncclpy as dist
import scenario_lib as lab

BATCH = 2
GRAD = 16


def grad_sync_site():
    """The {file, line, function} of the loop's gradient all_reduce."""
    return lab.site("grad_sync", __file__)


def all_in_grad_sync(world_size, step, fields=None):
    """The truth's ranks when every rank waits in the loop's gradient all_reduce of `step`
    (1-based: all_reduce #step, the line's step-th call) with GRAD values, unless
    fields(rank) -> {"count": ..., "dtype": ...} says otherwise for a rank."""
    ranks = {}
    for r in range(world_size):
        given = {"count": GRAD}
        given.update(fields(r) if fields is not None else {})
        ranks[r] = lab.in_collective("all_reduce", "world", step, grad_sync_site(), step, **given)
    return ranks


def last_grad_sync(step):
    """The truth's last_collective of a rank whose last completed collective is the loop's
    gradient all_reduce of `step` (all_reduce #step, the line's step-th call)."""
    return lab.last_collective("all_reduce", "world", step, grad_sync_site(), step)


def data_parallel(model, loader, grads_options=None, before_sync=None, after_step=None):
    """for step, batch: backward, all_reduce the gradients, optimizer step.

    grads_options(rank, world_size, step) -> keyword arguments of model.backward (size, dtype);
    before_sync(rank, world_size, step) runs between backward and the all_reduce;
    after_step(model, rank, world_size, step) runs after the optimizer step.
    """
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(loader):
        grads = model.backward(batch, **(grads_options(rank, world_size, step) if grads_options else {}))
        if before_sync is not None:
            before_sync(rank, world_size, step)
        dist.all_reduce(grads)  # site: grad_sync
        model.step(grads, world_size)
        if after_step is not None:
            after_step(model, rank, world_size, step)


def run(state_truth, steps, train, wrap_loader=None):
    """A scenario's main(): rank 0 writes the truth, every rank joins the world and runs
    train(model, loader) over `steps` batches of its shard, then leaves.

    wrap_loader(rank, world_size, loader) -> the loader train() iterates (e.g. a prefetching one).
    """
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    loader = lab.ShardedLoader(world_size * BATCH * steps, rank, world_size, BATCH)
    if wrap_loader is not None:
        loader = wrap_loader(rank, world_size, loader)
    train(lab.Model(GRAD), loader)
    dist.destroy_process_group()
