"""PyTorch Flight Recorder dumps for the tests: built with Python's pickle to the published
schema, and checked the way PyTorch's analyser (torchfrtrace) reads them.

The schema is the one torch/csrc/distributed/c10d/FlightRecorderDetail.hpp writes (getCollectiveTrace,
getPgConfig, getPgStatus; the keys are FlightRecorder.hpp's constants) and the PyTorch tutorial
"Flight Recorder for debugging stuck jobs" shows. The checks follow what
torch/distributed/flight_recorder/components/{loader,builder,utils,types}.py read from a dump:
none of their code is copied here, only the facts they rely on.
"""

import ast
import os
import pickle

# types.py: the collectives and point-to-point operations the analyser accepts
# (`Op.__init__` refuses any other profiling name).
ANALYSER_COLLECTIVES = {
    "broadcast", "_broadcast_oop", "reduce", "_reduce_oop", "all_gather", "all_gather_single", "all_gather_v",
    "all_reduce", "_all_gather_base", "all_gather_into_tensor_coalesced", "reduce_scatter", "reduce_scatter_single",
    "reduce_scatter_v", "reduce_scatter_tensor_coalesced", "_reduce_scatter_base", "gather", "scatter", "all_to_all",
    "all_to_all_single", "all_to_all_v_single", "all_reduce_barrier", "barrier", "split", "new_window",
    "allreduce_coalesced", "ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced",
}
ANALYSER_P2P = {"send", "recv"}
STATES = {"scheduled", "started", "completed"}

T0 = 1724779239936775119  # the tutorial's time_created_ns
LIBRARY = [  # the frames PyTorch records above the job's own: innermost first
    {"name": "all_reduce", "filename": "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "line": 2501},
    {"name": "wrapper", "filename": "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", "line": 83},
]


def frames(script, line, function="train"):
    return LIBRARY + [{"name": function, "filename": script, "line": line},
                      {"name": "<module>", "filename": script, "line": 60}]


def entry(record_id, seq, sizes, state, where, pg=("0", "default_pg"), op="all_reduce", dtype="Float", version="2.5",
          p2p_seq=0, is_p2p=False):
    """One entry of "entries" with the keys of `version` (2.3 has neither thread key; 2.10 adds
    thread_id, thread_name and, with TORCH_NCCL_ENABLE_TIMING, duration_ms)."""
    completed = state == "completed"
    e = {
        "frames": where,
        "record_id": record_id,
        "pg_id": int(pg[0]) if pg[0].isdigit() else 0,
        "process_group": pg,
        "collective_seq_id": seq,
        "p2p_seq_id": p2p_seq,
        "op_id": seq + p2p_seq,
        "profiling_name": "nccl:" + op,
        "time_created_ns": T0 + record_id * 10**6,
        "input_sizes": [sizes],
        "input_dtypes": [dtype],
        "output_sizes": [sizes],
        "output_dtypes": [dtype],
        "state": state,
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": T0 + record_id * 10**6 + 5000 if completed else None,
        "retired": completed,
        "timeout_ms": 600000,
        "is_p2p": is_p2p,
    }
    if version == "2.10":
        e["thread_id"] = "140031336830784"
        e["thread_name"] = "pt_main_thread"
        if completed:
            e["duration_ms"] = 0.125
    return e


def dump(world, entries, version="2.5", groups=None, ranks_text=None):
    """A whole dump: `groups` maps pg name -> (desc, ranks) (default: the default group)."""
    groups = groups or {"0": ("default_pg", list(range(world)))}
    text = ranks_text or (lambda ranks: str(ranks))  # str([0, 1]) is "[0, 1]", as ranks_str writes it
    d = {
        "version": version,
        "pg_config": {name: {"name": name, "desc": desc, "ranks": text(ranks)} for name, (desc, ranks) in groups.items()},
        "pg_status": {},
        "entries": entries,
    }
    for name in groups:
        seqs = [e["collective_seq_id"] for e in entries if e["process_group"][0] == name and not e["is_p2p"]]
        done = [e["collective_seq_id"] for e in entries
                if e["process_group"][0] == name and not e["is_p2p"] and e["state"] == "completed"]
        if name.isdigit():
            d["pg_status"][name] = {"last_enqueued_collective": max(seqs or [-1]), "last_started_collective": -1,
                                    "last_completed_collective": max(done or [-1])}
    if version == "2.10":
        d["comm_lib_version"] = "2.21.5"
    return d


def write_dumps(directory, dumps, prefix="trace_", protocol=2):
    """{rank: dump} as PyTorch names the files: <prefix><rank>."""
    os.makedirs(directory, exist_ok=True)
    for rank, d in dumps.items():
        with open(os.path.join(directory, "%s%d" % (prefix, rank)), "wb") as f:
            pickle.dump(d, f, protocol=protocol)


class SchemaError(Exception):
    pass


def need(condition, message):
    if not condition:
        raise SchemaError(message)


def prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def check_analyser_schema(directory, prefix):
    """What torchfrtrace reads from a directory of dumps, checked as its loader and builder read
    it; returns {rank: dump}. Raises SchemaError naming the first thing it would trip on."""
    dumps = {}
    for name in sorted(os.listdir(directory)):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        need(rest.isdigit(), "%s: the rank after the prefix is not a number (loader.read_dump: int(...))" % name)
        with open(os.path.join(directory, name), "rb") as f:
            d = pickle.load(f)
        need(isinstance(d, dict), "%s: not a dict" % name)
        for key in ("entries", "version", "pg_config"):
            need(key in d, "%s: no %r (loader.read_dump reads it)" % (name, key))
        dumps[int(rest)] = d
    need(dumps, "no file named %s<rank> in %s" % (prefix, directory))
    versions = {d["version"] for d in dumps.values()}
    need(len(versions) == 1, "versions differ between ranks: %s (utils.check_version)" % versions)
    version = versions.pop()
    parts = version.split(".")
    need(len(parts) == 2 and all(p.isdigit() for p in parts), "version %r is not MAJOR.MINOR (get_version_detail)" % version)

    # builder.build_groups_memberships: every rank's pg_config agrees on each group's desc and ranks.
    groups = {}
    for rank, d in dumps.items():
        for pg_name, cfg in d["pg_config"].items():
            need(isinstance(cfg, dict) and "desc" in cfg and "ranks" in cfg, "rank %d: pg_config[%r] lacks desc or ranks" % (rank, pg_name))
            ranks = ast.literal_eval(cfg["ranks"])
            need(isinstance(ranks, list) and all(isinstance(r, int) for r in ranks),
                 "rank %d: pg_config[%r] ranks %r is not a list of ints" % (rank, pg_name, cfg["ranks"]))
            known = groups.setdefault(pg_name, (cfg["desc"], set(ranks)))
            need(known == (cfg["desc"], set(ranks)), "group %r: rank %d says %s, another rank %s (mismatch in membership)" %
                 (pg_name, rank, (cfg["desc"], set(ranks)), known))
    members = set()
    for _, ranks in groups.values():
        members |= ranks
    need(members <= set(dumps), "missing dump files from ranks %s (check_no_missing_dump_files)" % (members - set(dumps)))

    for rank, d in dumps.items():
        last_record = -1
        for i, e in enumerate(d["entries"]):
            where = "rank %d entry %d" % (rank, i)
            for key in ("process_group", "profiling_name", "collective_seq_id", "p2p_seq_id", "record_id", "input_sizes",
                        "output_sizes", "input_dtypes", "output_dtypes", "state", "time_created_ns", "is_p2p"):
                need(key in e, "%s: no %r (types.EntryState / Op read it)" % (where, key))
            pg_name, desc = e["process_group"]
            need(pg_name in d["pg_config"], "%s: process group %r is not in its pg_config" % (where, pg_name))
            need(d["pg_config"][pg_name]["desc"] == desc, "%s: process_group desc %r differs from pg_config's" % (where, desc))
            backend, _, name = e["profiling_name"].partition(":")
            need(backend in ("nccl", "xccl"), "%s: profiling_name %r is not nccl:..." % (where, e["profiling_name"]))
            parts = name.split(" ")
            kind = parts[0]
            need(kind in ANALYSER_COLLECTIVES | ANALYSER_P2P | {"coalesced"}, "%s: %r is not a supported operation" % (where, kind))
            size = len(groups[pg_name][1])
            if kind in ANALYSER_P2P:
                need(len(parts) == 2, "%s: %r without its ranks" % (where, e["profiling_name"]))
                src, dst = parts[1].split("->") if kind == "send" else reversed(parts[1].split("<-"))
                need(0 <= int(src) < size and 0 <= int(dst) < size, "%s: %r names a rank outside its group" % (where, e["profiling_name"]))
                need(e["is_p2p"] is True, "%s: a send/recv with is_p2p %r" % (where, e["is_p2p"]))
            need(e["state"] in STATES, "%s: state %r" % (where, e["state"]))
            need(isinstance(e["input_sizes"], list) and e["input_sizes"] and isinstance(e["input_sizes"][0], list),
                 "%s: input_sizes[0] must exist (Op.dtype_mismatch indexes it)" % where)
            need(isinstance(e["output_sizes"], list) and e["output_sizes"] and isinstance(e["output_sizes"][0], list),
                 "%s: output_sizes[0] must exist" % where)
            if kind == "all_gather":
                need(prod(e["output_sizes"][0]) == prod(e["input_sizes"][0]) * size, "%s: all_gather sizes do not make input * group size" % where)
            if kind == "reduce_scatter":
                need(prod(e["input_sizes"][0]) == prod(e["output_sizes"][0]) * size, "%s: reduce_scatter sizes do not make output * group size" % where)
            for f in e.get("frames", []):
                need(set(f) >= {"name", "filename", "line"}, "%s: a frame without name, filename and line" % where)
            need(e["record_id"] > last_record, "%s: record_id %r not increasing (align_trace_from_beginning)" % (where, e["record_id"]))
            last_record = e["record_id"]
    return dumps
