"""DeepSpeed-like: at step STALL the odd rank's loop body blocks writing a log file to a dead
network file system (outside NCCL, still inside the loop); the others wait in that step's
gradient all_reduce, issued along the engine's second path.

Truth: stuck_outside_nccl, the odd rank; the others wait at the backward line (call STALL)."""

import corpus_lib as job
import minideepspeed

STEPS = 5
STALL = 4


def write_log(stall):
    if stall:
        job.block_forever()


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "deepspeed", "stuck_body", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    engine = minideepspeed.initialize()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        write_log(r == odd and step == STALL)
        engine.backward(job.grad_of(batch))  # site: loop
        engine.step()


if __name__ == "__main__":
    main()
