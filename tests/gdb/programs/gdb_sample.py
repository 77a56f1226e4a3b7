# Sample script for use by test_gdb

def foo(a, b, c):
    bar(a=a, b=b, c=c)

def bar(a, b, c):
    baz(a, b, c)

def baz(*args):
    id(42)

foo(1, 2, 3)

# Lines 1-12: CPython's Lib/test/test_gdb/gdb_sample.py (run_libpython_cases.py's line numbers
# are its tests'). Below: the stops of its test_wrapper_call and test_gc, in the same process.
class MyList(list):
    def __init__(self):
        super(*[]).__init__()   # wrapper_call()

l = MyList()

from gc import collect

def gc_foo():
    collect()

def gc_bar():
    gc_foo()

gc_bar()
