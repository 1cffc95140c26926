/* prof_work.c: the work of one call as the speed of light counts it (the
 * public prof_*_work of prof.h and the SOL times of a profile's probes), and
 * the interpolation helpers every table kind shares (prof_impl.h). A leaf:
 * prof.c and the table modules call it; it calls none of them. */
#include <math.h>

#include "hw/prof_impl.h"

/* ---- the work of one call ------------------------------------------------------- */

static bool weight_only(sim_dtype w, sim_dtype a) {
  return (w == DT_INT4 || w == DT_INT8 || w == DT_FP4) && (a == DT_BF16 || a == DT_FP16);
}

void prof_gemm_work(sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K, prof_work *w) {
  double m = M, n = N, k = K;
  w->flops = 2 * m * n * k;
  if (weight_only(wdtype, adtype)) {
    /* dequantized into 16-bit MMAs; one 16-bit scale per 128 weights */
    w->compute = DT_BF16;
    w->bytes = m * k * 2 + n * k * dtype_bytes(wdtype) + n * (k / 128) * 2 + m * n * 2;
  } else if (wdtype == DT_INT8) {
    w->compute = DT_INT8; /* int8 x int8 -> int32 */
    w->bytes = m * k + n * k + m * n * 4;
  } else if (wdtype == DT_FP8) {
    w->compute = DT_FP8; /* e4m3 x e4m3 -> bf16 */
    w->bytes = m * k * dtype_bytes(adtype) + n * k + m * n * 2;
  } else if (wdtype == DT_FP4) {
    w->compute = DT_FP4; /* nvfp4 x nvfp4 (block scales) -> bf16 */
    w->bytes = (m * k + n * k) * dtype_weight_bytes(DT_FP4) + m * n * 2;
  } else {
    w->compute = DT_BF16;
    w->bytes = (m * k + n * k + m * n) * 2;
  }
}

void prof_decode_work(sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, prof_work *w) {
  double b = batch, l = kv_len, hd = head_dim;
  w->compute = DT_BF16;
  w->flops = 4 * b * l * q_heads * hd;
  w->bytes = b * l * kv_heads * hd * 2 * dtype_bytes(kv_dtype) /* K and V */
             + 2 * b * q_heads * hd * 2                        /* Q in, O out */
             + b * ceil(l / 16) * 4;                           /* block table */
}

void prof_prefill_work(uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim,
                       prof_work *w) {
  double c = chunk, x = ctx, hd = head_dim;
  w->compute = DT_BF16;
  /* token i of the chunk attends to ctx + i + 1 tokens */
  w->flops = 4 * q_heads * hd * (c * x + c * (c + 1) / 2);
  w->bytes = (x + c) * kv_heads * hd * 2 * 2 + 2 * c * q_heads * hd * 2;
}

void prof_context_work(sim_dtype kv_dtype, uint32_t batch, uint32_t isl, uint32_t q_heads, uint32_t kv_heads,
                       uint32_t head_dim, prof_work *w) {
  double b = batch, s = isl, hd = head_dim;
  w->compute = DT_BF16;
  w->flops = 4 * q_heads * hd * b * s * (s + 1) / 2;
  w->bytes = b * s * (2 * q_heads * hd * 2 + 2 * kv_heads * hd * 2 + 2 * kv_heads * hd * dtype_bytes(kv_dtype));
}

double prof__sol_ns(const prof *p, const prof_work *w) {
  double tc = w->flops / p->peak[w->compute], tm = w->bytes / p->copy_Bps;
  return (tc > tm ? tc : tm) * 1e9;
}

double prof__gemm_sol(const prof *p, sim_dtype w, sim_dtype a, double M, double N, double K) {
  prof_work wk;
  prof_gemm_work(w, a, (uint32_t)M, (uint32_t)N, (uint32_t)K, &wk);
  return prof__sol_ns(p, &wk);
}

double prof__attn_sol(const prof *p, attn_kind kind, sim_dtype kv, uint32_t qh, uint32_t kvh, uint32_t hd, uint32_t x,
                      uint32_t y, uint32_t window) {
  prof_work w;
  switch (kind) {
    case AK_PREFILL: prof_prefill_work(x, y, qh, kvh, hd, &w); break;
    case AK_CONTEXT:
      prof_context_work(kv, x, y, qh, kvh, hd, &w);
      if (window && y > window) { /* query-key pairs: W (W + 1) / 2 for the first W tokens, then W each */
        double W = window, pairs = W * (W + 1) / 2 + ((double)y - W) * W;
        w.flops = 4.0 * qh * hd * (double)x * pairs;
      }
      break;
    default: prof_decode_work(kv, x, window && y > window ? window : y, qh, kvh, hd, &w); break;
  }
  return prof__sol_ns(p, &w);
}

/* ---- interpolation helpers --------------------------------------------------------- */

void prof__bracket(const double *lx, int n, double u, int *i, double *f) {
  if (n == 1 || u <= lx[0]) {
    *i = 0;
    *f = 0;
    return;
  }
  if (u >= lx[n - 1]) {
    *i = n - 2;
    *f = 1;
    return;
  }
  int lo = 0, hi = n - 1; /* lx[lo] < u < lx[hi] */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (lx[mid] <= u) lo = mid;
    else hi = mid;
  }
  *i = lo;
  *f = (u - lx[lo]) / (lx[lo + 1] - lx[lo]);
}

int prof__find_u32(const uint32_t *a, int n, uint32_t v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && a[lo] == v ? lo : -1;
}
