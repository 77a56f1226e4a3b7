"""accelerate-like: at each epoch end the main process saves the model and the others are meant
to wait_for_everyone() with it; the save branch returns early, so the main process goes on into
the next epoch's backward.

Truth: missing_rank, rank 0; the others wait in wait_for_everyone(), reached from
the epoch loop's end_of_epoch line (call 1)."""

import corpus_lib as job
import miniaccelerate

EPOCHS = 2
STEPS = 3


def end_of_epoch(accelerator):
    if accelerator.is_main_process:
        return "saved"
    accelerator.wait_for_everyone()


def main():
    r = job.rank()
    job.truth(__file__, "accelerate", "wait_skip", "missing_rank", [0], "wait", 1)
    job.start()
    accelerator = miniaccelerate.Accelerator()
    for epoch in range(EPOCHS):
        for batch in job.batches(STEPS, r):
            accelerator.backward(job.grad_of(batch))
        end_of_epoch(accelerator)  # site: wait


if __name__ == "__main__":
    main()
