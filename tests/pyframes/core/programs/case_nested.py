"""Plain functions nested a few levels deep, called from module level: the main thread only."""
import core_record


def leaf(n):
    core_record.hold()
    return n


def middle(n):
    return leaf(n + 1) * 2


def outer():
    return middle(1)


core_record.setup(expected=1)
outer()
