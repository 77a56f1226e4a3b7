"""A CPython from the future: the process rewrites the version numbers it carries for outside
tools (Py_Version from 3.11, and the _Py_DebugOffsets version at the start of _PyRuntime from
3.13) to 3.99.0, then blocks. A reader must refuse with "unsupported version", not guess.
Earlier versions carry no such datum; the ground truth then says "patched": []."""
import ctypes
import mmap
import sys

import stackrecord

FUTURE_HEX = 0x036300F0  # 3.99.0 final, as PY_VERSION_HEX (newer than any pyframes reads)
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def protection(address):
    """The page protection of `address`, from /proc/self/maps."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                perms = fields[1]
                return ((PROT_READ if perms[0] == "r" else 0) | (PROT_WRITE if perms[1] == "w" else 0) |
                        (PROT_EXEC if perms[2] == "x" else 0))
    raise LookupError("%#x is not mapped" % address)


def write_uint(address, value, ctype):
    """Writes into a possibly read-only page (Py_Version is const): make it writable, write,
    restore the page's protection."""
    page = address & ~(mmap.PAGESIZE - 1)
    original = protection(address)
    if libc.mprotect(page, mmap.PAGESIZE, original | PROT_WRITE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    ctype.from_address(address).value = value
    libc.mprotect(page, mmap.PAGESIZE, original)


def patch():
    patched = []
    if sys.version_info >= (3, 11):
        address = ctypes.addressof(ctypes.c_uint32.in_dll(ctypes.pythonapi, "Py_Version"))
        write_uint(address, FUTURE_HEX, ctypes.c_uint32)
        patched.append("Py_Version")
    if sys.version_info >= (3, 13):
        runtime = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
        if ctypes.string_at(runtime, 8) == b"xdebugpy":
            ctypes.c_uint64.from_address(runtime + 8).value = FUTURE_HEX  # .data: writable already
            patched.append("_Py_DebugOffsets.version")
    return patched


stackrecord.setup(expected=1, patched=patch(), future_version="3.99.0")
stackrecord.hold()
