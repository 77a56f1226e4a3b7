"""accelerate-like, healthy: after SAVE steps the main process saves the state for PAUSE seconds
and the others wait_for_everyone(); then training goes on and the job finishes. Inspected
during the pause, default learned limits.

Truth: healthy."""

import corpus_lib as job
import miniaccelerate

STEPS = 30
SAVE = 25
PAUSE = 6


def main():
    r = job.rank()
    job.truth(__file__, "accelerate", "pause", "healthy", [], None, None, pause=PAUSE)
    job.start()
    accelerator = miniaccelerate.Accelerator()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        accelerator.backward(job.grad_of(batch))
        if step == SAVE:
            if accelerator.is_main_process:
                job.pause(PAUSE)  # save_state
            accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
