"""Checks for job_itest.py: the merged tree against each rank's own record, locals against
f_locals, thread states against what each thread declared it is doing."""
import json
import re
import time

from itest_checks import compare_frames, run_pyframes

INT_DIGITS = re.compile(r"^<int of (\d+) digits>$")
MAX_REPR = 256 + len("...")


def member_stack(tree, member):
    """The frames (outermost first) of the branches `member` passes through, or None if the
    tree does not end its stack exactly once."""
    frames = []
    ends = 0
    branches = list(tree)
    while branches:
        inside = [b for b in branches if member in b["members"]]
        if len(inside) != 1:
            return None
        branch = inside[0]
        frames += branch["frames"]
        if member in branch["ended"]:
            ends += 1
            break
        branches = branch["children"]
    return frames if ends == 1 else None


def merged_problems(merged, by_pid, outlier):
    """The merged tree of a job: one member per rank, the outlier's branch first, and every
    member's path through the tree equal to its recorded stack."""
    if not merged:
        return ["no \"merged\" object in the document"]
    problems = []
    members = merged["members"]
    if sorted(m["pid"] for m in members) != sorted(by_pid):
        return ["members %s, expected the ranks %s" % (sorted(m["pid"] for m in members), sorted(by_pid))]
    ranks = [m.get("rank") for m in members]
    if ranks != [str(r) for r in range(len(members))]:
        problems.append("members not in rank order: %s" % ranks)
    tree = merged["tree"]
    if len(tree) != 1 or tree[0]["label"] != "ranks 0-%d" % (len(members) - 1):
        problems.append("expected one root 'ranks 0-%d': %s" % (len(members) - 1, [b["label"] for b in tree]))
    elif not tree[0]["children"] or tree[0]["children"][0]["label"] != "rank %d" % outlier:
        problems.append("the first branch is not 'rank %d': %s" % (
            outlier, [b["label"] for b in tree[0]["children"]]))
    for member in members:
        record = by_pid[member["pid"]]
        truth = record["truth"]["threads"][0]
        if member["native_id"] != truth["native_id"]:
            problems.append("rank %d: member thread %s, expected the main thread %s" % (
                record["rank"], member["native_id"], truth["native_id"]))
        stack = member_stack(tree, member["id"])
        if stack is None:
            problems.append("rank %d: not in exactly one path of the tree" % record["rank"])
            continue
        for problem in compare_frames(list(reversed(stack)), truth["frames"]):
            problems.append("rank %d: %s" % (record["rank"], problem))
    return problems


def check_locals(got, truth, bound_names):
    """pyframes' locals of one frame against the interpreter's reprs."""
    problems = []
    by_name = {local["name"]: local for local in got}
    for name in sorted(set(by_name) - set(bound_names)):
        problems.append("%s: shown by pyframes but not a local of the frame" % name)
    for name, want in sorted(truth.items()):
        local = by_name.get(name)
        if local is None:
            problems.append("%s: missing (Python: %s)" % (name, want["repr"][:80]))
            continue
        if local.get("argument") is not want["argument"]:
            problems.append("%s: argument %s, expected %s" % (name, local.get("argument"), want["argument"]))
        if "id" in want and local.get("address") != want["id"]:
            problems.append("%s: at %s, id() says %#x" % (name, local.get("address"), want["id"]))
        shown = local["repr"]
        if want["expect"] == "exact":
            if shown != want["repr"]:
                problems.append("%s: %r, Python says %r" % (name, shown, want["repr"]))
            continue
        if len(shown.encode("utf-8")) > MAX_REPR:
            problems.append("%s: %d bytes, more than the bound %d" % (name, len(shown.encode("utf-8")), MAX_REPR))
        digits = INT_DIGITS.match(shown)
        if digits and want["digits"]:
            claimed, real = int(digits.group(1)), want["digits"]
            if abs(claimed - real) > max(2, real // 50):
                problems.append("%s: claims %d digits, the int has %d" % (name, claimed, real))
        elif not shown.startswith(want["repr"][:want["prefix"]]):
            problems.append("%s: %r does not start like Python's %r" % (name, shown[:80], want["repr"][:80]))
    return problems


# Types whose repr pyframes gives as Python does (short ones); the rest are checked by address.
EXACT_TYPES = ("int", "float", "bool", "NoneType", "str", "builtin_function_or_method")


def check_namespace(what, got, truth):
    """pyframes' globals or builtins of one frame (--globals) against the interpreter's: the same
    names, each value at its id(), and Python's repr for simple values."""
    problems = []
    by_name = dict((variable["name"], variable) for variable in got)
    for name in sorted(set(by_name) ^ set(truth)):
        problems.append("%s %r: %s" % (what, name, "not in the namespace" if name in by_name else "missing"))
    for name in sorted(set(by_name) & set(truth)):
        shown, want = by_name[name], truth[name]
        if shown.get("address") != want["id"]:
            problems.append("%s %r: at %s, id() says %#x" % (what, name, shown.get("address"), want["id"]))
        if want["type"] in EXACT_TYPES and len(want["repr"]) <= 100 and shown["repr"] != want["repr"]:
            problems.append("%s %r: %r, Python says %r" % (what, name, shown["repr"], want["repr"]))
    return problems


def thread_states(pyframes, pid, extra=()):
    run = run_pyframes(pyframes, ["--json"] + list(extra) + [pid])
    if run.returncode != 0:
        raise AssertionError(run.describe())
    process = json.loads(run.stdout)["processes"][0]
    return {t["native_id"]: t for t in process["threads"]}


def sample_states(pyframes, target, samples=10, settle=120.0):
    """Problems between the states pyframes reports and those the threads declared, and a
    summary. Waits (up to `settle` s) for the always-true states to show, then samples."""
    expected = {t["native_id"]: t for t in target.truth["threads"]}
    steady = [tid for tid, t in expected.items() if not t.get("sampled")]
    deadline = time.monotonic() + settle
    try:
        while True:
            seen = thread_states(pyframes, target.pid)
            if all(seen.get(tid, {}).get("state") == expected[tid]["expect"] for tid in steady):
                break
            if time.monotonic() > deadline:
                break  # the samples below say what is wrong
            time.sleep(0.1)
        counts = {tid: {} for tid in expected}
        for _ in range(samples):
            for tid, thread in thread_states(pyframes, target.pid).items():
                if tid in counts:
                    counts[tid][thread["state"]] = counts[tid].get(thread["state"], 0) + 1
                    if (thread["state"] == "holds_gil") != bool(thread["gil"]):
                        counts[tid]["gil flag disagrees"] = counts[tid].get("gil flag disagrees", 0) + 1
            time.sleep(0.05)
        hidden = thread_states(pyframes, target.pid, ["--hide-idle"])
        included = thread_states(pyframes, target.pid, ["--idle"])  # py-spy's "include idle threads"
    except AssertionError as error:
        return [str(error)], ""
    problems = []
    for tid, record in sorted(expected.items(), key=lambda item: item[1]["label"]):
        got = counts[tid]
        hits = got.get(record["expect"], 0)
        need = samples // 2 if record.get("sampled") else samples - 2
        if hits < need or "gil flag disagrees" in got:
            problems.append("%s: expected %s in at least %d of %d samples, saw %s" % (
                record["label"], record["expect"], need, samples, got))
        # --hide-idle keeps the main thread, the thread a process waits in, even when idle. It is
        # judged by the state that same read saw: a thread that wakes now and then (the free-
        # threaded gil-waiter runs Python every 50 ms) may be caught running, and is then kept.
        if (record["expect"] == "idle" and not record.get("sampled") and tid in hidden and tid != target.pid and
                hidden[tid].get("state") == "idle"):
            problems.append("%s: idle, yet shown with --hide-idle" % record["label"])
        if record["expect"] != "idle" and tid not in hidden and got.get(record["expect"], 0) == samples:
            problems.append("%s: %s, yet hidden by --hide-idle" % (record["label"], record["expect"]))
        if tid not in included:
            problems.append("%s: missing with --idle (which shows idle threads)" % record["label"])
    if target.pid in expected and target.pid not in hidden:
        problems.append("the main thread is hidden by --hide-idle")
    detail = "; ".join("%s %s" % (expected[tid]["label"], counts[tid]) for tid in sorted(counts))
    return problems, detail
