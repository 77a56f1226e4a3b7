# hangshim's gdb extension, loaded with `source /path/to/pyframes-gdb.py` (see docs/gdb.md).
# From the source tree it finds the executables through $PYFRAMES / $HANGSHIM_CLI or PATH; the
# copies cmake writes into the build tree and installs name the build's or the installed ones.
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

import hangshim_gdb  # noqa: E402

hangshim_gdb.register()
