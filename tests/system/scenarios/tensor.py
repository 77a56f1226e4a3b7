"""Host tensors for ncclpy: a flat ctypes array with a shape and an NCCL data type.

No numpy (it is not installed for every interpreter the tests use). Collectives also accept
array.array and ctypes arrays. float16 and bfloat16 are stored as their 16-bit patterns and
converted on element access.
"""

import array
import ctypes
import struct

# name: (ncclDataType_t, storage type, element kind)
DTYPES = {
    "int8": (0, ctypes.c_int8, "int"),
    "uint8": (1, ctypes.c_uint8, "int"),
    "int32": (2, ctypes.c_int32, "int"),
    "uint32": (3, ctypes.c_uint32, "int"),
    "int64": (4, ctypes.c_int64, "int"),
    "uint64": (5, ctypes.c_uint64, "int"),
    "float16": (6, ctypes.c_uint16, "half"),
    "float32": (7, ctypes.c_float, "float"),
    "float64": (8, ctypes.c_double, "float"),
    "bfloat16": (9, ctypes.c_uint16, "bf16"),
}


def _half_bits(value):
    return struct.unpack("<H", struct.pack("<e", value))[0]


def _half_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def _bf16_bits(value):
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even


def _bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


class Tensor(object):
    def __init__(self, shape, dtype="float32"):
        if dtype not in DTYPES:
            raise ValueError("unknown dtype %r (one of %s)" % (dtype, ", ".join(sorted(DTYPES))))
        self.shape = tuple(shape)
        self.dtype = dtype
        numel = 1
        for n in self.shape:
            numel *= n
        self.numel = numel
        self.nccl_dtype, storage, self._kind = DTYPES[dtype]
        self.data = (storage * max(numel, 1))()

    @property
    def ptr(self):
        return ctypes.addressof(self.data)

    def __len__(self):
        return self.numel

    def __getitem__(self, i):
        raw = self.data[i]
        if self._kind == "half":
            return _half_value(raw)
        if self._kind == "bf16":
            return _bf16_value(raw)
        return raw

    def __setitem__(self, i, value):
        if self._kind == "half":
            self.data[i] = _half_bits(value)
        elif self._kind == "bf16":
            self.data[i] = _bf16_bits(value)
        elif self._kind == "int":
            self.data[i] = int(value)
        else:
            self.data[i] = value

    def tolist(self):
        return [self[i] for i in range(self.numel)]

    def fill_(self, value):
        for i in range(self.numel):
            self[i] = value
        return self

    def __repr__(self):
        return "Tensor(shape=%s, dtype=%s, %s)" % (self.shape, self.dtype, self.tolist()[:8])


def empty(shape, dtype="float32"):
    return Tensor(shape, dtype)


def zeros(shape, dtype="float32"):
    return Tensor(shape, dtype)


def full(shape, value, dtype="float32"):
    return Tensor(shape, dtype).fill_(value)


def tensor(values, dtype="float32"):
    t = Tensor((len(values),), dtype)
    for i, v in enumerate(values):
        t[i] = v
    return t


class Buffer(object):
    """What an NCCL call needs: address, element count, ncclDataType_t."""

    def __init__(self, ptr, count, dtype):
        self.ptr, self.count, self.dtype = ptr, count, dtype


_ARRAY_TYPES = {("b", 1): 0, ("B", 1): 1, ("i", 4): 2, ("I", 4): 3, ("l", 8): 4, ("q", 8): 4,
                ("L", 8): 5, ("Q", 8): 5, ("f", 4): 7, ("d", 8): 8}
_CTYPES = {ctypes.c_int8: 0, ctypes.c_uint8: 1, ctypes.c_int32: 2, ctypes.c_uint32: 3,
           ctypes.c_int64: 4, ctypes.c_uint64: 5, ctypes.c_float: 7, ctypes.c_double: 8}


def as_buffer(obj):
    if isinstance(obj, Tensor):
        return Buffer(obj.ptr, obj.numel, obj.nccl_dtype)
    if isinstance(obj, array.array):
        key = (obj.typecode, obj.itemsize)
        if key not in _ARRAY_TYPES:
            raise TypeError("array.array typecode %r has no NCCL data type" % obj.typecode)
        address, length = obj.buffer_info()
        return Buffer(address, length, _ARRAY_TYPES[key])
    if isinstance(obj, ctypes.Array) and obj._type_ in _CTYPES:
        return Buffer(ctypes.addressof(obj), len(obj), _CTYPES[obj._type_])
    raise TypeError("not a buffer ncclpy understands: %r (use ncclpy.Tensor, array.array or a ctypes array)"
                    % type(obj).__name__)
