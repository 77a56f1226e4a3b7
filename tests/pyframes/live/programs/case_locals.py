"""Arguments and locals of many types, each recorded with the interpreter's own repr (from
sys._getframe().f_locals) and what pyframes is expected to show for it: `exact` (the same
text) or `bounded` (at most 259 bytes, starting like Python's repr for `prefix` characters);
huge ints may instead read "<int of N digits>" with N close to the real count. The module's
globals and the builtins are recorded too (name, repr, type, id), for --globals. Blocks after."""
import builtins
import sys

import stackrecord

STEP = 7
RUN_NAME = "nightly"
LEARNING_RATE = 0.001

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)  # repr() of the huge int below (3.11+, and later 3.8-3.10 patches)

# (expectation, prefix) per variable; variables not listed are exact.
BOUNDED = {
    "huge_int": 40,
    "long_digits": 40,
    "ten_mb": 60,
    "big_bytes": 40,
    "long_list": 20,
    "self_list": 7,
    "big_dict": 10,
    "deep": 3,
}


def inspect_me(number, text, *rest, flag=True, **options):
    small_int = 42
    negative = -7
    zero = 0
    big_int = 2 ** 100
    negative_big = -(10 ** 40) - 12345
    long_digits = 7 ** 400
    huge_int = 10 ** 5000
    ratio = 0.1
    third = 1.0 / 3.0
    large_float = 1e100
    tiny = 1e-05
    negative_zero = -0.0
    infinite = float("inf")
    not_a_number = float("nan")
    yes = True
    no = False
    nothing = None
    empty = ""
    ascii_text = "hello world"
    quotes = "it's"
    both_quotes = "say \"it's\""
    escapes = "tab\there\nnew line\\"
    accents = u"h\u00e9llo w\u00f6rld"
    cjk = u"\u540d\u524d"
    ten_mb = "x" * (10 * 1024 * 1024)
    raw = b"\x00\x01abc'\xff"
    big_bytes = bytes(range(256)) * 4096
    pair = (1, "two")
    single = (5,)
    empty_tuple = ()
    short_list = [1, 2.5, None, "s"]
    long_list = list(range(1000))
    self_list = [1, 2]
    self_list.append(self_list)
    small_dict = {"a": 1, "b": [1, 2]}
    big_dict = dict((i, i * i) for i in range(100))
    deep = [[[[1]]]]
    frame = sys._getframe()
    truth = {}
    arguments = set(frame.f_code.co_varnames[:frame.f_code.co_argcount + frame.f_code.co_kwonlyargcount + 2])
    for name, value in list(frame.f_locals.items()):
        if name in ("frame", "truth", "arguments"):
            continue
        text_repr = repr(value)
        truth[name] = {
            "repr": text_repr[:4000],
            "length": len(text_repr),
            "digits": len(str(abs(value))) if type(value) is int else None,
            "expect": "bounded" if name in BOUNDED else "exact",
            "prefix": BOUNDED.get(name, 0),
            "argument": name in arguments,
            "id": id(value),
        }
    stackrecord.hold("main", locals=truth, names=sorted(frame.f_locals), globals=namespace(frame.f_globals),
                     builtins=namespace(vars(builtins)))


def namespace(variables):
    """Each name's repr, type and id (CPython: the object's address)."""
    return dict((name, {"repr": repr(value)[:4000], "type": type(value).__name__, "id": id(value)})
                for name, value in variables.items())


inspect_me(12345678901234567890, u"caf\u00e9", 1, "two", flag=False, mode="fast", level=3)
