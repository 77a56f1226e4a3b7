"""Plain torch.distributed with gradient accumulation: gradients are all-reduced every ACCUM
micro-batches. The odd rank's loader is ACCUM micro-batches short: it runs one optimizer step
fewer, leaves the loop and waits outside NCCL for an evaluation service.

Truth: iteration_mismatch, the odd rank (one iteration fewer); the others wait at the loop line
(call STEPS)."""

import corpus_lib as job
from utils import dist as udist

STEPS = 4
ACCUM = 2


def evaluate():
    job.block_forever()


def train(loader):
    grad = None
    for i, batch in enumerate(loader, 1):
        grad = job.grad_of(batch)
        if i % ACCUM == 0:
            udist.sync_grads(grad)  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "grad_accum", "iteration_mismatch", [odd], "loop", STEPS, fewer=True)
    job.start()
    train(job.batches(ACCUM * (STEPS - (1 if r == odd else 0)), r))
    evaluate()


if __name__ == "__main__":
    main()
