// NCCL's data types and reduction operators on host memory.
#pragma once

#include <nccl.h>

#include <cstddef>

namespace fakenccl {

// Bytes per element; 0 for a value that is not an ncclDataType_t.
std::size_t dtype_size(int datatype);
const char* dtype_name(int datatype);
// The built-in reductions (sum, prod, max, min, avg).
bool redop_valid(int redop);
const char* redop_name(int redop);

// out[i] = inputs[0][i] (op) inputs[1][i] (op) ... for i < n, reduced in input order so every
// rank computes bit-identical results. Narrow floats (half, bf16, fp8) accumulate in float and
// round once. avg divides the sum by `ninputs` (truncating for integers). `out` may alias none,
// or any, of the inputs.
void reduce_elements(void* out, const void* const* inputs, int ninputs, std::size_t n, int datatype,
                     int redop);

}  // namespace fakenccl
