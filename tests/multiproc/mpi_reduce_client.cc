// An independent HCCL client (public headers only, Open MPI for process management) checking
// HcclReduce the way a user program would: rank 0 calls HcclGetRootInfo, MPI_Bcast sends the 4108
// bytes, every rank calls HcclCommInitRootInfo; then for all 12 dtypes x 4 ops at several counts,
// rotating roots and in place, each rank reduces random inputs, the inputs are MPI_Gather'ed to the
// root, which folds them in rank order with this file's own scalar fold (fp16 through the CPU's
// F16C instructions, bf16 by bit rounding) and compares bitwise (NaN == NaN). Non-roots check that
// their recvBuf kept its guard bytes and every rank that its sendBuf is unchanged (unless in place).
// Exit 0 = all cases passed on all ranks. Deliberately shares no code with tests/harness.
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <immintrin.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Type {
  HcclDataType t;
  const char* name;
  int size;
  char kind;  // 'i' signed, 'u' unsigned, 'h' fp16, 'b' bf16, 'f' fp32, 'd' fp64
};
const Type kTypes[] = {{HCCL_DATA_TYPE_INT8, "int8", 1, 'i'},     {HCCL_DATA_TYPE_INT16, "int16", 2, 'i'},
                       {HCCL_DATA_TYPE_INT32, "int32", 4, 'i'},   {HCCL_DATA_TYPE_FP16, "fp16", 2, 'h'},
                       {HCCL_DATA_TYPE_FP32, "fp32", 4, 'f'},     {HCCL_DATA_TYPE_INT64, "int64", 8, 'i'},
                       {HCCL_DATA_TYPE_UINT64, "uint64", 8, 'u'}, {HCCL_DATA_TYPE_UINT8, "uint8", 1, 'u'},
                       {HCCL_DATA_TYPE_UINT16, "uint16", 2, 'u'}, {HCCL_DATA_TYPE_UINT32, "uint32", 4, 'u'},
                       {HCCL_DATA_TYPE_FP64, "fp64", 8, 'd'},     {HCCL_DATA_TYPE_BFP16, "bfp16", 2, 'b'}};
const char* kOpNames[] = {"sum", "prod", "max", "min"};

__attribute__((target("f16c"))) float H2F(uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("f16c"))) uint16_t F2H(float f) { return static_cast<uint16_t>(_cvtss_sh(f, 0)); }
float B2F(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t F2B(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Element as a double for comparisons of float kinds; integers as raw 64-bit values.
double AsDouble(const Type& ty, const unsigned char* p) {
  uint16_t h;
  float f;
  double d;
  switch (ty.kind) {
    case 'h': std::memcpy(&h, p, 2); return H2F(h);
    case 'b': std::memcpy(&h, p, 2); return B2F(h);
    case 'f': std::memcpy(&f, p, 4); return f;
    default: std::memcpy(&d, p, 8); return d;
  }
}

uint64_t LoadU(const unsigned char* p, int size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);
  return v;
}
int64_t LoadS(const unsigned char* p, int size) {
  uint64_t v = LoadU(p, size);
  int sh = 64 - 8 * size;
  return static_cast<int64_t>(v << sh) >> sh;
}

// a = a (op) b for one element.
void Combine(const Type& ty, int op, unsigned char* a, const unsigned char* b) {
  const int n = ty.size;
  if (ty.kind == 'i' || ty.kind == 'u') {
    uint64_t ua = LoadU(a, n), ub = LoadU(b, n), r = ua;
    if (op == 0) r = ua + ub;
    if (op == 1) r = ua * ub;  // low bits of the 64-bit product = the wrapped n-byte product
    if (op >= 2) {
      bool b_greater = ty.kind == 'i' ? LoadS(b, n) > LoadS(a, n) : ub > ua;
      bool b_less = ty.kind == 'i' ? LoadS(b, n) < LoadS(a, n) : ub < ua;
      r = (op == 2 ? b_greater : b_less) ? ub : ua;
    }
    std::memcpy(a, &r, n);
    return;
  }
  if (op >= 2) {  // max/min: NaN wins; on ties the left operand stays
    double x = AsDouble(ty, a), y = AsDouble(ty, b);
    if (std::isnan(x)) return;
    if (std::isnan(y) || (op == 2 ? y > x : y < x)) std::memcpy(a, b, n);
    return;
  }
  if (ty.kind == 'd') {
    double x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    x = op == 0 ? x + y : x * y;
    std::memcpy(a, &x, 8);
    return;
  }
  float x = static_cast<float>(AsDouble(ty, a)), y = static_cast<float>(AsDouble(ty, b));
  float r = op == 0 ? x + y : x * y;
  if (ty.kind == 'f') {
    std::memcpy(a, &r, 4);
  } else {
    uint16_t h = ty.kind == 'h' ? F2H(r) : F2B(r);
    std::memcpy(a, &h, 2);
  }
}

bool SameElem(const Type& ty, const unsigned char* a, const unsigned char* b) {
  if (std::memcmp(a, b, ty.size) == 0) return true;
  return ty.kind != 'i' && ty.kind != 'u' && std::isnan(AsDouble(ty, a)) && std::isnan(AsDouble(ty, b));
}

void StoreDouble(const Type& ty, double v, unsigned char* p) {
  float f = static_cast<float>(v);
  uint16_t h;
  switch (ty.kind) {
    case 'h': h = F2H(f); std::memcpy(p, &h, 2); break;
    case 'b': h = F2B(f); std::memcpy(p, &h, 2); break;
    case 'f': std::memcpy(p, &f, 4); break;
    default: std::memcpy(p, &v, 8); break;
  }
}

// Random inputs: integers any bits; floats any bits for max/min (NaN, Inf, subnormals included),
// moderate values for sum, magnitudes near 1 for prod, with a sprinkling of special bit patterns.
void MakeInput(const Type& ty, int op, uint64_t seed, std::vector<unsigned char>& v) {
  std::mt19937_64 rng(seed);
  const size_t count = v.size() / ty.size;
  for (size_t i = 0; i < count; ++i) {
    unsigned char* p = &v[i * ty.size];
    uint64_t bits = rng();
    if (ty.kind == 'i' || ty.kind == 'u' || op >= 2 || bits % 16 == 0) {
      std::memcpy(p, &bits, ty.size);
      continue;
    }
    double x = op == 0 ? static_cast<double>(static_cast<int64_t>(rng() % 20001) - 10000) / 64.0
                       : (1.0 + static_cast<double>(rng() % 1000) / 1000.0) * ((rng() & 1) ? -0.75 : 0.75);
    StoreDouble(ty, x, p);
  }
}

void Guard(std::vector<unsigned char>& v, int rank) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(0xA7 ^ (i * 13) ^ rank);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto die = [&](const char* what, int code) {
    std::fprintf(stderr, "rank %d: %s failed with %d\n", rank, what, code);
    MPI_Abort(MPI_COMM_WORLD, 1);
  };

  (void)aclInit(nullptr);
  uint32_t ndev = 1;
  if (aclrtGetDeviceCount(&ndev) != ACL_SUCCESS || ndev == 0) ndev = 1;
  if (int e = aclrtSetDevice(static_cast<int32_t>(rank % ndev))) die("aclrtSetDevice", e);
  HcclRootInfo root_info;
  std::memset(&root_info, 0, sizeof(root_info));
  if (rank == 0)
    if (HcclResult r = HcclGetRootInfo(&root_info)) die("HcclGetRootInfo", r);
  MPI_Bcast(&root_info, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
  HcclComm comm = nullptr;
  if (HcclResult r = HcclCommInitRootInfo(static_cast<uint32_t>(size), &root_info, static_cast<uint32_t>(rank), &comm))
    die("HcclCommInitRootInfo", r);
  aclrtStream stream = nullptr;
  if (int e = aclrtCreateStream(&stream)) die("aclrtCreateStream", e);

  const uint64_t counts[] = {1, 5, 300, 4099, 70001};
  int failures = 0, cases = 0;
  for (int ti = 0; ti < 12; ++ti) {
    for (int op = 0; op < 4; ++op) {
      for (int rep = 0; rep < 2; ++rep) {
        const Type& ty = kTypes[ti];
        const int idx = (ti * 4 + op) * 2 + rep;
        const uint64_t count = counts[(idx * 3 + rep) % 5];
        const uint32_t root = static_cast<uint32_t>((idx * 7 + 1) % size);
        const bool in_place = idx % 3 == 0;
        const size_t bytes = count * ty.size, guard_bytes = 64;
        char label[128];
        std::snprintf(label, sizeof(label), "%s %s count=%llu root=%u%s", ty.name, kOpNames[op],
                      static_cast<unsigned long long>(count), root, in_place ? " in-place" : "");
        ++cases;

        std::vector<unsigned char> input(bytes), recv_img(bytes + guard_bytes);
        MakeInput(ty, op, 0x5eed0000ull + static_cast<uint64_t>(idx) * 1000 + rank, input);
        Guard(recv_img, rank);
        if (in_place) std::memcpy(recv_img.data(), input.data(), bytes);
        void *dsend = nullptr, *drecv = nullptr;
        if (int e = aclrtMalloc(&drecv, recv_img.size(), ACL_MEM_MALLOC_HUGE_FIRST)) die("aclrtMalloc", e);
        aclrtMemcpy(drecv, recv_img.size(), recv_img.data(), recv_img.size(), ACL_MEMCPY_HOST_TO_DEVICE);
        if (in_place) {
          dsend = drecv;
        } else {
          if (int e = aclrtMalloc(&dsend, bytes, ACL_MEM_MALLOC_HUGE_FIRST)) die("aclrtMalloc", e);
          aclrtMemcpy(dsend, bytes, input.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
        }
        HcclResult r = HcclReduce(dsend, drecv, count, ty.t, static_cast<HcclReduceOp>(op), root, comm, stream);
        if (r != HCCL_SUCCESS) die(label, r);
        if (int e = aclrtSynchronizeStream(stream)) {
          std::fprintf(stderr, "rank %d: %s: aclrtSynchronizeStream %d: %s\n", rank, label, e, aclGetRecentErrMsg());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::vector<unsigned char> recv_out(recv_img.size()), send_out(bytes);
        aclrtMemcpy(recv_out.data(), recv_out.size(), drecv, recv_out.size(), ACL_MEMCPY_DEVICE_TO_HOST);
        if (!in_place) {
          aclrtMemcpy(send_out.data(), bytes, dsend, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
          if (send_out != input) {
            std::fprintf(stderr, "rank %d: %s: sendBuf was modified\n", rank, label);
            ++failures;
          }
          aclrtFree(dsend);
        }
        aclrtFree(drecv);

        std::vector<unsigned char> all(rank == static_cast<int>(root) ? bytes * size : 1);
        MPI_Gather(input.data(), static_cast<int>(bytes), MPI_BYTE, all.data(), static_cast<int>(bytes), MPI_BYTE,
                   static_cast<int>(root), MPI_COMM_WORLD);
        if (rank != static_cast<int>(root)) {
          if (recv_out != recv_img) {
            std::fprintf(stderr, "rank %d: %s: non-root recvBuf was modified\n", rank, label);
            ++failures;
          }
          continue;
        }
        if (std::memcmp(recv_out.data() + bytes, recv_img.data() + bytes, guard_bytes) != 0) {
          std::fprintf(stderr, "rank %d: %s: root recvBuf written past count\n", rank, label);
          ++failures;
        }
        std::vector<unsigned char> expect(all.begin(), all.begin() + bytes);
        for (int src = 1; src < size; ++src)
          for (uint64_t i = 0; i < count; ++i) Combine(ty, op, &expect[i * ty.size], &all[src * bytes + i * ty.size]);
        for (uint64_t i = 0; i < count; ++i) {
          if (SameElem(ty, &expect[i * ty.size], &recv_out[i * ty.size])) continue;
          std::fprintf(stderr, "rank %d: %s: first mismatch at index %llu: expected 0x%llx, got 0x%llx\n", rank, label,
                       static_cast<unsigned long long>(i), static_cast<unsigned long long>(LoadU(&expect[i * ty.size], ty.size)),
                       static_cast<unsigned long long>(LoadU(&recv_out[i * ty.size], ty.size)));
          ++failures;
          break;
        }
      }
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  aclrtDestroyStream(stream);
  HcclResult d = HcclCommDestroy(comm);
  if (d != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %d: HcclCommDestroy returned %d\n", rank, d);
    ++total;
  }
  if (rank == 0)
    std::printf("mpi_reduce_client: %d ranks, %d cases: %s (%d failures)\n", size, cases, total ? "FAILED" : "PASSED", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
