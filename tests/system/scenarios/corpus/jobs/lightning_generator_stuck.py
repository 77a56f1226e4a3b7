"""Lightning-like: the Trainer's loop iterates the user's generator loader; at step STALL the odd
rank's generator blocks (a shared file system read) inside fit()'s `for` header, outside NCCL.
training_step logs the loss with sync_dist=True, so the others wait in step STALL's log.

Truth: stuck_outside_nccl, the odd rank; the others wait at the self.log line (call STALL)."""

import corpus_lib as job
import minilightning as L

STEPS = 5
STALL = 3


class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("loss", float(sum(batch)), sync_dist=True)  # site: loop
        return job.grad_of(batch)


def loader(batches, stall_at):
    for i, batch in enumerate(batches, 1):
        if i == stall_at:
            job.block_forever()
        yield batch


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "lightning", "generator_stuck", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    L.Trainer().fit(Model(), loader(job.batches(STEPS, r), STALL if r == odd else None))


if __name__ == "__main__":
    main()
