/* kern.h: the C API of servesim's calibration kernels (CUDA C files in kernels/).
 *
 * Three parts:
 *   [cpu]  host code that works in every build: bf16/fp8 conversions, the
 *          packed layout of our weight-only kernels, CPU references of every
 *          kernel (double accumulation), the calibration sweep plan and its
 *          time estimate (kern_ref.c, kern_plan.c).
 *   [gpu]  the device: a context (stream, cuBLASLt handle, rotated random
 *          input buffers), probes, correctness checks and timed kernels
 *          (kern_ctx.cu, gemm_lt.cu, wq_gemm.cu, attn_decode.cu, attn_prefill.cu,
 *          kern_host.c).
 *   A build without CUDA links kern_stub.c instead of the [gpu] part: every
 *   [gpu] function then returns SIM_EINPUT "built without CUDA". Without a
 *   GPU at run time (no driver, no device) they return SIM_EINPUT with a
 *   clear message: never a crash, never exit().
 *
 * Kernels are written like llm.c's dev/cuda: each has a CPU reference and a
 * correctness check with a stated tolerance (KERN_TOL_*) that must pass in a
 * context before that kernel family can be timed (kern_time_* refuses
 * otherwise).
 *
 * Timing protocol (every kern_time_*): inputs are random (never zeros) and
 * rotated across several buffer sets that together span at least
 * kern_opts.rotate_bytes (default 2.5 x L2); two eager calls (warm-up, and
 * one timed to size the graph), then the
 * calls are captured into a CUDA graph of R calls (R so that one replay lasts
 * >= replay_min_us and cycles through every buffer set), warm-up replays,
 * then `reps` replays each timed with CUDA events; the result is the median
 * over replays of (replay time / R). Every CUDA and cuBLAS call is checked;
 * a failure returns an error naming the call, file and line.
 *
 * Data layouts (row-major, the way PyTorch / vLLM hold them):
 *   GEMM       Y[M][N] = X[M][K] . W[N][K]^T  (X activations, W weights)
 *   attention  Q[tokens][q_heads][D]; paged KV cache K/V[block][kv_heads][16][D]
 *              (16-token blocks); block table [seq][max_blocks] int32;
 *              query head h reads KV head h / (q_heads / kv_heads) (GQA).
 *   weight-only packed tiles: see kern_wq_pack.
 *
 * Ownership: kern_open allocates the context, kern_close frees it and all
 * device memory. Not thread-safe: one context per thread. */
#ifndef SIM_KERN_H
#define SIM_KERN_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/common.h"
#include "core/dtype.h"

/* ---- device description -------------------------------------------------- */

typedef struct kern_device_info {
  char name[256];                  /* e.g. "NVIDIA H200" */
  int sm_count;                    /* streaming multiprocessors */
  double mem_bytes;                /* device memory, bytes */
  int cc_major, cc_minor;          /* compute capability */
  int cuda_runtime_version, cuda_driver_version; /* e.g. 13000 */
  double sm_clock_mhz, mem_clock_mhz; /* max clocks the driver reports, MHz (0 = unknown) */
  double l2_bytes;                 /* L2 cache, bytes */
  int mem_bus_bits;                /* memory bus width, bits (0 = unknown) */
} kern_device_info;

/* [cpu] True when this binary was compiled with CUDA kernels. */
bool kern_built_with_cuda(void);
/* [gpu] Queries device 0. SIM_EINPUT with a message when there is no usable GPU. */
int kern_device_query(kern_device_info *out, sim_err *err);

/* ---- tolerances of the correctness checks -------------------------------------
 * Relative error ||out - ref||_2 / ||ref||_2 against a double-precision CPU
 * reference computed from the exact same (quantized) inputs. bf16 outputs
 * round at 2^-9 relative, so 1e-2 leaves room for accumulation order and the
 * bf16 rounding of P (attention) or of dequantized weights (weight-only); INT8
 * GEMM accumulates exactly in int32 and must match exactly. */
#define KERN_TOL_BF16 1e-2
#define KERN_TOL_FP8 2e-2
#define KERN_TOL_INT8 0.0

/* ---- kernel families ----------------------------------------------------------- */

typedef enum kern_family {
  KF_GEMM = 0, /* cuBLASLt GEMM: bf16, fp8 (E4M3, per-tensor scales, sm_90+), int8 (int32 out) */
  KF_WQ,       /* our weight-only GEMM/GEMV: int4 (group 128) or int8 weights, bf16 activations */
  KF_DECODE,   /* our paged decode attention, bf16 or fp8 KV cache */
  KF_PREFILL,  /* our flash-style causal prefill attention (chunk over cached context), bf16 */
  KF_COUNT
} kern_family;

const char *kern_family_name(kern_family f); /* "gemm", "wq", "decode", "prefill" */
bool kern_family_parse(const char *s, kern_family *out);

/* ---- [cpu] numeric formats ----------------------------------------------------- */

uint16_t kern_f32_to_bf16(float f);   /* round to nearest even; NaN stays NaN */
float kern_bf16_to_f32(uint16_t h);
uint8_t kern_f32_to_fp8(float f);     /* E4M3 (bias 7, max 448), round to nearest even, saturating */
float kern_fp8_to_f32(uint8_t v);     /* 0x7f / 0xff are NaN */

/* ---- [cpu] weight-only packed layout --------------------------------------------
 * Logical weights q[n][k] (int4: -8..7, int8: -127..127) with one bf16 scale
 * per row and 128-wide group: W[n][k] = q[n][k] * scale[n][k / 128], scales
 * stored [N][K/128]. Requires N % 32 == 0 and K % 128 == 0.
 * Packed bytes are grouped in 512-byte tiles of 16 rows x C columns (C = 64 for
 * int4, 32 for int8); tile (n / 16, k / C) starts at byte
 * ((n / 16) * (K / C) + k / C) * 512. Inside a tile, lane L = 4 g + t of a warp
 * (g = L / 4, t = L % 4) owns the 16 bytes at L * 16: the operand fragments of
 * mma.m16n8k16 for rows g and g + 8 and the columns t * C/4 .. t * C/4 + C/4 - 1
 * of the tile, so that one 16-byte load per lane feeds C/16 MMA k-steps. The
 * k order inside a lane's columns is a permutation applied identically to the
 * activations, so the dot product is unchanged (see wq_gemm.cu). Values are
 * stored offset-binary: int4 nibble = q + 8, int8 byte = q + 128. */
size_t kern_wq_packed_bytes(int bits, uint32_t N, uint32_t K);
bool kern_wq_shape_ok(uint32_t N, uint32_t K);
/* q is [N][K] int8 (int4 values in -8..7). */
void kern_wq_pack(int bits, const int8_t *q, uint32_t N, uint32_t K, uint8_t *packed);
int kern_wq_unpack(int bits, const uint8_t *packed, uint32_t N, uint32_t K, uint32_t n, uint32_t k);

/* ---- [cpu] references (double accumulation) -------------------------------------- */

/* Y[M][N] = X[M][K] . W[N][K]^T * scale. */
void kern_ref_gemm(const float *X, const float *W, uint32_t M, uint32_t N, uint32_t K, double scale, double *Y);
/* Paged decode attention: Q[B][Hq][D], K/V cache [blocks][Hkv][16][D] (floats),
 * table [B][max_blocks], lens[B] tokens; O[B][Hq][D]. Softmax scale 1/sqrt(D). */
void kern_ref_attn_decode(const float *Q, const float *Kc, const float *Vc, const int32_t *table,
                          uint32_t max_blocks, const int32_t *lens, uint32_t B, uint32_t Hq, uint32_t Hkv,
                          uint32_t D, double *O);
/* Causal prefill of one sequence: Q[chunk][Hq][D] for the tokens at positions
 * ctx .. ctx + chunk - 1, K/V of all ctx + chunk tokens in the paged cache
 * through table[]; O[chunk][Hq][D]. */
void kern_ref_attn_prefill(const float *Q, const float *Kc, const float *Vc, const int32_t *table, uint32_t chunk,
                           uint32_t ctx, uint32_t Hq, uint32_t Hkv, uint32_t D, double *O);
/* ||out - ref||_2 / ||ref||_2; non-finite outputs are counted in *bad and make
 * the result +inf. */
double kern_rel_err(const float *out, const double *ref, size_t n, size_t *bad);

/* ---- [cpu] the timing protocol ------------------------------------------------- */

typedef struct kern_opts {
  uint64_t seed;          /* random input data seed */
  double rotate_bytes;    /* rotated input footprint per timed point, bytes; 0 = 2.5 x L2 (>= 64 MiB) */
  uint32_t reps;          /* timed replays per point (median); default 9, quick 5 */
  uint32_t warmup;        /* untimed replays before timing; default 1 */
  double replay_min_ns;   /* one replay lasts at least this long (more calls per graph); default 200 us, quick 100 */
  double point_budget_ns; /* reps shrink (to >= 3) so one point's replays stay under this; default 250 ms, quick 60 */
} kern_opts;
void kern_opts_default(kern_opts *o, bool quick);

/* How one point is timed: `sets` rotated input sets, a graph of `calls`
 * calls cycling through them, `warmup` untimed and `reps` timed replays. */
typedef struct kern_protocol {
  uint32_t sets, calls, warmup, reps;
} kern_protocol;
#define KERN_MAX_SETS 256  /* small calls rotate over many sets so the L2 stays cold */
#define KERN_MAX_CALLS 256
/* call_ns: estimated (or first measured) time of one call; set_bytes: bytes
 * one call reads and writes; rotate_bytes: the footprint to span. */
void kern_protocol_for(const kern_opts *o, double call_ns, double set_bytes, double rotate_bytes,
                       kern_protocol *p);
/* Estimated wall time of one point under p (host overheads included), s. */
double kern_protocol_wall_s(const kern_protocol *p, double call_ns);

/* ---- [cpu] the calibration sweep plan --------------------------------------------- */

typedef struct kern_model_shape {
  char name[64];
  uint32_t hidden;       /* hidden_size */
  uint32_t intermediate; /* intermediate_size (each of gate and up) */
  uint32_t q_heads;      /* num_attention_heads */
  uint32_t kv_heads;     /* num_key_value_heads */
  uint32_t head_dim;     /* head dimension */
  uint32_t vocab;        /* vocab_size */
} kern_model_shape;

/* Ceilings the plan uses to estimate times and to cap grids: measured probes
 * on a device, or kern_ceilings_h200() for a dry run. */
typedef struct kern_ceilings {
  double copy_Bps;            /* device-to-device copy, bytes read + written per s */
  double peak_flops[DT_COUNT];/* large-GEMM rate per compute dtype, FLOP/s (0 = unsupported) */
  double launch_ns;           /* per-kernel cost inside a CUDA graph replay, ns */
} kern_ceilings;
void kern_ceilings_h200(kern_ceilings *c); /* leads from H200 measurements (SOURCES.md) */

#define KERN_PLAN_MAX_GRID 32
#define KERN_PLAN_MAX_TP 8

typedef struct kern_plan_gemm {
  char layer[40];     /* "qkv", "o", "gate_up", "down", "lm_head" ("+"-joined when shapes coincide) */
  uint32_t tp;        /* tensor-parallel degree the shape belongs to */
  kern_family fam;    /* KF_GEMM (cuBLASLt) or KF_WQ (weight-only) */
  sim_dtype wdtype, adtype;
  uint32_t n, k;      /* output and input features per GPU */
  uint32_t m[KERN_PLAN_MAX_GRID]; /* tokens (rows of X), increasing */
  int nm;
  double est_s;       /* estimated wall time of this table's measurements, s */
} kern_plan_gemm;

typedef struct kern_plan_attn {
  kern_family fam;    /* KF_DECODE: x = batch, y = kv_len; KF_PREFILL: x = chunk, y = ctx */
  uint32_t tp;
  sim_dtype kv_dtype; /* bf16 or fp8 (decode); bf16 (prefill) */
  uint32_t q_heads, kv_heads, head_dim; /* per GPU */
  uint32_t x[KERN_PLAN_MAX_GRID], y[KERN_PLAN_MAX_GRID];
  int nx, ny;
  bool skip[KERN_PLAN_MAX_GRID][KERN_PLAN_MAX_GRID]; /* over the per-call cap: not measured */
  double est_s;
} kern_plan_attn;

typedef struct kern_plan {
  kern_model_shape model;
  bool quick;
  double max_call_ms;       /* grid points estimated above this are not measured */
  kern_plan_gemm *gemm;     /* sim_malloc'd */
  int ngemm;
  kern_plan_attn *attn;
  int nattn;
  uint64_t points;          /* timed grid points */
  uint64_t kernel_calls;    /* estimated kernel calls (warm-up + timed), checks and probes excluded */
  double est_probe_s, est_check_s, est_sweep_s, est_total_s; /* estimated GPU wall time */
  char notes[2048];         /* tables left out and why, one per line */
} kern_plan;

/* What to calibrate. */
typedef struct kern_plan_req {
  uint32_t tps[KERN_PLAN_MAX_TP];
  int ntp;
  bool gemm_bf16, gemm_fp8, gemm_int8; /* cuBLASLt tables */
  bool wq_int4, wq_int8;               /* weight-only tables (M 1..64) */
  bool kv_bf16, kv_fp8;                /* decode attention tables */
  bool prefill;                        /* prefill attention tables */
  bool quick;                          /* sparser grids, fewer repeats */
  double max_call_ms;                  /* 0 = default (25 ms, quick 4 ms) */
} kern_plan_req;

/* Builds the sweep for a model. SIM_EINPUT when a TP degree does not divide
 * the heads (names the field). Caller frees with kern_plan_free. */
int kern_plan_build(kern_plan *p, const kern_model_shape *m, const kern_plan_req *req, const kern_ceilings *c,
                    const kern_opts *o, sim_err *err);
void kern_plan_free(kern_plan *p);
/* Prints the plan (one line per table) and the estimated time. */
void kern_plan_print(const kern_plan *p, FILE *f);

/* ---- [gpu] context and timing ------------------------------------------------------ */

typedef struct kern_ctx kern_ctx;

typedef struct kern_time {
  double ns;          /* median over replays of time per call, ns */
  double min_ns, max_ns; /* fastest and slowest replay, per call, ns */
  uint32_t calls;     /* calls per replay (graph size) */
  uint32_t reps;      /* timed replays */
  uint32_t sets;      /* rotated input buffer sets */
  bool graph;         /* replays were CUDA graphs (false: captured launch failed, plain launches) */
} kern_time;

typedef struct kern_check {
  char name[96];   /* e.g. "gemm bf16 M=64 N=384 K=512" */
  double rel_err;  /* ||out-ref|| / ||ref|| (+inf if some output was NaN/unwritten) */
  double tol;      /* KERN_TOL_* */
  bool ok;
  char note[160];  /* why skipped / failed */
} kern_check;

int kern_open(kern_ctx **out, const kern_opts *o, sim_err *err);
void kern_close(kern_ctx *k);
const kern_device_info *kern_info(const kern_ctx *k);
/* False once a CUDA error left the context unusable (a sticky error such as an
 * illegal address): stop measuring, write what was measured. */
bool kern_usable(const kern_ctx *k);
uint64_t kern_calls(const kern_ctx *k); /* kernel calls launched by kern_time_* so far */

/* Probes. copy: cudaMemcpy device-to-device and a 16-byte-vector copy kernel
 * over 2 GiB, the faster, counting bytes read + written. launch: an empty
 * kernel, eager back-to-back launches and inside a graph replay (ns each).
 * gemm peak: cuBLASLt square GEMMs (8192^3 and, unless quick, 16384^3, each
 * timed twice), the fastest, FLOP/s; SIM_EINPUT if the dtype is unsupported. */
int kern_probe_copy(kern_ctx *k, double *Bps, sim_err *err);
int kern_probe_launch(kern_ctx *k, double *eager_ns, double *graph_ns, sim_err *err);
int kern_probe_gemm_peak(kern_ctx *k, sim_dtype dt, bool quick, double *flops, sim_err *err);

/* Whether the device runs a family with this dtype (fp8 GEMM needs compute
 * capability >= 9.0); writes why not. */
bool kern_supported(const kern_ctx *k, kern_family f, sim_dtype dt, char *why, size_t n);

/* Runs the correctness checks of one family and dtype (several shapes each,
 * fresh random inputs, outputs poisoned with NaN before each run). Fills up
 * to max checks; *n = how many. Returns SIM_OK when the checks ran (look at
 * .ok), an error when CUDA failed. A family/dtype is unlocked for timing only
 * when all its checks passed. */
int kern_check_family(kern_ctx *k, kern_family f, sim_dtype dt, kern_check *out, int max, int *n, sim_err *err);

/* Timed kernels. SIM_EINPUT: shape or dtype not supported (the sweep skips
 * the point); SIM_EINTERNAL: CUDA failed (see kern_usable). */
int kern_time_gemm(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err);
int kern_time_wq(kern_ctx *k, sim_dtype wdt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err);
int kern_time_decode(kern_ctx *k, sim_dtype kv, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                     uint32_t kv_heads, uint32_t head_dim, kern_time *t, sim_err *err);
int kern_time_prefill(kern_ctx *k, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, kern_time *t, sim_err *err);

#ifdef __cplusplus
}
#endif

#endif
