"""Decorated functions: functools.wraps wrappers, a decorator with arguments, a class used as a
decorator and a contextlib.contextmanager generator running inside its with statement."""
import contextlib
import functools

import stackrecord


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


def repeat(times):
    def decorate(function):
        @functools.wraps(function)
        def repeated(*args):
            result = None
            for _ in range(times):
                result = function(*args)
            return result
        return repeated
    return decorate


class Traced(object):
    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


@contextlib.contextmanager
def resource():
    stackrecord.hold()
    yield


@Traced
def innermost():
    with resource():
        pass


@repeat(2)
def middle():
    return innermost()


@logged
def outer():
    return middle()


stackrecord.setup(expected=1)
outer()
