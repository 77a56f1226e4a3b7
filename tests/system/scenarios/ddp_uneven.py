"""DDP with uneven data (the drop_last=False story): the dataset does not split evenly, so
rank 0's loader yields one batch more than the others'. Each step all-reduces the gradients;
at the end of the epoch every rank all-reduces its epoch loss.

Correct diagnosis: ranks disagree on the number of loop iterations (kind "iteration_mismatch",
culprit rank 0, whose loader is one batch longer). At world all_reduce #K+1 (K = the other
ranks' loader length) rank 0 is in the gradient all_reduce for the (K+1)-th time (line
`grad_sync`), while ranks 1..N-1 left the loop after K steps and wait in the epoch-loss
all_reduce (line `epoch_loss`, first time). The counts differ (16 and 1), so no rank returns.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

BATCH = 2
STEPS = 3   # batches per rank when the data splits evenly
GRAD = 16
EPOCHS = 2


def num_samples(world_size):
    return world_size * BATCH * STEPS + 1  # one sample too many: rank 0 gets a short extra batch


def train(model, loader, epochs):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for epoch in range(epochs):
        epoch_loss = dist.zeros((1,))
        for step, batch in enumerate(loader):
            grad = model.backward(batch)
            dist.all_reduce(grad)  # site: grad_sync
            model.step(grad, world_size)
            epoch_loss[0] += float(len(batch))
        dist.all_reduce(epoch_loss)  # site: epoch_loss
        if rank == 0:
            print("epoch %d done" % epoch)


def state_truth(world_size):
    lengths = [len(lab.ShardedLoader(num_samples(world_size), r, world_size, BATCH)) for r in range(world_size)]
    shortest = min(lengths)
    seq = shortest + 1
    ranks = {}
    for r in range(world_size):
        if lengths[r] > shortest:
            ranks[r] = lab.in_collective("all_reduce", "world", seq, lab.site("grad_sync"), shortest + 1, count=GRAD)
        else:
            ranks[r] = lab.in_collective("all_reduce", "world", seq, lab.site("epoch_loss"), 1, count=1)
    culprits = [r for r in range(world_size) if lengths[r] > shortest]
    return lab.write_truth(
        __file__, "iteration_mismatch",
        "Rank 0's loader has %d batches, the others' %d (drop_last=False): rank 0 is in its %d-th "
        "gradient all_reduce while the others finished the epoch and wait in the epoch-loss "
        "all_reduce; all block at all_reduce #%d." % (shortest + 1, shortest, shortest + 1, seq),
        world_size, culprits, lab.world(world_size), seq, "all_reduce", ranks, loader_lengths=lengths)


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    loader = lab.ShardedLoader(num_samples(world_size), rank, world_size, BATCH)
    train(lab.Model(GRAD), loader, EPOCHS)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
