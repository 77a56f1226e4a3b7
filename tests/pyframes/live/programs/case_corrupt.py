"""A corrupt frame chain. After recording its stack, the innermost function overwrites the link
from its caller to the caller's caller, in the chain the interpreter keeps (PyFrameObject.f_back
up to 3.10, _PyInterpreterFrame.previous from 3.11), then blocks without ever returning.

    case_corrupt.py TRUTH.json garbage   the link points at unmapped memory
    case_corrupt.py TRUTH.json cycle     the link points back at the innermost frame

A reader must stop (at the bad pointer, or at a cycle or depth bound) and mark the stack
truncated; the first two frames are still valid. The offsets are CPython's own struct layouts
(Include/frameobject.h, Include/internal/pycore_frame.h); the garbage collector is disabled so
the interpreter itself never follows the corrupted link.
"""
import ctypes
import gc
import sys
import sysconfig
import time

import stackrecord

GARBAGE_ADDRESS = 0xDEADBEEF000  # 14 TiB: far from the heap, libraries and stacks


# A free-threaded build's object header is 16 bytes longer (ob_tid, ob_ref_local, ob_ref_shared).
HEADER_EXTRA = 16 if sysconfig.get_config_var("Py_GIL_DISABLED") else 0


def chain_node_and_link(frame):
    """(address of the frame's chain node, address of the node's link to its caller)."""
    if sys.version_info < (3, 11):
        return id(frame), id(frame) + 24  # f_back follows PyObject_VAR_HEAD
    node = ctypes.c_void_p.from_address(id(frame) + 24 + HEADER_EXTRA).value  # PyFrameObject.f_frame
    return node, node + (48 if sys.version_info < (3, 12) else 8)  # _PyInterpreterFrame.previous


def corrupt(me, caller, mode):
    my_node, _ = chain_node_and_link(me)
    _, caller_link = chain_node_and_link(caller)
    ctypes.c_void_p.from_address(caller_link).value = GARBAGE_ADDRESS if mode == "garbage" else my_node


def corrupt_and_block(mode):
    me = sys._getframe()
    frames = stackrecord.stack_of(me)[:2]
    stackrecord.publish("main", stackrecord._at_line(frames, sys._getframe().f_lineno), blocking=True, expect_truncated=True); corrupt(me, me.f_back, mode); time.sleep(10 ** 8)  # noqa: E501,E702


def level_two(mode):
    corrupt_and_block(mode)


def level_one(mode):
    level_two(mode)


gc.disable()
stackrecord.setup(expected=1, mode=sys.argv[2])
level_one(sys.argv[2])
