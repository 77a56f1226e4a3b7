"""accelerate-like: at each epoch end the main process saves the model and the others are meant
to wait_for_everyone() with it; the save branch returns early, so the main process goes on into
the next epoch's backward.

Truth: missing_rank, rank 0; the others wait at the wait_for_everyone line (call 1)."""

import corpus_lib as job
import miniaccelerate

EPOCHS = 2
STEPS = 3


def end_of_epoch(accelerator):
    if accelerator.is_main_process:
        return "saved"
    accelerator.wait_for_everyone()  # site: wait


def main():
    r = job.rank()
    job.truth(__file__, "accelerate", "wait_skip", "missing_rank", [0], "wait", 1)
    job.start()
    accelerator = miniaccelerate.Accelerator()
    for epoch in range(EPOCHS):
        for batch in job.batches(STEPS, r):
            accelerator.backward(job.grad_of(batch))
        end_of_epoch(accelerator)


if __name__ == "__main__":
    main()
