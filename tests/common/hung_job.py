"""A job left hung on purpose, observed until the shim reports it, then ended: shared by the
shim's stall tests. No stand-in timeout: the job waits as a real hang does, and the test decides
from what the job wrote (stderr, ledgers), with a deadline only a missing report reaches."""
import os
import signal
import subprocess
import time


def run_until_reported(argv, env, err_path, reported, expect, deadline_s=120):
    """Starts `argv` in a session of its own with stderr in `err_path`; polls `reported()` until
    it is true, expecting the job to run all the while (`expect(ok, message)`, the caller's own
    failure); then kills the session and returns what the job wrote on stderr."""
    with open(err_path, "w") as err_file:
        job = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err_file, start_new_session=True)

    def stderr_text():
        with open(err_path) as f:
            return f.read()
    try:
        deadline = time.monotonic() + deadline_s
        while not reported():
            expect(job.poll() is None, "the job ended (status %s) before the stall was reported: %s" %
                   (job.returncode, stderr_text()))
            expect(time.monotonic() < deadline, "no stall reported within %d s: %s" % (deadline_s, stderr_text()))
            time.sleep(0.1)
        expect(job.poll() is None, "the job did not run on after the stall report (status %s)" % job.returncode)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    return stderr_text()
