"""Deep recursion: 301 frames of one function between the module and the blocking call."""
import stackrecord


def recurse(depth):
    if depth == 0:
        stackrecord.hold()
    return recurse(depth - 1)


stackrecord.setup(expected=1)
recurse(300)
