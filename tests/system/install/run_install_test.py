"""`cmake --install` works and what it installs is usable from elsewhere:

  * the build is installed into a temporary prefix, which is then moved (the installation must
    not depend on where it was installed, nor on the build tree);
  * the installed bin/pyframes and bin/hangshim run (--version), `hangshim run` preloads the
    installed libhangshim.so (found relative to its own executable), the installed scripts
    answer --help and hang-dump finds pyframes and hangshim next to itself;
  * a small program outside this build (tests/system/install/consumer) is configured with
    find_package(hangshim CONFIG REQUIRED), linked against hangshim::pyframes, and reads the
    stack of a Python child (target.py); its frames must equal the stack the child itself
    reports (traceback.extract_stack), for every interpreter given.

    run_install_test.py --build DIR --cmake CMAKE PYTHON...
"""

import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from driver import parser_requiring, run_in_scratch  # noqa: E402
from expect import Failure, expect  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run(command, timeout=300, env=None, check=True):
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                       timeout=timeout, env=env)
    if check:
        expect(p.returncode == 0, "%s: exit %d:\n%s" % (" ".join(command), p.returncode, p.stdout[-4000:]))
    return p


def clean_env():
    """No trace of the build tree: PATH holds only system directories."""
    env = dict(os.environ)
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    for name in ("LD_PRELOAD", "LD_LIBRARY_PATH", "HANGSHIM_DIR", "CMAKE_PREFIX_PATH"):
        env.pop(name, None)
    return env


def install(args, work):
    first = os.path.join(work, "first-prefix")
    run([args.cmake, "--install", args.build, "--prefix", first])
    prefix = os.path.join(work, "moved-prefix")
    os.rename(first, prefix)
    expected = ["bin/pyframes", "bin/hangshim", "bin/hang-dump", "bin/hang-dump-slurm", "bin/hang-dump-pdsh",
                "bin/core-setup", "share/hangshim/gpu-comm-check.py", "share/hangshim/gdb/pyframes-gdb.py",
                "include/pyframes/pyframes.h", "include/pyframes/result.h"]
    for path in expected:
        expect(os.path.isfile(os.path.join(prefix, path)), "cmake --install did not install %s" % path)
    for pattern in ("lib*/libhangshim.so", "lib*/libpyframes.a", "lib*/cmake/hangshim/hangshimConfig.cmake"):
        expect(glob.glob(os.path.join(prefix, pattern)), "cmake --install did not install %s" % pattern)
    return prefix


def check_commands(prefix):
    env = clean_env()
    bindir = os.path.join(prefix, "bin")
    for tool in ("pyframes", "hangshim"):
        out = run([os.path.join(bindir, tool), "--version"], env=env).stdout
        expect(out.startswith(tool + " "), "installed %s --version printed %r" % (tool, out))
    shim = os.path.realpath(glob.glob(os.path.join(prefix, "lib*/libhangshim.so"))[0])
    out = run([os.path.join(bindir, "hangshim"), "run", "--quiet", "--", "sh", "-c", 'echo "$LD_PRELOAD"'],
              env=env).stdout
    expect(out.strip() == shim, "the installed hangshim run preloads %r, not the installed %s" % (out.strip(), shim))
    for script in ("hang-dump", "hang-dump-slurm", "hang-dump-pdsh", "core-setup"):
        out = run([os.path.join(bindir, script), "--help"], env=env).stdout
        expect(out.startswith("usage:") or "usage: " + script in out, "installed %s --help printed %r" % (script, out[:200]))
    # hang-dump finds its tools next to itself (they are not on PATH): it gets as far as
    # looking for the launcher.
    p = run([os.path.join(bindir, "hang-dump"), "--pgrep", "no-such-launcher-anywhere"], env=env, check=False)
    expect(p.returncode == 1 and "no process matches" in p.stdout,
           "installed hang-dump did not find pyframes/hangshim next to itself: exit %d: %s" % (p.returncode, p.stdout))


def build_consumer(args, prefix, work):
    build = os.path.join(work, "consumer-build")
    env = clean_env()
    run([args.cmake, "-S", os.path.join(HERE, "consumer"), "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DCMAKE_BUILD_TYPE=Release"], env=env)
    run([args.cmake, "--build", build, "-j2"], env=env, timeout=600)
    return os.path.join(build, "pyframes_consumer")


def check_consumer(consumer, python, work):
    truth_file = os.path.join(work, "truth.json")
    p = run([consumer, python, os.path.join(HERE, "target.py"), truth_file], env=clean_env(), timeout=60)
    with open(truth_file) as f:
        truth = [(os.path.realpath(file), line, function) for file, line, function in json.load(f)]
    lines = p.stdout.splitlines()
    expect(len([l for l in lines if l.startswith("thread ")]) == 1, "expected one thread:\n%s" % p.stdout)
    frames = [l.split("\t") for l in lines if l.startswith("frame\t")]
    got = [(os.path.realpath(file), int(line), function) for _, function, file, line in frames]
    got.reverse()  # innermost first -> outermost first, as traceback lists them
    expect(got == truth, "%s: the installed library read\n  %s\nthe interpreter says\n  %s" % (
        python, "\n  ".join(map(str, got)), "\n  ".join(map(str, truth))))
    return lines[0]


def main():
    p = parser_requiring("--build", "--cmake")
    p.add_argument("pythons", nargs="+")
    args = p.parse_args()

    def checks(work):
        prefix = install(args, work)
        check_commands(prefix)
        consumer = build_consumer(args, prefix, work)
        for python in args.pythons:
            print("ok %s" % check_consumer(consumer, python, work))
    return run_in_scratch("hangshim-install-", checks, failures=(Failure, subprocess.TimeoutExpired),
                          ok="ok: installed, moved, and used by an outside project through find_package(hangshim)")


if __name__ == "__main__":
    sys.exit(main())
