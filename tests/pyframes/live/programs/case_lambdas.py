"""Lambdas: nested lambdas, one called through map() (a C function calling Python)."""
import stackrecord

block = lambda value: stackrecord.hold()  # noqa: E731
through_map = lambda: list(map(block, [1]))  # noqa: E731


def caller():
    return (lambda: (lambda x: through_map())(0))()


stackrecord.setup(expected=1)
caller()
