"""python -m hangshim PATHNAME: where the pip-installed pieces are, for scripts and gdb:

    python -m hangshim gdb-extension   the gdb extension: gdb -x "$(python -m hangshim gdb-extension)"
    python -m hangshim shim            libhangshim.so, for LD_PRELOAD without `hangshim run`
    python -m hangshim bin             the directory of the bundled commands
"""

import sys

from . import bundle_dir, gdb_extension, shim_library


def main(argv):
    paths = {"gdb-extension": gdb_extension, "shim": shim_library, "bin": lambda: bundle_dir() + "/bin"}
    if len(argv) != 1 or argv[0] not in paths:
        if argv and argv[0] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        sys.stderr.write("python -m hangshim: expected one of %s (see python -m hangshim --help)\n" % ", ".join(paths))
        return 2
    print(paths[argv[0]]())
    return 0


sys.exit(main(sys.argv[1:]))
