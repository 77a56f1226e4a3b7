"""gpu/skip: on a machine without a GPU, `run.sh` (no --rehearse) prints exactly one line saying
why and that nothing was checked, and exits 77. With a GPU visible this test skips (77).

    check_skip_line.py RUN_SH PYTHON
"""

import subprocess
import sys


def main():
    run_sh, python = sys.argv[1], sys.argv[2]
    run = subprocess.run([run_sh, "--python", python], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=50)
    lines = run.stdout.splitlines()
    if run.returncode == 0 or any(line.startswith(("PASS ", "FAIL ")) for line in lines):
        print("a GPU is visible here: run.sh ran its checks; gpu/skip is for machines without one")
        return 77
    ok = (run.returncode == 77 and len(lines) == 1 and lines[0].startswith("tests/system/gpu/run.sh: no GPU here (")
          and "nothing checked" in lines[0] and "--rehearse" in lines[0])
    print("exit %d, output:\n%s" % (run.returncode, run.stdout))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
