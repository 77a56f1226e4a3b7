// numpy values for --locals, as py-spy shows them: a scalar's value (numpy.float32(0.1)) and an
// array's shape and dtype (numpy.ndarray(shape=(2, 3), dtype=float32)). The layouts read are
// numpy's public C API, the same in numpy 1 and 2 up to the fields used: a scalar object is the
// object header and then its C value (PyInt8ScalarObject: obval); PyArrayObject is the header,
// data, nd (int), dimensions, strides, base, descr; PyArray_Descr is the header, typeobj, four
// chars (kind, type, byteorder, flags) and type_num (int).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "objects/object_reader.h"

namespace pyframes {

// The repr of a numpy scalar or ndarray whose type's tp_name is `type`; nullopt when `type` is
// no numpy type read here (then the caller shows the type and address) or the object is
// unreadable.
std::optional<std::string> numpy_repr(const ObjectReader& reader, uint64_t object, std::string_view type);

}  // namespace pyframes
