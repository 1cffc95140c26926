/* kern_internal.cuh: what the CUDA files of kernels/ share: the context, the
 * checked-call macros, the rotated random input buffers, the timing harness
 * and small device helpers (bf16/fp8 packing, mma.sync).
 *
 * Errors: every CUDA / cuBLASLt call goes through KCK / KLT, which return an
 * error code with a message naming the call, file and line (never exit). An
 * error that poisons the CUDA context (illegal address, launch failure, ...)
 * marks the context unusable; the caller stops and keeps what it measured. */
#ifndef SIM_KERN_INTERNAL_CUH
#define SIM_KERN_INTERNAL_CUH

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <vector>

#include "kern.h"

/* Named device buffers of the context, reused across points of a sweep. */
enum kbuf_slot { KB_X = 0, KB_W, KB_Y, KB_S, KB_V, KB_T, KB_L, KB_P, KB_COUNT };

/* What a buffer holds (random data is generated on the device). */
enum kfill {
  KFILL_NONE = 0,  /* outputs, workspaces */
  KFILL_BF16,      /* uniform [-1, 1) */
  KFILL_FP8,       /* uniform [-1, 1) as E4M3 */
  KFILL_INT8,      /* uniform integers -127..127 */
  KFILL_BYTES,     /* random bytes (packed int4 / offset-binary int8 weights) */
  KFILL_SCALE,     /* bf16 uniform [0.005, 0.015): quantization scales */
  KFILL_COUNT
};

struct kbuf {
  void *p;        /* device memory */
  size_t cap;     /* bytes allocated */
  int fill;       /* kfill of the contents */
  size_t filled;  /* bytes of valid random contents */
};

struct kern_ctx {
  kern_opts opts;
  kern_device_info info;
  double rotate_bytes;            /* footprint to span with rotated inputs */
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
  cublasLtHandle_t lt;
  void *lt_ws;                    /* cuBLASLt workspace */
  size_t lt_ws_bytes;
  float *scales;                  /* device: per-tensor FP8 scales [2] */
  bool usable;
  bool passed[KF_COUNT][DT_COUNT]; /* correctness checks passed */
  uint64_t calls;                 /* kernel calls launched by kern_time_* */
  uint64_t seed;                  /* advanced by every fill and check */
  kbuf buf[KB_COUNT];
  /* cached cuBLASLt state of the last GEMM shape */
  int lt_dt;
  uint32_t lt_m, lt_n, lt_k;
  bool lt_ok;
  cublasLtMatmulDesc_t lt_desc;
  cublasLtMatrixLayout_t lt_a, lt_b, lt_c;
  cublasLtMatmulAlgo_t lt_algo;
};

/* ---- errors --------------------------------------------------------------------- */

int kcuda_fail(kern_ctx *k, sim_err *err, cudaError_t e, const char *call, const char *file, int line);
int klt_fail(kern_ctx *k, sim_err *err, cublasStatus_t s, const char *call, const char *file, int line);

#define KCK(call)                                                                  \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) return kcuda_fail(k, err, e_, #call, __FILE__, __LINE__); \
  } while (0)
#define KLT(call)                                                                          \
  do {                                                                                     \
    cublasStatus_t s_ = (call);                                                            \
    if (s_ != CUBLAS_STATUS_SUCCESS) return klt_fail(k, err, s_, #call, __FILE__, __LINE__); \
  } while (0)
/* after a kernel launch */
#define KLAUNCHED() KCK(cudaGetLastError())

/* ---- buffers ------------------------------------------------------------------------ */

/* Makes slot hold at least `bytes` (grows by reallocating; contents are then
 * refilled) filled with `fill` over its whole capacity. */
int kbuf_need(kern_ctx *k, kbuf_slot slot, size_t bytes, kfill fill, sim_err *err);
/* A device allocation freed when it goes out of scope (checks). */
struct kdev {
  void *p = nullptr;
  ~kdev() {
    if (p) cudaFree(p);
  }
};
int kdev_alloc(kern_ctx *k, kdev *d, size_t bytes, sim_err *err);
int kdev_upload(kern_ctx *k, kdev *d, const void *host, size_t bytes, sim_err *err);
int kdev_download(kern_ctx *k, void *host, const void *dev, size_t bytes, sim_err *err);
/* Sets every byte of dev to v (NaN poison for float outputs: 0xff). */
int kdev_poison(kern_ctx *k, void *dev, size_t bytes, int v, sim_err *err);

/* ---- host random data for checks ----------------------------------------------------- */

struct krng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); } /* [0, 1) */
  double sym() { return 2 * uniform() - 1; }                                       /* [-1, 1) */
  uint32_t below(uint32_t n) { return (uint32_t)(uniform() * n); }
};
krng kern_check_rng(kern_ctx *k); /* a fresh stream for one check */

/* ---- timing ----------------------------------------------------------------------------- */

/* One call of the kernel under test on rotated input set `set`. Returns the
 * first CUDA error (launches must check cudaGetLastError themselves). */
typedef int (*klaunch_fn)(kern_ctx *k, void *state, uint32_t set, sim_err *err);

/* Rotated sets for a point whose one call moves set_bytes. */
uint32_t ktime_sets(kern_ctx *k, double set_bytes);
/* The protocol of kern.h: eager warm-up, graph of calls, warm-up replays,
 * timed replays, median. */
int ktime_run(kern_ctx *k, klaunch_fn fn, void *state, uint32_t sets, double set_bytes, kern_time *t, sim_err *err);

/* Refuses to time a family whose checks have not passed. */
int kcheck_gate(kern_ctx *k, kern_family f, sim_dtype dt, sim_err *err);

/* ---- per-family hooks (defined in each family's .cu) ------------------------------------ */

int kgemm_check(kern_ctx *k, sim_dtype dt, kern_check *out, int max, int *n, sim_err *err);
int kwq_check(kern_ctx *k, sim_dtype wdt, kern_check *out, int max, int *n, sim_err *err);
int kdecode_check(kern_ctx *k, sim_dtype kv, kern_check *out, int max, int *n, sim_err *err);
int kprefill_check(kern_ctx *k, kern_check *out, int max, int *n, sim_err *err);
/* Runs one cuBLASLt GEMM on device pointers (used by the peak probe). */
int kgemm_prepare(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, sim_err *err);
int kgemm_launch(kern_ctx *k, const void *X, const void *W, void *Y, sim_err *err);
void kgemm_release(kern_ctx *k);

/* Fills a check record. */
void kcheck_set(kern_check *c, const char *name, double rel, double tol, size_t bad, const char *note);

/* ---- device helpers ------------------------------------------------------------------------ */

/* D = A . B + D for mma.m16n8k16, bf16 inputs, fp32 accumulators. */
__device__ __forceinline__ void mma_bf16_16816(float d[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Two floats -> packed bf16x2 (lo in the low half), round to nearest. */
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

/* Two E4M3 bytes (lo = byte 0) -> packed bf16x2, exact (every E4M3 value is a bf16). */
__device__ __forceinline__ uint32_t fp8x2_to_bf16x2(uint16_t v) {
  __half2_raw h = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)v, __NV_E4M3);
  __half2 hh = *reinterpret_cast<__half2 *>(&h);
  float2 f = __half22float2(hh);
  return pack_bf16x2(f.x, f.y);
}

#endif
