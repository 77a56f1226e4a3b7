"""Put on PYTHONPATH by run_scenario_case.py for the scenario programs: ctypes then binds
libnccl.so.2 through the process's global symbol scope, the way a C or C++ extension linked
against NCCL (PyTorch, CuPy, DeepSpeed's ops) binds it, so an LD_PRELOADed shim is called.

Without it, ctypes looks every function up in the library's own handle (dlsym(handle, ...)),
which by design never reaches an interposer. Nothing else about the program or NCCL changes.
(It can go once tests/scenarios/ncclpy.py loads NCCL with RTLD_GLOBAL and binds via CDLL(None).)
"""

import ctypes
import os

_original_init = ctypes.CDLL.__init__


def _init(self, name, mode=ctypes.DEFAULT_MODE, *args, **kwargs):
    nccl = isinstance(name, str) and os.path.basename(name).startswith("libnccl.so")
    _original_init(self, name, mode | ctypes.RTLD_GLOBAL if nccl else mode, *args, **kwargs)
    if nccl:
        self._handle = ctypes.CDLL(None)._handle  # dlopen(NULL): look up in the global scope


ctypes.CDLL.__init__ = _init
