"""hangshim's gdb extension: Python stacks inside gdb through the pyframes engine.

Loaded by gdb/pyframes-gdb.py (`source` it, or install it for auto-loading: see
docs/gdb.md). register() defines the commands once per gdb session."""
from . import tools

_registered = False


def register(pyframes=None, hangshim=None):
    """Defines the commands (once) and records where the executables were built or installed."""
    global _registered
    if pyframes:
        tools.PYFRAMES.configured = pyframes
    if hangshim:
        tools.HANGSHIM.configured = hangshim
    if _registered:
        return
    from . import commands, snapshot
    commands.define()
    snapshot.connect_events()
    _registered = True
