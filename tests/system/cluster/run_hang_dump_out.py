"""scripts/hang-dump --out when the report fails: a launcher (a real process) whose ledger
directory holds nothing. hang-dump must exit 1 and its report.txt must hold the report's own
error lines (what `hangshim report` of that directory says on stderr), never be an empty file.

    run_hang_dump_out.py --script HANG_DUMP --hangshim CLI --pyframes CLI
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

from cluster_lib import Failure, expect, main_with_skip, run
from driver import required_args  # noqa: E402 (cluster_lib puts tests/common on the path)


def main():
    args = required_args("--script", "--hangshim", "--pyframes")

    def body():
        work = tempfile.mkdtemp(prefix="hangshim-dump-out-")
        empty = os.path.join(work, "ledgers")
        os.mkdir(empty, 0o700)
        launcher = subprocess.Popen(["sleep", "300"], start_new_session=True)
        ok = False
        try:
            env = dict(os.environ)
            env.pop("HANGSHIM_DIR", None)
            env.pop("LD_PRELOAD", None)
            # The ground truth: what the report itself says about that directory.
            code, _, said, _ = run([args.hangshim, "report", empty], env=env)
            expect(code != 0 and said.strip(), "hangshim report of an empty directory: exit %d, %r" % (code, said))
            out = os.path.join(work, "out")
            code, stdout, stderr, _ = run([args.script, "--out", out, "--dir", empty, "--hangshim", args.hangshim,
                                           "--pyframes", args.pyframes, str(launcher.pid)], env=env)
            expect(code == 1, "hang-dump with a failing report: exit %d:\n%s%s" % (code, stdout, stderr))
            with open(os.path.join(out, "report.txt")) as f:
                saved = f.read()
            expect(saved.strip(), "report.txt is empty (hang-dump printed:\n%s%s)" % (stdout, stderr))
            for line in said.splitlines():
                expect(line in saved, "report.txt lacks the report's line %r:\n%s" % (line, saved))
            ok = True
        finally:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
            if ok:
                shutil.rmtree(work, ignore_errors=True)
            else:
                print("(kept in %s)" % work)

    return main_with_skip("hang-dump --out keeps the report's error in report.txt", body)


if __name__ == "__main__":
    sys.exit(main())
