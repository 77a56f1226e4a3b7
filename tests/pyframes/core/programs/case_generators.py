"""Generators: a generator delegating with `yield from`, consumed through a generator
expression inside list(); the innermost generator blocks while running."""
import core_record


def inner():
    core_record.hold()
    yield 1


def outer():
    yield from inner()


def consume():
    return list(value * 2 for value in outer())


core_record.setup(expected=1)
consume()
