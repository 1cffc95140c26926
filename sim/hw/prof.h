/* prof.h: measured per-operation cost tables ("profiles") and their
 * interpolation. A profile is produced by `servesim calibrate` on a real GPU
 * (kernels/) and stored as JSON under configs/profiles/.
 *
 * Queries return true and the time in ns when the profile has a table for the
 * operation (dtype, N, K or head layout); false means "no data": the cost
 * model then falls back (another GPU's profile scaled, then the roofline).
 * Inside a table's grid the result interpolates efficiency (achieved / speed
 * of light, from the profile's own probes) between measured points; outside
 * the grid it holds the boundary efficiency. An exact grid point returns the
 * measured value. (prof.c: log(efficiency) is interpolated linearly in the log
 * of the coordinates, bilinearly for attention tables.)
 * Dtypes: fp16 is looked up as bf16 (same tensor-core rate). GEMM tables are
 * keyed by (weights, activations): bf16/bf16, fp8/fp8 and int8/int8 come from
 * cuBLASLt, int4/bf16 and int8/bf16 from our weight-only kernel (measured for
 * M 1..64, held beyond); an fp8-weight query with 16-bit activations uses the
 * fp8/fp8 table when it has no table of its own (vLLM on Hopper quantizes the
 * activations to fp8 per step).
 *
 * Ownership: prof_load allocates, prof_free releases. Thread-safe for reads. */
#ifndef SIM_PROF_H
#define SIM_PROF_H

#include "core/common.h"
#include "core/dtype.h"

typedef struct prof prof;

int prof_load(prof **out, const char *path, sim_err *err);
int prof_parse(prof **out, const char *json, const char *what, sim_err *err);
void prof_free(prof *p);

const char *prof_gpu_name(const prof *p);   /* e.g. "h200" (the gpu config it was measured on) */
const char *prof_source(const prof *p);     /* path / description for reports */

/* GEMM C[M,N] = A[M,K] x W[K,N]^T with weights in wdtype, activations in adtype. */
bool prof_gemm_ns(const prof *p, sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K,
                  double *ns);
/* Paged decode attention, one layer on one GPU: `batch` sequences each attending
 * to `kv_len` cached tokens; q_heads/kv_heads are per GPU. */
bool prof_attn_decode_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                         uint32_t kv_heads, uint32_t head_dim, double *ns);
/* Prefill attention, one layer on one GPU: `chunk` new tokens attending to
 * `ctx` cached tokens and causally to themselves. */
bool prof_attn_prefill_ns(const prof *p, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                          uint32_t head_dim, double *ns);

/* ---- additions of the calibration work (the contract above is unchanged) ----
 *
 * The work of one call as the speed-of-light (SOL) counts it: flops, the
 * fewest bytes moved through device memory (each input read once, each output
 * written once) and the dtype whose peak rate bounds the arithmetic.
 * SOL time = max(flops / peak_flops[compute], bytes / copy_Bps) with the
 * profile's own probes. Efficiency = SOL time / measured time. */
typedef struct prof_work {
  double flops;      /* FLOP (multiply-add = 2) */
  double bytes;      /* bytes read + written */
  sim_dtype compute; /* DT_BF16 (bf16/fp16 and weight-only), DT_FP8 or DT_INT8 */
} prof_work;
void prof_gemm_work(sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K, prof_work *w);
void prof_decode_work(sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, prof_work *w);
void prof_prefill_work(uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim,
                       prof_work *w);

/* Probes recorded in the profile. */
double prof_copy_Bps(const prof *p);               /* bytes read + written per s */
double prof_peak_flops(const prof *p, sim_dtype d); /* FLOP/s, 0 when not measured */

/* Leave-one-out accuracy: every measured grid point is predicted from the
 * others by the same interpolation (a 1-D table without the point, holding the
 * boundary efficiency at the ends; a 2-D table by the 1-D prediction along
 * each axis with the point left out, the mean of those that interpolate
 * between two measured neighbours, else the mean of the held boundaries) and
 * |predicted - measured| / measured is collected per table kind. */
typedef enum prof_kind { PK_GEMM = 0, PK_GEMM_WQ, PK_DECODE, PK_PREFILL, PK_COUNT } prof_kind;
typedef struct prof_loo {
  uint32_t n[PK_COUNT];        /* points predicted */
  double median[PK_COUNT];     /* median relative error (0 when n == 0) */
  double p90[PK_COUNT];        /* 90th percentile relative error */
  double max[PK_COUNT];        /* largest relative error */
} prof_loo;
const char *prof_kind_name(prof_kind k); /* "gemm", "gemm_wq", "attn_decode", "attn_prefill" */
void prof_loo_error(const prof *p, prof_loo *out);
/* Number of tables of a kind. */
int prof_table_count(const prof *p, prof_kind k);

#endif
