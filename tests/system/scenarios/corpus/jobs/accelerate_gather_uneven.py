"""accelerate-like evaluation without even_batches: the odd rank's eval loader has one batch
more, so it gathers predictions once more while the others have left the loop and wait outside
NCCL for a metrics service.

Truth: iteration_mismatch, the odd rank ran one more iteration, at the gather line (call
EVAL+1)."""

import corpus_lib as job
import miniaccelerate

EVAL = 3


def evaluate(accelerator, loader):
    preds = []
    for batch in loader:
        out = job.dist.full((2,), float(sum(batch)))
        preds.append(accelerator.gather(out))  # site: loop
    return preds


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "accelerate", "gather_uneven", "iteration_mismatch", [odd], "loop", EVAL + 1)
    job.start()
    evaluate(miniaccelerate.Accelerator(), job.batches(EVAL + (1 if r == odd else 0), r))
    job.block_forever()  # the metrics service


if __name__ == "__main__":
    main()
