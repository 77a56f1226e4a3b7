"""What the scenario programs share: finding their own marked lines, stating the expected
diagnosis (the "truth"), and a toy model and data loader that look like a training loop.

The truth is never a hard-coded line number: a scenario marks the lines that matter with a
comment `# site: NAME` and site(NAME) finds the line, and the function around it, in the
scenario's own source at run time. Iterations and sequence numbers are computed from the
scenario's parameters (world size, loader lengths).

Truth format (JSON, written by rank 0 to $HANGSHIM_SCENARIO_TRUTH, i.e. launch.py --truth):
  scenario, kind, summary (one sentence), world_size, hang (bool), culprits (ranks),
  communicator {name, ranks}, seq (1-based collective number on that communicator where the
  ranks diverge; null for healthy), op (torch-style name of the collective at seq),
  ranks: {rank: state}, where a state is
    {"state": "in_collective", "op", "group", "seq", "callsite", "iteration", "count", "dtype"}
    {"state": "outside_nccl", "callsite", "threads": [callsite...], "last_collective"}
    {"state": "exited", "exit_code", "callsite", "last_collective"}
    {"state": "finished", "collectives": {group: count}}
  callsite = {"file", "line", "function"}; iteration = 1-based number of times that line has
  issued a collective (counting the current call); last_collective = {"group", "seq", "op",
  "callsite", "iteration"} of the last collective the rank completed.
"""

import ast
import json
import os
import sys


def env_int(name, default=None):
    value = os.environ.get(name)
    if value is None:
        if default is None:
            raise SystemExit("%s is not set: start scenarios with tests/system/scenarios/launch.py" % name)
        return default
    return int(value)


def _enclosing_function(tree, line):
    """The innermost function definition whose body contains `line`."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = [n.lineno for n in ast.walk(node) if hasattr(n, "lineno")]
            if node.lineno <= line <= max(lines) and (best is None or node.lineno > best.lineno):
                best = node
    return best.name if best is not None else "<module>"


_SOURCES = {}


def site(name, module_file=None):
    """The {file, line, function} of the line carrying the comment `# site: NAME` in the
    calling scenario's source (or in module_file)."""
    path = os.path.realpath(module_file or sys._getframe(1).f_code.co_filename)
    if path not in _SOURCES:
        with open(path) as f:
            text = f.read()
        _SOURCES[path] = (text.splitlines(), ast.parse(text, path))
    lines, tree = _SOURCES[path]
    marker = "# site: " + name
    found = [i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(marker)]
    if len(found) != 1:
        raise SystemExit("scenario %s: expected one line marked %r, found %d" % (path, marker, len(found)))
    return {"file": path, "line": found[0], "function": _enclosing_function(tree, found[0])}


def in_collective(op, group, seq, callsite, iteration, count=None, dtype=None):
    state = {"state": "in_collective", "op": op, "group": group, "seq": seq, "callsite": callsite,
             "iteration": iteration}
    if count is not None:
        state["count"] = count
    if dtype is not None:
        state["dtype"] = dtype
    return state


def last_collective(op, group, seq, callsite, iteration):
    return {"op": op, "group": group, "seq": seq, "callsite": callsite, "iteration": iteration}


def write_truth(scenario_file, kind, summary, world_size, culprits, communicator, seq, op, ranks,
                **extra):
    """Builds the truth; rank 0 writes it where the launcher asked. Returns it."""
    truth = {
        "scenario": os.path.basename(scenario_file), "kind": kind, "summary": summary,
        "world_size": world_size, "hang": kind != "healthy", "culprits": culprits,
        "communicator": communicator, "seq": seq, "op": op,
        "ranks": {str(r): s for r, s in ranks.items()},
    }
    truth.update(extra)
    path = os.environ.get("HANGSHIM_SCENARIO_TRUTH")
    if path and env_int("RANK") == 0:
        tmp = "%s.tmp.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True)
        os.rename(tmp, path)
    return truth


def rank_text(ranks):
    """[1, 2, 3] -> "1-3", [1] -> "1", [0, 2] -> "0,2"."""
    ranks = sorted(ranks)
    if ranks and ranks == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 1:
        return "%d-%d" % (ranks[0], ranks[-1])
    return ",".join(str(r) for r in ranks)


def world(world_size):
    return {"name": "world", "ranks": list(range(world_size))}


class Model(object):
    """A stand-in model: `backward` turns a batch into `size` gradient values, `step` applies
    them. Deterministic, so every rank can check the all-reduced numbers."""

    def __init__(self, size, dtype="float32"):
        import ncclpy
        self._ncclpy = ncclpy
        self.size = size
        self.dtype = dtype
        self.weights = [0.0] * size

    def backward(self, batch, size=None, dtype=None):
        grad = self._ncclpy.zeros((size or self.size,), dtype or self.dtype)
        for i in range(grad.numel):
            grad[i] = float(sum(batch) % 7 + i % 3)
        return grad

    def step(self, grad, world_size):
        for i in range(min(len(self.weights), grad.numel)):
            self.weights[i] -= 0.01 * grad[i] / world_size


class ShardedLoader(object):
    """DistributedSampler + DataLoader without the padding: rank r takes samples r, r+W, ...,
    in batches of `batch_size`, keeping the last short batch (drop_last=False)."""

    def __init__(self, num_samples, rank, world_size, batch_size):
        self.indices = list(range(rank, num_samples, world_size))
        self.batch_size = batch_size

    def __len__(self):
        return (len(self.indices) + self.batch_size - 1) // self.batch_size

    def __iter__(self):
        for start in range(0, len(self.indices), self.batch_size):
            yield self.indices[start:start + self.batch_size]
