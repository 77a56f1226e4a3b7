"""accelerate-like: every step reduces the loss for logging, then broadcasts the main process's
random seed. The odd rank (another accelerate config) broadcasts before it reduces.

Truth: op_mismatch, the odd rank, at its broadcast line (call 1)."""

import corpus_lib as job
import miniaccelerate

STEPS = 4


def train(accelerator, odd, loader):
    seed = job.dist.zeros((1,))
    for batch in loader:
        loss = job.dist.full((1,), float(sum(batch)))
        if accelerator.process_index == odd:
            accelerator.broadcast(seed, 0)  # site: bcast_first
            accelerator.reduce(loss)
        else:
            accelerator.reduce(loss)  # site: reduce
            accelerator.broadcast(seed, 0)


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n) if job.odd_rank(n) != 0 else n - 1
    job.truth(__file__, "accelerate", "broadcast_swap", "op_mismatch", [odd], "bcast_first", 1)
    job.start()
    train(miniaccelerate.Accelerator(), odd, job.batches(STEPS, r))


if __name__ == "__main__":
    main()
