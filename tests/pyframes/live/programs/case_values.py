"""Locals whose values pyframes reads past the plain types: nested containers (cut by size, not
depth), containers that hold themselves, an instance of a class (Python's default repr), numpy
scalars and arrays, a torch.Tensor (each of the last two only when the interpreter can import
the package). Each frame records its locals with what the interpreter itself says of them:
repr() for containers; for numpy the scalar's type and str() of its value, an array's shape and
dtype; for other objects Python's default repr (module.name object at id()). The records go
into the ground truth as "values" (function name -> local name -> record). Blocks after.
Python 3.6 syntax."""
import sys

import stackrecord

SKIP = ("frame", "truth", "records", "numpy", "torch")


def record(frame, records, bounded=(), default_repr=()):
    truth = {}
    for name, value in list(frame.f_locals.items()):
        if name in SKIP:
            continue
        entry = {"repr": repr(value)[:4000], "id": id(value), "argument": False,
                 "expect": "bounded" if name in bounded else "exact", "prefix": 20 if name in bounded else 0}
        if name in default_repr:
            entry["repr"] = "<%s.%s object at %#x>" % (type(value).__module__, type(value).__name__, id(value))
        truth[name] = entry
    records[frame.f_code.co_name] = {"locals": truth, "names": sorted(frame.f_locals)}


class Plain(object):
    pass


def numpy_text(numpy, value):
    if isinstance(value, numpy.ndarray):
        return "numpy.ndarray(shape=%r, dtype=%s)" % (tuple(value.shape), value.dtype)
    return "%s.%s(%s)" % (type(value).__module__, type(value).__name__, value)


def inspect_torch(records):
    import torch
    tensor = torch.zeros(2, 3)
    record(sys._getframe(), records, default_repr=("tensor",))
    stackrecord.hold("main", values=records)


def inspect_numpy(records):
    import numpy
    np_int8 = numpy.int8(-5)
    np_uint16 = numpy.uint16(600)
    np_int32 = numpy.int32(-70000)
    np_int64 = numpy.int64(2 ** 40)
    np_float32 = numpy.float32(0.1)
    np_float64 = numpy.float64(2.5)
    np_bool = numpy.bool_(True)
    np_matrix = numpy.zeros((2, 3), dtype=numpy.float32)
    np_vector = numpy.arange(10)
    np_zero_dim = numpy.array(7, dtype=numpy.int16)
    np_flags = numpy.ones((4, 1, 2), dtype=numpy.bool_)
    frame = sys._getframe()
    record(frame, records)
    for name, entry in records["inspect_numpy"]["locals"].items():
        entry["repr"] = numpy_text(numpy, frame.f_locals[name])
    records["inspect_numpy"]["names"] = sorted(frame.f_locals)  # with the loop's own variables
    if has_module("torch"):
        inspect_torch(records)
    else:
        stackrecord.hold("main", values=records)


def has_module(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def inspect_values():
    nested = [1, 2, 3, [1, 2, [1]]]
    deep = [[[[[[1]]]]]]
    mixed = {"a": [1, (2, 3)], "b": {"c": [4, [5, [6]]]}}
    self_list = [1, 2]
    self_list.append(self_list)
    self_dict = {"k": 1}
    self_dict["me"] = self_dict
    long_list = list(range(1000))
    nested_long = [list(range(100)), 1]
    plain = Plain()
    records = {}
    record(sys._getframe(), records, bounded=("long_list", "nested_long"), default_repr=("plain",))
    if has_module("numpy"):
        inspect_numpy(records)
    else:
        stackrecord.hold("main", values=records)


inspect_values()
