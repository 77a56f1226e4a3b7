"""Healthy run: every rank trains the same number of steps with every kind of collective, a
sub-group and point-to-point exchanges, checks the numbers, and exits 0.

Correct diagnosis: nothing is wrong (kind "healthy"): no rank hangs, every rank finishes; the
world communicator issues 8 collectives per step plus the final barrier, the sub-group (the first
half of the ranks, at least two) one per step. A tool that reports a hang here raised a false
alarm.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

STEPS = 3
BATCH = 2
GRAD = 16


def expect(ok, what):
    if not ok:
        raise SystemExit("healthy.py rank %d: wrong result: %s" % (dist.get_rank(), what))


def sub_ranks(world_size):
    return list(range(max(2, world_size // 2)))


def train(model, loaders, sub):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(loaders[rank]):
        grad = model.backward(batch)
        dist.all_reduce(grad)  # site: grad_sync
        batches = [list(loaders[r])[step] for r in range(world_size)]
        want = [sum(model.backward(b)[i] for b in batches) for i in range(GRAD)]
        expect(grad.tolist() == want, "all_reduce at step %d" % step)
        model.step(grad, world_size)

        params = dist.full((4,), float(rank * 10 + step))
        dist.broadcast(params, src=step % world_size)  # site: param_broadcast
        expect(params.tolist() == [float((step % world_size) * 10 + step)] * 4, "broadcast")

        mine = dist.full((2,), float(rank + step), "int64")
        gathered = dist.zeros((2 * world_size,), "int64")
        dist.all_gather_into_tensor(gathered, mine)
        expect(gathered.tolist() == [r + step for r in range(world_size) for _ in range(2)], "all_gather")

        shards = dist.tensor([float(rank + j) for j in range(world_size)], "float64")
        shard = dist.zeros((1,), "float64")
        dist.reduce_scatter_tensor(shard, shards)
        expect(shard.tolist() == [float(sum(r + rank for r in range(world_size)))], "reduce_scatter")

        outgoing = dist.tensor([rank * 100 + j for j in range(world_size)], "int32")
        incoming = dist.zeros((world_size,), "int32")
        dist.all_to_all_single(incoming, outgoing)
        expect(incoming.tolist() == [r * 100 + rank for r in range(world_size)], "all_to_all")

        loss = dist.tensor([float(rank + 1)])
        dist.reduce(loss, dst=0)
        if rank == 0:
            expect(loss.tolist() == [float(world_size * (world_size + 1) // 2)], "reduce")

        stat = dist.tensor([rank], "int32")
        table = dist.zeros((world_size,), "int32") if rank == 0 else None
        dist.gather(stat, table, dst=0)
        if rank == 0:
            expect(table.tolist() == list(range(world_size)), "gather")

        lrs = dist.tensor([0.1 * (j + 1) for j in range(world_size)], "float32") if rank == 0 else None
        lr = dist.zeros((1,), "float32")
        dist.scatter(lr, lrs, src=0)
        expect(abs(lr[0] - 0.1 * (rank + 1)) < 1e-6, "scatter")

        if sub.is_member:
            part = dist.tensor([float(rank)], "bfloat16")
            dist.all_reduce(part, group=sub)  # site: sub_sync
            expect(part.tolist() == [float(sum(sub.ranks))], "sub-group all_reduce")

        right, left = (rank + 1) % world_size, (rank - 1) % world_size
        token = dist.tensor([rank * 1000 + step], "int64")
        received = dist.zeros((1,), "int64")
        dist.batch_isend_irecv([dist.P2POp(dist.isend, token, right), dist.P2POp(dist.irecv, received, left)])
        expect(received.tolist() == [left * 1000 + step], "ring exchange")
    dist.barrier()  # site: final_barrier


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    sub = sub_ranks(world_size)
    ranks = {}
    for r in range(world_size):
        collectives = {"world": 8 * STEPS + 1}
        if r in sub:
            collectives["group1"] = STEPS
        ranks[r] = {"state": "finished", "collectives": collectives}
    lab.write_truth(__file__, "healthy", "No hang: every rank finishes all %d steps." % STEPS,
                    world_size, [], lab.world(world_size), None, None, ranks,
                    sites={name: lab.site(name) for name in ("grad_sync", "param_broadcast", "sub_sync", "final_barrier")})
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    group = dist.new_group(sub)
    loaders = [lab.ShardedLoader(world_size * BATCH * STEPS, r, world_size, BATCH) for r in range(world_size)]
    train(lab.Model(GRAD), loaders, group)
    dist.destroy_process_group()
    print("rank %d: finished %d steps" % (rank, STEPS))


if __name__ == "__main__":
    main()
