"""Comprehensions: list, set, dict comprehensions and a generator expression consumed by sum()
(own frames up to 3.11, inlined from 3.12 on: the ground truth says which)."""
import stackrecord


def block():
    stackrecord.hold()
    return 0


def via_genexp():
    return sum(block() for _ in range(1))


def via_dictcomp():
    return {key: via_genexp() for key in range(1)}


def via_setcomp():
    return {len(via_dictcomp()) for _ in range(1)}


def via_listcomp():
    return [via_setcomp() for _ in range(1)]


stackrecord.setup(expected=1)
via_listcomp()
