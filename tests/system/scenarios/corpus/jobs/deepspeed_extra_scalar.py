"""DeepSpeed-like: rank 0 alone averages the loss across ranks every REPORT steps for its
progress bar (`if rank == 0 and step % REPORT == 0`), after engine.backward().

Truth: extra_collective, rank 0, at its loss-averaging line (call 1)."""

import corpus_lib as job
import minideepspeed

STEPS = 6
REPORT = 4


def main():
    r = job.rank()
    job.truth(__file__, "deepspeed", "extra_scalar", "extra_collective", [0], "report", 1)
    job.start()
    engine = minideepspeed.initialize()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        engine.backward(job.grad_of(batch))
        engine.step()
        if r == 0 and step % REPORT == 0:
            engine.all_reduce_scalar(float(step))  # site: report


if __name__ == "__main__":
    main()
