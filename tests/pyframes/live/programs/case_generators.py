"""Generators: a generator delegating with yield from, driven by next() and send()."""
import stackrecord


def inner():
    stackrecord.hold()
    yield 1


def delegating():
    value = yield 0
    yield from inner()
    return value


def drive():
    generator = delegating()
    next(generator)
    return generator.send("go")


stackrecord.setup(expected=1)
drive()
