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
 * measured value.
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

#endif
