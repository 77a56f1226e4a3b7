"""Fault injection against libhangshim.so's ledger directory: full, read-only, a symbolic link
or a directory planted by another user, and a directory that fills up after the ledgers were
made (the stall dump then has no room). In every case the job runs exactly as without the
shim, and each process prints one line naming the problem. Needs root (mount, chown); exits
77 (ctest: skipped) otherwise.

    shim_faults.py --case full|read_only|planted_link|foreign_dir|dump_full --shim LIB --hangshim CLI
                   --driver EXE --fakenccl DIR
"""

import argparse
import glob
import os
import pwd
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from driver import run_in_scratch  # noqa: E402
from expect import Failure, expect  # noqa: E402
from hung_job import run_until_reported  # noqa: E402

SKIP = 77


class Job(object):
    def __init__(self, args, work):
        self.args = args
        self.work = work

    def env(self, directory, shim=True, **extra):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = self.args.fakenccl + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DIR"):
            env.pop(k, None)
        if shim:
            env["LD_PRELOAD"] = self.args.shim
        if directory is not None:
            env["HANGSHIM_DIR"] = directory
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run(self, argv, env, timeout=120):
        try:
            p = subprocess.run([self.args.driver] + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure("the job hung with HANGSHIM_DIR=%s" % env.get("HANGSHIM_DIR"))
        expect(p.returncode >= 0, "the job died of signal %d: %s" % (-p.returncode, p.stderr))
        return p

    def expect_undisturbed(self, directory, reason, ranks=2):
        """results N with the shim over `directory`: same output as without the shim, exit 0,
        and one 'recording off' line per rank that contains `reason`."""
        plain = self.run(["results", str(ranks)], self.env(None, shim=False))
        expect(plain.returncode == 0, "the job fails without the shim: %s" % plain.stderr)
        shimmed = self.run(["results", str(ranks)], self.env(directory))
        expect(shimmed.returncode == 0, "the job failed with the shim (HANGSHIM_DIR=%s): %s" % (directory, shimmed.stderr))
        expect(sorted(shimmed.stdout.splitlines()) == sorted(plain.stdout.splitlines()),
               "results changed with HANGSHIM_DIR=%s" % directory)
        lines = [line for line in shimmed.stderr.splitlines() if line.startswith("hangshim:")]
        expect(len(lines) == ranks, "expected one line per rank, got %s" % lines)
        for line in lines:
            expect("recording off" in line and reason in line, "the line does not name the problem (%r): %r" % (reason, line))
        print(lines[0])


def mount_tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        print("skipped: cannot mount a tmpfs here (%s)" % p.stderr.strip())
        sys.exit(SKIP)


def unmount(path):
    if subprocess.run(["umount", path], stderr=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["umount", "-l", path], stderr=subprocess.DEVNULL)


def nobody():
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return 65534


def case_full(job):
    """A 64 KiB tmpfs: no room for a ledger. posix_fallocate fails at creation (never a SIGBUS
    on a later store through the mapping)."""
    mnt = os.path.join(job.work, "tiny")
    mount_tmpfs(mnt, "size=64k,mode=0700")
    try:
        job.expect_undisturbed(mnt, "No space left on device")
        expect(not glob.glob(os.path.join(mnt, "*")), "a partial ledger was left behind: %s" % os.listdir(mnt))
    finally:
        unmount(mnt)


def case_read_only(job):
    """A read-only file system (root ignores mode bits, so chmod would not do)."""
    mnt = os.path.join(job.work, "ro")
    mount_tmpfs(mnt, "size=1m,mode=0700,ro")
    try:
        job.expect_undisturbed(mnt, "Read-only file system")
    finally:
        unmount(mnt)


def case_planted_link(job):
    """Another user made HANGSHIM_DIR a symbolic link to a directory they own: refused, and
    nothing is written where the link points."""
    trap = os.path.join(job.work, "attacker")
    os.mkdir(trap)
    os.chmod(trap, 0o777)
    os.chown(trap, nobody(), -1)
    link = os.path.join(job.work, "hangshim-dir")
    os.symlink(trap, link)
    os.lchown(link, nobody(), -1)
    job.expect_undisturbed(link, "symbolic link")
    expect(not os.listdir(trap), "files were written through the planted link: %s" % os.listdir(trap))


def case_foreign_dir(job):
    """HANGSHIM_DIR exists, mode 0700, but belongs to another user: refused."""
    foreign = os.path.join(job.work, "foreign")
    os.mkdir(foreign, 0o700)
    os.chown(foreign, nobody(), -1)
    job.expect_undisturbed(foreign, "belongs to uid %d" % nobody())
    expect(not os.listdir(foreign), "files were written into another user's directory")


def ledger_size(job):
    """The size of a ledger with the default geometry, from a real one."""
    d = tempfile.mkdtemp(dir=job.work)
    os.chmod(d, 0o700)
    p = job.run(["results", "1"], job.env(d))
    expect(p.returncode == 0, "a plain run failed: %s" % p.stderr)
    files = glob.glob(os.path.join(d, "*.ledger"))
    expect(len(files) == 1, "expected one ledger, got %s" % files)
    return os.path.getsize(files[0])


def case_dump_full(job):
    """The directory has room for the ledgers and nothing more: the stall dump cannot be
    written. The stall line says so and why, the job is not disturbed, and the ledgers (whose
    pages were all reserved at creation) are complete and readable."""
    size = ledger_size(job)
    mnt = os.path.join(job.work, "exact")
    mount_tmpfs(mnt, "size=%d,mode=0700" % (2 * size))
    try:
        # The waiting rank waits as in a real hang (no stand-in timeout) until its stall line is
        # on stderr (a deadline only a missing line reaches); the job must still run then.
        err_path = os.path.join(job.work, "dump_full.err")

        # Only the skipped call's line counts: a rank late to init or the first all_reduce on a
        # loaded machine makes the other report that call too (limit 1 s), and go on.
        def stall_line():
            with open(err_path) as f:
                return any(line.startswith("hangshim:") and "stalled" in line and "all_reduce #2" in line for line in f)
        err = run_until_reported([job.args.driver, "stall", "2"], job.env(mnt, HANGSHIM_STALL_SECONDS=1, HANGSHIM_POLL_MS=20),
                                 err_path, stall_line, expect)
        lines = [line for line in err.splitlines() if line.startswith("hangshim:")]
        stalls = [line for line in lines if "stalled" in line and "all_reduce #2" in line]
        expect(len(stalls) == 1, "expected one stall line for all_reduce #2, got %s" % lines)
        expect("Python stacks not written" in stalls[0] and "No space left on device" in stalls[0],
               "the stall line does not say the dump failed and why: %r" % stalls[0])
        print(stalls[0])
        ledgers = glob.glob(os.path.join(mnt, "*.ledger"))
        expect(len(ledgers) == 2, "expected two ledgers, got %s" % os.listdir(mnt))
        expect(not glob.glob(os.path.join(mnt, "*.stacks.txt")), "a partial stack dump was left behind")
        for path in ledgers:
            r = subprocess.run([job.args.hangshim, "ledger", "--json", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            expect(r.returncode == 0, "hangshim ledger %s: %s" % (path, r.stderr))
            expect('"all_reduce"' in r.stdout, "%s holds no records" % path)
    finally:
        unmount(mnt)


CASES = {
    "full": case_full,
    "read_only": case_read_only,
    "planted_link": case_planted_link,
    "foreign_dir": case_foreign_dir,
    "dump_full": case_dump_full,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    for name in ("shim", "hangshim", "driver", "fakenccl"):
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("skipped: needs root (mount, chown)")
        return SKIP
    # 0o755: the planted link's owner must be able to reach its target
    return run_in_scratch("hangshim-fault-", lambda work: CASES[args.case](Job(args, work)), mode=0o755, ok="ok")


if __name__ == "__main__":
    sys.exit(main())
