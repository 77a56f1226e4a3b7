"""A sub-interpreter run on the main thread: the main interpreter's thread state waits in the call
that runs the sub-interpreter's code, and the sub-interpreter's own thread state, on the same OS
thread, blocks in time.sleep. The sub-interpreter writes the ground truth: both stacks (the outer
one recorded before the call), the interpreters' ids as the interpreter reports them
(`get_current()`; None where the module has no ids) and the OS thread id. Uses
_interpreters (3.13+), _xxsubinterpreters (3.8-3.12) or _testcapi.run_in_subinterp (3.6, 3.7).
Python 3.6 syntax."""
import json
import os
import sys

import stackrecord

INNER = r'''
import json, os, sys, time
def record():
    frame = sys._getframe(1)
    frames = []
    while frame is not None:
        code = frame.f_code
        entry = {"function": code.co_name, "file": code.co_filename, "line": frame.f_lineno}
        if hasattr(code, "co_qualname"):
            entry["qualname"] = code.co_qualname
        frames.append(entry)
        frame = frame.f_back
    return frames
def current_id():
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        current = module.get_current()
        return int(current[0] if isinstance(current, tuple) else current)
    return None
def publish(frames):
    truth = dict(OUTER, inner={"frames": frames, "interpreter": current_id()})
    with open(PATH + ".tmp", "w") as f:
        json.dump(truth, f)
    os.rename(PATH + ".tmp", PATH)
def hold():
    frames = record(); publish(frames); time.sleep(10 ** 8)
hold()
'''


def interpreter_id(module):
    current = module.get_current()
    return int(current[0] if isinstance(current, tuple) else current)


def code_for(path, module):
    """The sub-interpreter's program, with the outer stack (recorded by the caller, at the line of
    its call) and the main interpreter's id."""
    outer = stackrecord.stack_of(sys._getframe(1))
    truth = {"pid": os.getpid(), "native_id": stackrecord.native_id(), "thread_id": stackrecord.threading.get_ident(),
             "outer": {"frames": outer, "interpreter": interpreter_id(module) if module else None}}
    return "OUTER = %r\nPATH = %r\n%s" % (truth, path, INNER)


def run_in_subinterpreter(path):
    try:
        import _interpreters
        interp = _interpreters.create("legacy")
        return _interpreters.run_string(interp, code_for(path, _interpreters))
    except ImportError:
        pass
    try:
        import _xxsubinterpreters
    except ImportError:
        import _testcapi
        return _testcapi.run_in_subinterp(code_for(path, None))
    try:
        interp = _xxsubinterpreters.create(isolated=False)
    except TypeError:
        interp = _xxsubinterpreters.create()
    return _xxsubinterpreters.run_string(interp, code_for(path, _xxsubinterpreters))


run_in_subinterpreter(sys.argv[1])
