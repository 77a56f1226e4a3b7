"""What a job of tests/system/gpu records about itself for its check to compare against: lines taken
from its own frames, its step counter, its pid. Kept in $GPU_CHECK_TRUTH (one JSON object per
rank), rewritten whole on every update so a reader never sees half of it."""

import json
import os
import sys


def record(**values):
    path = os.environ.get("GPU_CHECK_TRUTH")
    if not path:
        return
    try:
        with open(path) as f:
            truth = json.load(f)
    except (OSError, ValueError):
        truth = {"pid": os.getpid(), "script": os.path.basename(sys.argv[0])}
    truth.update(values)
    tmp = "%s.tmp" % path
    with open(tmp, "w") as f:
        json.dump(truth, f)
    os.replace(tmp, path)


def caller_line():
    """The line of the caller's caller: `site = caller_line()` inside a helper names its call."""
    return sys._getframe(2).f_lineno
