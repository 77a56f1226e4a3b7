// ncclAllReduce computes every built-in reduction for every data type, identically on all ranks.
// Expected values are computed here in double from the inputs' formula; narrow floats are decoded
// independently of the stand-in where the compiler offers a reference (_Float16; bfloat16 is the
// top half of a float), fp8 through the codec checked in test_minifloat.cpp.
#include "../nccl/minifloat.h"
#include "harness.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace fakenccl_test;

namespace {

bool is_signed_or_float(int dt) {
  return dt != ncclUint8 && dt != ncclUint32 && dt != ncclUint64;
}
bool is_integer(int dt) {
  return dt == ncclInt8 || dt == ncclUint8 || dt == ncclInt32 || dt == ncclUint32 || dt == ncclInt64 ||
         dt == ncclUint64;
}
std::size_t size_of(int dt) {
  switch (dt) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

// Small integers: exact in every type, including fp8.
double input(int dt, int op, int rank, std::size_t i) {
  if (op == ncclProd) return 1 + ((static_cast<std::size_t>(rank) + i) % 4 == 0 ? 1 : 0);
  const double v = static_cast<double>((static_cast<std::size_t>(rank) * 7 + i * 3) % 5);
  return is_signed_or_float(dt) ? v - 2 : v + 1;
}

void encode(int dt, double v, void* at) {
  switch (dt) {
    case ncclInt8: { auto x = static_cast<std::int8_t>(v); std::memcpy(at, &x, 1); return; }
    case ncclUint8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(at, &x, 1); return; }
    case ncclInt32: { auto x = static_cast<std::int32_t>(v); std::memcpy(at, &x, 4); return; }
    case ncclUint32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(at, &x, 4); return; }
    case ncclInt64: { auto x = static_cast<std::int64_t>(v); std::memcpy(at, &x, 8); return; }
    case ncclUint64: { auto x = static_cast<std::uint64_t>(v); std::memcpy(at, &x, 8); return; }
    case ncclFloat32: { auto x = static_cast<float>(v); std::memcpy(at, &x, 4); return; }
    case ncclFloat64: std::memcpy(at, &v, 8); return;
    case ncclFloat16: { auto x = static_cast<_Float16>(v); std::memcpy(at, &x, 2); return; }
    case ncclBfloat16: {
      const auto f = static_cast<float>(v);  // small integers: the low half of the float is zero
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      const auto top = static_cast<std::uint16_t>(bits >> 16);
      std::memcpy(at, &top, 2);
      return;
    }
    case ncclFloat8e4m3: { auto b = static_cast<std::uint8_t>(fakenccl::float_to_mini(static_cast<float>(v), fakenccl::kFloat8E4M3)); std::memcpy(at, &b, 1); return; }
    case ncclFloat8e5m2: { auto b = static_cast<std::uint8_t>(fakenccl::float_to_mini(static_cast<float>(v), fakenccl::kFloat8E5M2)); std::memcpy(at, &b, 1); return; }
    default: return;
  }
}

double decode(int dt, const void* at) {
  switch (dt) {
    case ncclInt8: { std::int8_t x; std::memcpy(&x, at, 1); return x; }
    case ncclUint8: { std::uint8_t x; std::memcpy(&x, at, 1); return x; }
    case ncclInt32: { std::int32_t x; std::memcpy(&x, at, 4); return x; }
    case ncclUint32: { std::uint32_t x; std::memcpy(&x, at, 4); return x; }
    case ncclInt64: { std::int64_t x; std::memcpy(&x, at, 8); return static_cast<double>(x); }
    case ncclUint64: { std::uint64_t x; std::memcpy(&x, at, 8); return static_cast<double>(x); }
    case ncclFloat32: { float x; std::memcpy(&x, at, 4); return x; }
    case ncclFloat64: { double x; std::memcpy(&x, at, 8); return x; }
    case ncclFloat16: { _Float16 x; std::memcpy(&x, at, 2); return static_cast<double>(x); }
    case ncclBfloat16: {
      std::uint16_t top; std::memcpy(&top, at, 2);
      const std::uint32_t bits = static_cast<std::uint32_t>(top) << 16;
      float f; std::memcpy(&f, &bits, 4); return f;
    }
    case ncclFloat8e4m3: { std::uint8_t b; std::memcpy(&b, at, 1); return fakenccl::mini_to_float(b, fakenccl::kFloat8E4M3); }
    case ncclFloat8e5m2: { std::uint8_t b; std::memcpy(&b, at, 1); return fakenccl::mini_to_float(b, fakenccl::kFloat8E5M2); }
    default: return NAN;
  }
}

double expected(int dt, int op, int nranks, std::size_t i) {
  double acc = input(dt, op, 0, i);
  for (int r = 1; r < nranks; ++r) {
    const double v = input(dt, op, r, i);
    acc = op == ncclProd ? acc * v : op == ncclMax ? std::max(acc, v) : op == ncclMin ? std::min(acc, v) : acc + v;
  }
  if (op == ncclAvg) acc = is_integer(dt) ? std::trunc(acc / nranks) : acc / nranks;
  return acc;
}

double tolerance(int dt) {
  switch (dt) {
    case ncclFloat32: return 1e-6;
    case ncclFloat64: return 1e-12;
    case ncclFloat16: return 1e-3;
    case ncclBfloat16: return 8e-3;
    case ncclFloat8e4m3: return 0.07;
    case ncclFloat8e5m2: return 0.13;
    default: return 0;
  }
}

int check_all_reductions(int rank, const ncclUniqueId& id, int nranks, std::size_t count) {
  ncclComm_t comm;
  if (!expect_ok(ncclCommInitRank(&comm, nranks, id, rank), rank, "ncclCommInitRank")) return 1;
  int failures = 0;
  for (int dt = 0; dt < ncclNumTypes; ++dt) {
    for (int op = 0; op < ncclNumOps; ++op) {
      const std::size_t es = size_of(dt);
      std::vector<unsigned char> send(count * es), recv(count * es, 0xAB);
      for (std::size_t i = 0; i < count; ++i) encode(dt, input(dt, op, rank, i), &send[i * es]);
      if (!expect_ok(ncclAllReduce(send.data(), recv.data(), count, static_cast<ncclDataType_t>(dt),
                                   static_cast<ncclRedOp_t>(op), comm, nullptr),
                     rank, "ncclAllReduce")) {
        return 1;
      }
      for (std::size_t i = 0; i < count; ++i) {
        const double want = expected(dt, op, nranks, i);
        const double got = decode(dt, &recv[i * es]);
        if (std::fabs(got - want) > tolerance(dt) * std::max(1.0, std::fabs(want))) {
          if (failures++ < 10) {
            std::fprintf(stderr, "rank %d: datatype %d op %d element %zu: got %g, want %g\n", rank, dt, op, i, got, want);
          }
        }
      }
    }
  }
  ncclCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("allreduce: every datatype and reduction, 2, 3 and 8 ranks") {
  for (int nranks : {2, 3, 8}) {
    CAPTURE(nranks);
    const auto results = run_ranks(nranks, [&](int rank, const ncclUniqueId& id) {
      return check_all_reductions(rank, id, nranks, 37);
    }, std::chrono::seconds(60));
    CHECK_MESSAGE(all_succeeded(results), describe(results));
  }
}

TEST_CASE("allreduce: calls larger than the staging area are cut into rounds") {
  // 512-byte staging: 37 float64 elements take 10 rounds at 8 ranks' worth of blocks.
  const auto results = run_ranks(4, [](int rank, const ncclUniqueId& id) {
    return check_all_reductions(rank, id, 4, 300);
  }, std::chrono::seconds(60), {"HANGSHIM_FAKE_CHUNK_BYTES=512"});
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}
