"""What the test drivers' main() functions share: a parser whose named options are all required, and
running the checks in a scratch directory that is always removed, where a Failure is the test's
failure (one "FAIL: what" line, exit 1)."""

import argparse
import os
import shutil
import tempfile

from expect import Failure


def parser_requiring(*options):
    """An argument parser in which each of options ("--name") must be given; add any others after."""
    parser = argparse.ArgumentParser()
    for option in options:
        parser.add_argument(option, required=True)
    return parser


def required_args(*options):
    """The parsed command line of a driver that takes exactly these required options."""
    return parser_requiring(*options).parse_args()


def run_in_scratch(prefix, checks, mode=None, ok=None, failures=(Failure,)):
    """checks(work) in a new directory named prefix...; mode, when given, is chmod'ed on it first.
    Returns the exit status: 1 after printing "FAIL: ..." on one of failures, else 0 after printing
    ok (when given). The directory is removed either way."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        if mode is not None:
            os.chmod(work, mode)
        checks(work)
    except failures as failure:
        print("FAIL: %s" % failure)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if ok is not None:
        print(ok)
    return 0
