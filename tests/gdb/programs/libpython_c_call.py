"""CPython's SAMPLE_WITH_C_CALL of Lib/test/test_gdb/test_misc.py, run as `python -c` runs it
(file "<string>", the same line numbers): baz is called by C, _testcapi.pyobject_vectorcall."""
SOURCE = """

from _testcapi import pyobject_vectorcall

def foo(a, b, c):
    bar(a, b, c)

def bar(a, b, c):
    pyobject_vectorcall(baz, (a, b, c), None)

def baz(*args):
    id(42)

foo(1, 2, 3)

"""
exec(compile(SOURCE, "<string>", "exec"), {"__name__": "__main__"})
