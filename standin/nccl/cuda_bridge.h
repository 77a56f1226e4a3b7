// The stand-in's only use of the CUDA driver: putting a host function on a stream
// (cuLaunchHostFunc) for collectives given a stream, and asking for the current device at init.
// The driver is loaded at run time by soname, so tests get the CPU stand-in libcuda.so.1 from
// LD_LIBRARY_PATH; nothing links against CUDA.
#pragma once

#include <nccl.h>

namespace fakenccl {

// NULL, cudaStreamLegacy and cudaStreamPerThread: the calling thread runs the work synchronously.
bool is_synchronous_stream(cudaStream_t stream);

// ncclSuccess when streams can be used (the driver loads and has cuLaunchHostFunc); otherwise
// ncclUnhandledCudaError with the reason as last error.
ncclResult_t check_stream_support();

// Enqueues fn(data) on `stream`; ncclUnhandledCudaError (with last error text) when the driver
// cannot be loaded or refuses.
ncclResult_t launch_on_stream(cudaStream_t stream, void (*fn)(void*), void* data);

// The device of the calling thread's current CUDA context if the process has loaded a driver and
// made a context current (torch.cuda.set_device does); otherwise 0, like cudaGetDevice.
int current_cuda_device();

}  // namespace fakenccl
