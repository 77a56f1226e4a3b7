"""A deep recursion (150 frames): long frame chains read from a core."""
import core_record


def recurse(n):
    if n == 0:
        core_record.hold()
        return 0
    return recurse(n - 1) + 1


core_record.setup(expected=1)
recurse(150)
