"""accelerate-like with as many ranks on each side: the first node's two processes (local
ranks 0 and 1 of a 2x2 job) gather a debug metric at step DEBUG that the second node's never
gather. Counting ranks cannot tell which side is wrong; where their stacks part can.

Truth: extra_collective, ranks 0 and 1, at their gather line (call 1)."""

import corpus_lib as job
import miniaccelerate

STEPS = 5
DEBUG = 3


def main():
    r = job.rank()
    job.truth(__file__, "accelerate", "tie_extra", "extra_collective", [0, 1], "debug", 1)
    job.start()
    accelerator = miniaccelerate.Accelerator()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        accelerator.backward(job.grad_of(batch))
        if r < 2 and step == DEBUG:
            accelerator.gather(job.dist.full((1,), 1.0))  # site: debug


if __name__ == "__main__":
    main()
