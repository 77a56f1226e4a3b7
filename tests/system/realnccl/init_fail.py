"""The init-failure job of tests/system/realnccl in Python, the way Python programs reach NCCL: ctypes
over the real libnccl.so.2, loaded RTLD_GLOBAL and called through the process's global scope
(ctypes.CDLL(None)), so an LD_PRELOADed libhangshim.so sees the calls (as tests/system/scenarios/
ncclpy.py does). Same protocol and output as `realnccl_probe init`:

    init_fail.py RANK NRANKS IDFILE  ->  "init RANK ncclCommInitRank CODE NAME|TEXT", exit 3 on failure

NAME comes from nccl.h's enum, copied here in its order (ncclResult_t values are NCCL's ABI).
"""
import ctypes
import os
import sys
import time

NAMES = ["ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
         "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"]


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def main():
    rank, nranks, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
    nccl = ctypes.CDLL(None)
    nccl.ncclGetLastError.restype = ctypes.c_char_p
    nccl.ncclGetLastError.argtypes = [ctypes.c_void_p]
    nccl.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId, ctypes.c_int]
    uid = UniqueId()
    if rank == 0:
        r = nccl.ncclGetUniqueId(ctypes.byref(uid))
        if r != 0:
            print("init %d ncclGetUniqueId %d %s|%s" % (rank, r, NAMES[r], nccl.ncclGetLastError(None).decode()))
            return 1
        with open(path + ".tmp", "wb") as f:
            f.write(ctypes.string_at(ctypes.byref(uid), ctypes.sizeof(uid)))  # all 128 bytes, NULs included
        os.rename(path + ".tmp", path)
    else:
        deadline = time.time() + 60
        while not os.path.exists(path):
            if time.time() > deadline:
                sys.stderr.write("init_fail.py: no unique id in %s after 60 s\n" % path)
                return 1
            time.sleep(0.1)
        with open(path, "rb") as f:
            ctypes.memmove(ctypes.byref(uid), f.read(128), 128)
    comm = ctypes.c_void_p()
    r = nccl.ncclCommInitRank(ctypes.byref(comm), nranks, uid, rank)
    name = NAMES[r] if 0 <= r < len(NAMES) else "unknown"
    text = "" if r == 0 else (nccl.ncclGetLastError(None) or b"").decode("utf-8", "replace")
    print("init %d ncclCommInitRank %d %s|%s" % (rank, r, name, text))
    sys.stdout.flush()
    if r != 0:
        return 3
    nccl.ncclCommDestroy(comm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
