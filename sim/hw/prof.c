/* prof.c: measured cost tables ("profiles", written by `servesim calibrate`)
 * and their interpolation. Format: configs/profiles/README.md.
 *
 * Invariants after a successful load:
 *   - every table's grid is strictly increasing and every measured time is a
 *     finite positive number of ns;
 *   - every table has its speed-of-light (SOL) rates in the profile's probes
 *     (copy_Bps, peak_flops of its compute dtype), so eff = SOL / measured is
 *     defined at every measured point;
 *   - 2-D cells that were not measured (null) carry a filled efficiency: that of
 *     the nearest measured cell with a smaller second coordinate (same row),
 *     else with a smaller first coordinate (same column). calibrate skips cells
 *     over a per-call time cap, a region monotone in both axes, so every
 *     skipped cell has such a neighbour; the loader rejects a table where one
 *     does not.
 * Interpolation: log(efficiency) piecewise linear in log(coordinate)
 * (log(1 + ctx) for the prefill context, which can be 0), bilinear for 2-D
 * tables, the boundary efficiency held outside the grid; time = SOL(query) /
 * efficiency. Interpolating the log makes efficiency a power law between two
 * grid points: exact where time is flat (launch- and latency-bound small
 * calls: efficiency grows in proportion to the size) and on the bandwidth and
 * compute plateaus; plain linear interpolation of efficiency overestimates the
 * flat region by up to 25% across a 4x gap (measured on the synthetic profile:
 * decode leave-one-out p90 17.5% linear vs 5.4% log).
 * An exact measured grid point returns the measured time itself.
 * Lookups are linear scans over the tables (a profile has tens of tables;
 * the cost model memoizes per step size). Reads are thread-safe. */
#include "hw/prof.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/jsonx.h"

typedef struct gemm_tab {
  sim_dtype wdtype, adtype;
  uint32_t n, k;
  int np;
  uint32_t *m;    /* [np] tokens, increasing */
  double *ns;     /* [np] measured */
  double *lx;     /* [np] log(m) */
  double *le;     /* [np] log(efficiency), efficiency = SOL / measured */
} gemm_tab;

typedef struct attn_tab {
  bool prefill;       /* x = chunk, y = ctx; else x = batch, y = kv_len */
  sim_dtype kv_dtype; /* bf16 or fp8 (prefill: bf16) */
  uint32_t q_heads, kv_heads, head_dim;
  int nx, ny;
  uint32_t *x, *y;
  double *lx, *ly;
  double *ns;  /* [nx * ny], NAN where not measured */
  double *le; /* [nx * ny] log(efficiency), unmeasured cells filled */
} attn_tab;

struct prof {
  char gpu[64];
  char source[512];
  double copy_Bps;
  double peak[DT_COUNT];
  gemm_tab *gemm;
  int ngemm;
  attn_tab *dec;
  int ndec;
  attn_tab *pre;
  int npre;
};

/* ---- the work of one call ------------------------------------------------------- */

static bool weight_only(sim_dtype w, sim_dtype a) {
  return (w == DT_INT4 || w == DT_INT8) && (a == DT_BF16 || a == DT_FP16);
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

static double sol_ns(const prof *p, const prof_work *w) {
  double tc = w->flops / p->peak[w->compute], tm = w->bytes / p->copy_Bps;
  return (tc > tm ? tc : tm) * 1e9;
}

static double gemm_sol(const prof *p, const gemm_tab *t, double M) {
  prof_work w;
  prof_gemm_work(t->wdtype, t->adtype, (uint32_t)M, t->n, t->k, &w);
  return sol_ns(p, &w);
}

static double attn_sol(const prof *p, const attn_tab *t, uint32_t x, uint32_t y) {
  prof_work w;
  if (t->prefill) prof_prefill_work(x, y, t->q_heads, t->kv_heads, t->head_dim, &w);
  else prof_decode_work(t->kv_dtype, x, y, t->q_heads, t->kv_heads, t->head_dim, &w);
  return sol_ns(p, &w);
}

/* ---- parsing ------------------------------------------------------------------------ */

/* Reading goes through config/jsonx.h (strict keys, lines in messages); the
 * messages name the field as a path ("gemm[3].ns[2]") after the file and the
 * line of the offending node (of the enclosing table for a missing key). */
typedef struct pctx {
  const jx *j;
} pctx;

static int bad(pctx *c, const cJSON *at, const char *field, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(pctx *c, const cJSON *at, const char *field, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return jx_fail(c->j, at, field, NULL, "%s", msg);
}

/* Rejects keys not in allowed (NULL-terminated) and repeated keys. */
static int check_keys(pctx *c, const cJSON *obj, const char *field, const char *const *allowed) {
  return jx_keys(c->j, obj, *field ? field : NULL, allowed, NULL);
}

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static int get_u32(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, uint32_t *out) {
  const cJSON *v = get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return required ? bad(c, obj, f, "missing (a positive integer)") : SIM_OK;
  if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 4294967295.0 ||
      v->valuedouble != floor(v->valuedouble))
    return bad(c, v, f, "expected a positive integer");
  *out = (uint32_t)v->valuedouble;
  return SIM_OK;
}

static int get_pos(pctx *c, const cJSON *v, const char *f, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0)
    return bad(c, v, f, "expected a positive number");
  *out = v->valuedouble;
  return SIM_OK;
}

static int get_dtype(pctx *c, const cJSON *obj, const char *key, const char *field, sim_dtype *out) {
  const cJSON *v = get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return bad(c, obj, f, "missing (a dtype name: bf16, fp16, fp8, int8, int4)");
  if (!cJSON_IsString(v) || !dtype_parse(v->valuestring, out) || *out == DT_FP32)
    return bad(c, v, f, "expected a dtype name (bf16, fp16, fp8, int8, int4)");
  return SIM_OK;
}

/* A strictly increasing array of non-negative (allow_zero) or positive integers. */
static int get_grid(pctx *c, const cJSON *obj, const char *key, const char *field, bool allow_zero, uint32_t **out,
                    int *n) {
  const cJSON *v = get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return bad(c, obj, f, "missing (an increasing array of integers)");
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1) return bad(c, v, f, "expected a non-empty array of integers");
  int k = cJSON_GetArraySize(v);
  uint32_t *g = sim_malloc(sizeof *g * (size_t)k);
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (d < (allow_zero ? 0 : 1) || d > 4294967295.0 || d != floor(d) || (i && d <= g[i - 1])) {
      free(g);
      char fi[300];
      snprintf(fi, sizeof fi, "%s[%d]", f, i);
      return bad(c, e, fi, "expected a %s integer greater than the previous one", allow_zero ? "non-negative" : "positive");
    }
    g[i] = (uint32_t)d;
  }
  *out = g;
  *n = k;
  return SIM_OK;
}

static void free_attn(attn_tab *t) {
  free(t->x);
  free(t->y);
  free(t->lx);
  free(t->ly);
  free(t->ns);
  free(t->le);
}

void prof_free(prof *p) {
  if (!p) return;
  for (int i = 0; i < p->ngemm; i++) {
    free(p->gemm[i].m);
    free(p->gemm[i].ns);
    free(p->gemm[i].lx);
    free(p->gemm[i].le);
  }
  for (int i = 0; i < p->ndec; i++) free_attn(&p->dec[i]);
  for (int i = 0; i < p->npre; i++) free_attn(&p->pre[i]);
  free(p->gemm);
  free(p->dec);
  free(p->pre);
  free(p);
}

static int parse_probes(pctx *c, prof *p, const cJSON *pr) {
  static const char *const keys[] = {"copy_Bps", "memcpy_Bps", "copy_kernel_Bps", "peak_flops", "peak_shape",
                                     "launch_ns", NULL};
  if (!cJSON_IsObject(pr)) return bad(c, pr, "probes", "expected an object");
  int rc = check_keys(c, pr, "probes", keys);
  if (rc) return rc;
  const cJSON *v = get(pr, "copy_Bps");
  if (!v) return bad(c, pr, "probes.copy_Bps", "missing (device-to-device copy bandwidth, bytes read + written per s)");
  if ((rc = get_pos(c, v, "probes.copy_Bps", &p->copy_Bps))) return rc;
  const cJSON *pf = get(pr, "peak_flops");
  if (!pf) return bad(c, pr, "probes.peak_flops", "missing (object: dtype name -> FLOP/s)");
  if (!cJSON_IsObject(pf)) return bad(c, pf, "probes.peak_flops", "expected an object: dtype name -> FLOP/s");
  for (const cJSON *e = pf->child; e; e = e->next) {
    char f[256];
    snprintf(f, sizeof f, "probes.peak_flops.%s", e->string ? e->string : "?");
    sim_dtype d;
    if (!e->string || !dtype_parse(e->string, &d) || d == DT_INT4 || d == DT_FP32)
      return bad(c, e, f, "unknown dtype (expected bf16, fp16, fp8 or int8)");
    if ((rc = get_pos(c, e, f, &p->peak[d]))) return rc;
  }
  if (p->peak[DT_BF16] <= 0) return bad(c, pf, "probes.peak_flops.bf16", "missing (the bf16 GEMM peak bounds attention too)");
  if (p->peak[DT_FP16] <= 0) p->peak[DT_FP16] = p->peak[DT_BF16];
  return SIM_OK;
}

static int parse_gemm(pctx *c, prof *p, const cJSON *arr) {
  static const char *const keys[] = {"wdtype", "adtype", "n", "k", "m", "ns", "layer", "tp", "kernel", NULL};
  if (!cJSON_IsArray(arr)) return bad(c, arr, "gemm", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr);
  p->gemm = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->gemm);
  int i = 0;
  for (const cJSON *t = arr->child; t; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "gemm[%d]", i);
    if (!cJSON_IsObject(t)) return bad(c, t, f, "expected an object");
    int rc = check_keys(c, t, f, keys);
    if (rc) return rc;
    gemm_tab *g = &p->gemm[p->ngemm++];
    if ((rc = get_dtype(c, t, "wdtype", f, &g->wdtype)) || (rc = get_dtype(c, t, "adtype", f, &g->adtype)) ||
        (rc = get_u32(c, t, "n", f, true, &g->n)) || (rc = get_u32(c, t, "k", f, true, &g->k)) ||
        (rc = get_grid(c, t, "m", f, false, &g->m, &g->np)))
      return rc;
    if (g->wdtype == DT_FP16) g->wdtype = DT_BF16;
    if (g->adtype == DT_FP16) g->adtype = DT_BF16;
    const cJSON *ns = get(t, "ns");
    char fn[96];
    snprintf(fn, sizeof fn, "%s.ns", f);
    if (!ns) return bad(c, t, fn, "missing (measured ns per M)");
    if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != g->np)
      return bad(c, ns, fn, "expected an array of %d numbers (one per m)", g->np);
    g->ns = sim_malloc(sizeof(double) * (size_t)g->np);
    g->lx = sim_malloc(sizeof(double) * (size_t)g->np);
    g->le = sim_malloc(sizeof(double) * (size_t)g->np);
    prof_work w;
    prof_gemm_work(g->wdtype, g->adtype, 1, g->n, g->k, &w);
    if (p->peak[w.compute] <= 0) {
      char fp[64];
      snprintf(fp, sizeof fp, "probes.peak_flops.%s", dtype_name(w.compute));
      return bad(c, t, fp, "missing, but %s holds a %s GEMM table", f, dtype_name(w.compute));
    }
    int j = 0;
    for (const cJSON *e = ns->child; e; e = e->next, j++) {
      char fe[128];
      snprintf(fe, sizeof fe, "%s[%d]", fn, j);
      if ((rc = get_pos(c, e, fe, &g->ns[j]))) return rc;
      g->lx[j] = log((double)g->m[j]);
      g->le[j] = log(gemm_sol(p, g, g->m[j]) / g->ns[j]);
    }
    for (int q = 0; q + 1 < p->ngemm; q++) {
      gemm_tab *o = &p->gemm[q];
      if (o->wdtype == g->wdtype && o->adtype == g->adtype && o->n == g->n && o->k == g->k)
        return bad(c, t, f, "duplicate table for %s/%s N=%u K=%u (also gemm[%d])", dtype_name(g->wdtype),
                   dtype_name(g->adtype), g->n, g->k, q);
    }
  }
  return SIM_OK;
}

/* Fills unmeasured cells (see the file comment). */
static int fill_attn(pctx *c, const cJSON *at, const char *f, attn_tab *t) {
  for (int i = 0; i < t->nx; i++)
    for (int j = 0; j < t->ny; j++) {
      double *e = &t->le[i * t->ny + j];
      if (!isnan(t->ns[i * t->ny + j])) continue;
      *e = NAN;
      for (int jj = j - 1; jj >= 0 && isnan(*e); jj--)
        if (!isnan(t->ns[i * t->ny + jj])) *e = t->le[i * t->ny + jj];
      for (int ii = i - 1; ii >= 0 && isnan(*e); ii--)
        if (!isnan(t->ns[ii * t->ny + j])) *e = t->le[ii * t->ny + j];
      if (isnan(*e))
        return bad(c, at, f,
                   "cell ns[%d][%d] is null and no measured cell precedes it in its row or column "
                   "(the efficiency to hold is unknown)",
                   i, j);
    }
  return SIM_OK;
}

static int parse_attn(pctx *c, prof *p, const cJSON *arr, bool prefill) {
  static const char *const dkeys[] = {"kv_dtype", "q_heads", "kv_heads", "head_dim", "block_size", "tp", "kernel",
                                      "batch",    "kv_len",  "ns",       NULL};
  static const char *const pkeys[] = {"dtype", "q_heads", "kv_heads", "head_dim", "block_size", "tp",
                                      "kernel", "chunk",  "ctx",      "ns",       NULL};
  const char *name = prefill ? "attn_prefill" : "attn_decode";
  if (!cJSON_IsArray(arr)) return bad(c, arr, name, "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr);
  attn_tab *tabs = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *tabs);
  int *ntabs = prefill ? &p->npre : &p->ndec;
  if (prefill) p->pre = tabs;
  else p->dec = tabs;
  int i = 0;
  for (const cJSON *t = arr->child; t; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "%s[%d]", name, i);
    if (!cJSON_IsObject(t)) return bad(c, t, f, "expected an object");
    int rc = check_keys(c, t, f, prefill ? pkeys : dkeys);
    if (rc) return rc;
    attn_tab *a = &tabs[(*ntabs)++];
    a->prefill = prefill;
    a->kv_dtype = DT_BF16;
    if (!prefill) {
      if ((rc = get_dtype(c, t, "kv_dtype", f, &a->kv_dtype))) return rc;
    } else if (get(t, "dtype") && (rc = get_dtype(c, t, "dtype", f, &a->kv_dtype))) {
      return rc;
    }
    if (a->kv_dtype == DT_FP16) a->kv_dtype = DT_BF16;
    char fd[96];
    snprintf(fd, sizeof fd, "%s.%s", f, prefill ? "dtype" : "kv_dtype");
    if (a->kv_dtype != DT_BF16 && (prefill || a->kv_dtype != DT_FP8))
      return bad(c, get(t, prefill ? "dtype" : "kv_dtype"), fd, "expected %s", prefill ? "bf16" : "bf16 or fp8");
    uint32_t bs = 16;
    if ((rc = get_u32(c, t, "q_heads", f, true, &a->q_heads)) || (rc = get_u32(c, t, "kv_heads", f, true, &a->kv_heads)) ||
        (rc = get_u32(c, t, "head_dim", f, true, &a->head_dim)) || (rc = get_u32(c, t, "block_size", f, false, &bs)) ||
        (rc = get_grid(c, t, prefill ? "chunk" : "batch", f, false, &a->x, &a->nx)) ||
        (rc = get_grid(c, t, prefill ? "ctx" : "kv_len", f, prefill, &a->y, &a->ny)))
      return rc;
    if (a->q_heads % a->kv_heads) {
      char fq[96];
      snprintf(fq, sizeof fq, "%s.q_heads", f);
      return bad(c, get(t, "q_heads"), fq, "%u is not a multiple of kv_heads %u", a->q_heads, a->kv_heads);
    }
    const cJSON *ns = get(t, "ns");
    char fn[96];
    snprintf(fn, sizeof fn, "%s.ns", f);
    if (!ns) return bad(c, t, fn, "missing (rows of measured ns, one row per %s)", prefill ? "chunk" : "batch");
    if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != a->nx)
      return bad(c, ns, fn, "expected %d rows (one per %s)", a->nx, prefill ? "chunk" : "batch");
    size_t cells = (size_t)a->nx * (size_t)a->ny;
    a->ns = sim_malloc(sizeof(double) * cells);
    a->le = sim_malloc(sizeof(double) * cells);
    a->lx = sim_malloc(sizeof(double) * (size_t)a->nx);
    a->ly = sim_malloc(sizeof(double) * (size_t)a->ny);
    for (int x = 0; x < a->nx; x++) a->lx[x] = log((double)a->x[x]);
    for (int y = 0; y < a->ny; y++) a->ly[y] = prefill ? log(1.0 + a->y[y]) : log((double)a->y[y]);
    int x = 0, measured = 0;
    for (const cJSON *row = ns->child; row; row = row->next, x++) {
      char fr[128];
      snprintf(fr, sizeof fr, "%s[%d]", fn, x);
      if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != a->ny)
        return bad(c, row, fr, "expected %d values (one per %s; null = not measured)", a->ny, prefill ? "ctx" : "kv_len");
      int y = 0;
      for (const cJSON *e = row->child; e; e = e->next, y++) {
        char fe[160];
        snprintf(fe, sizeof fe, "%s[%d]", fr, y);
        double *v = &a->ns[(size_t)x * a->ny + y];
        if (cJSON_IsNull(e)) {
          *v = NAN;
          continue;
        }
        if ((rc = get_pos(c, e, fe, v))) return rc;
        a->le[(size_t)x * a->ny + y] = log(attn_sol(p, a, a->x[x], a->y[y]) / *v);
        measured++;
      }
    }
    if (!measured) return bad(c, ns, fn, "no measured value");
    if ((rc = fill_attn(c, ns, fn, a))) return rc;
    for (int q = 0; q + 1 < *ntabs; q++) {
      attn_tab *o = &tabs[q];
      if (o->kv_dtype == a->kv_dtype && o->q_heads == a->q_heads && o->kv_heads == a->kv_heads &&
          o->head_dim == a->head_dim)
        return bad(c, t, f, "duplicate table for heads %u/%u d%u (also %s[%d])", a->q_heads, a->kv_heads, a->head_dim,
                   name, q);
    }
  }
  return SIM_OK;
}

int prof_parse(prof **out, const char *json, const char *what, sim_err *err) {
  *out = NULL;
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  pctx c = {&j};
  const cJSON *root = j.root, *v;
  prof *p = sim_calloc(1, sizeof *p);
  snprintf(p->source, sizeof p->source, "%s", what);
  static const char *const keys[] = {"format", "version",  "gpu",    "device",      "date",         "model",
                                     "servesim_version", "command", "settings", "units", "probes",
                                     "gemm",   "attn_decode", "attn_prefill", "checks", "notes", "complete",
                                     "summary", NULL};
  if ((rc = check_keys(&c, root, "", keys))) goto done;
  v = get(root, "format");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "servesim-profile")) {
    rc = bad(&c, v, "format", "expected \"servesim-profile\"");
    goto done;
  }
  v = get(root, "version");
  if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
    rc = bad(&c, v, "version", "expected 1 (this servesim reads profile format version 1)");
    goto done;
  }
  v = get(root, "gpu");
  if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof p->gpu) {
    rc = bad(&c, v, "gpu", "expected the gpu config name the profile was measured on (e.g. \"h200\")");
    goto done;
  }
  snprintf(p->gpu, sizeof p->gpu, "%s", v->valuestring);
  v = get(root, "probes");
  if (!v) {
    rc = bad(&c, NULL, "probes", "missing (copy_Bps and peak_flops)");
    goto done;
  }
  if ((rc = parse_probes(&c, p, v))) goto done;
  if ((v = get(root, "gemm")) && (rc = parse_gemm(&c, p, v))) goto done;
  if ((v = get(root, "attn_decode")) && (rc = parse_attn(&c, p, v, false))) goto done;
  if ((v = get(root, "attn_prefill")) && (rc = parse_attn(&c, p, v, true))) goto done;
done:
  jx_free(&j);
  if (rc) {
    prof_free(p);
    return rc;
  }
  *out = p;
  return SIM_OK;
}

int prof_load(prof **out, const char *path, sim_err *err) {
  *out = NULL;
  char *text;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  rc = prof_parse(out, text, path, err);
  free(text);
  return rc;
}

const char *prof_gpu_name(const prof *p) { return p ? p->gpu : ""; }
const char *prof_source(const prof *p) { return p ? p->source : ""; }
double prof_copy_Bps(const prof *p) { return p->copy_Bps; }
double prof_peak_flops(const prof *p, sim_dtype d) { return (unsigned)d < DT_COUNT ? p->peak[d] : 0; }

int prof_table_count(const prof *p, prof_kind k) {
  int n = 0;
  switch (k) {
    case PK_GEMM:
    case PK_GEMM_WQ:
      for (int i = 0; i < p->ngemm; i++) n += weight_only(p->gemm[i].wdtype, p->gemm[i].adtype) == (k == PK_GEMM_WQ);
      return n;
    case PK_DECODE: return p->ndec;
    case PK_PREFILL: return p->npre;
    default: return 0;
  }
}

/* ---- interpolation ------------------------------------------------------------------ */

/* Value at u on a 1-D grid lx[0..n) (increasing) with values e[] (log
 * efficiencies), linear between points; the stride lets a 2-D table's row or
 * column be read in place. Holds the boundary outside. */
static double interp1(const double *lx, const double *e, size_t stride, int n, double u) {
  if (n == 1 || u <= lx[0]) return e[0];
  if (u >= lx[n - 1]) return e[(size_t)(n - 1) * stride];
  int i = 0;
  while (i + 2 < n && u > lx[i + 1]) i++;
  double f = (u - lx[i]) / (lx[i + 1] - lx[i]);
  return e[(size_t)i * stride] * (1 - f) + e[(size_t)(i + 1) * stride] * f;
}

/* Bracketing index and weight of u on grid lx (clamped). */
static void bracket(const double *lx, int n, double u, int *i, double *f) {
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
  int k = 0;
  while (k + 2 < n && u > lx[k + 1]) k++;
  *i = k;
  *f = (u - lx[k]) / (lx[k + 1] - lx[k]);
}

/* log(efficiency) at (u, v), bilinear. */
static double attn_le(const attn_tab *t, double u, double v) {
  int i, j;
  double fx, fy;
  bracket(t->lx, t->nx, u, &i, &fx);
  bracket(t->ly, t->ny, v, &j, &fy);
  int i1 = t->nx > 1 ? i + 1 : i, j1 = t->ny > 1 ? j + 1 : j;
  const double *e = t->le;
  size_t ny = (size_t)t->ny;
  double a = e[i * ny + j] * (1 - fy) + e[i * ny + j1] * fy;
  double b = e[i1 * ny + j] * (1 - fy) + e[i1 * ny + j1] * fy;
  return a * (1 - fx) + b * fx;
}

static const gemm_tab *find_gemm(const prof *p, sim_dtype w, sim_dtype a, uint32_t N, uint32_t K) {
  for (int i = 0; i < p->ngemm; i++) {
    const gemm_tab *g = &p->gemm[i];
    if (g->wdtype == w && g->adtype == a && g->n == N && g->k == K) return g;
  }
  return NULL;
}

bool prof_gemm_ns(const prof *p, sim_dtype wdtype, sim_dtype adtype, uint32_t M, uint32_t N, uint32_t K,
                  double *ns) {
  if (!p || M == 0) return false;
  if (wdtype == DT_FP16) wdtype = DT_BF16;
  if (adtype == DT_FP16) adtype = DT_BF16;
  const gemm_tab *g = find_gemm(p, wdtype, adtype, N, K);
  /* FP8 weights with 16-bit activations: on Hopper vLLM quantizes the
   * activations to FP8 per step and runs the FP8 GEMM */
  if (!g && wdtype == DT_FP8 && adtype != DT_FP8) g = find_gemm(p, DT_FP8, DT_FP8, N, K);
  if (!g) return false;
  for (int i = 0; i < g->np; i++)
    if (g->m[i] == M) {
      *ns = g->ns[i];
      return true;
    }
  double eff = exp(interp1(g->lx, g->le, 1, g->np, log((double)M)));
  *ns = gemm_sol(p, g, M) / eff;
  return true;
}

static const attn_tab *find_attn(const attn_tab *tabs, int n, sim_dtype kv, uint32_t qh, uint32_t kvh, uint32_t hd) {
  for (int i = 0; i < n; i++)
    if (tabs[i].kv_dtype == kv && tabs[i].q_heads == qh && tabs[i].kv_heads == kvh && tabs[i].head_dim == hd)
      return &tabs[i];
  return NULL;
}

static bool attn_lookup(const prof *p, const attn_tab *t, uint32_t x, uint32_t y, double *ns) {
  for (int i = 0; i < t->nx; i++)
    if (t->x[i] == x)
      for (int j = 0; j < t->ny; j++)
        if (t->y[j] == y && !isnan(t->ns[i * t->ny + j])) {
          *ns = t->ns[i * t->ny + j];
          return true;
        }
  double u = log((double)x), v = t->prefill ? log(1.0 + y) : log((double)y);
  *ns = attn_sol(p, t, x, y) / exp(attn_le(t, u, v));
  return true;
}

bool prof_attn_decode_ns(const prof *p, sim_dtype kv_dtype, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                         uint32_t kv_heads, uint32_t head_dim, double *ns) {
  if (!p || batch == 0) return false;
  if (kv_dtype == DT_FP16) kv_dtype = DT_BF16;
  const attn_tab *t = find_attn(p->dec, p->ndec, kv_dtype, q_heads, kv_heads, head_dim);
  if (!t) return false;
  return attn_lookup(p, t, batch, kv_len ? kv_len : 1, ns);
}

bool prof_attn_prefill_ns(const prof *p, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                          uint32_t head_dim, double *ns) {
  if (!p || chunk == 0) return false;
  const attn_tab *t = find_attn(p->pre, p->npre, DT_BF16, q_heads, kv_heads, head_dim);
  if (!t) return false;
  return attn_lookup(p, t, chunk, ctx, ns);
}

/* ---- leave-one-out ---------------------------------------------------------------- */

static const char *const kind_names[PK_COUNT] = {"gemm", "gemm_wq", "attn_decode", "attn_prefill"};
const char *prof_kind_name(prof_kind k) { return (unsigned)k < PK_COUNT ? kind_names[k] : "?"; }

typedef struct errs {
  double *v;
  size_t n, cap;
} errs;

static void push(errs *e, double x) {
  SIM_GROW(e->v, e->cap, e->n + 1);
  e->v[e->n++] = x;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* log(efficiency) at index i of a 1-D series predicted without it: linear in
 * the log coordinate between the nearest measured neighbours, the nearer one
 * held at the ends (*inner false). meas[k] false = not measured. Returns NAN
 * if no neighbour. */
static double loo1(const double *lx, const double *e, const bool *meas, size_t stride, int n, int i, bool *inner) {
  int lo = -1, hi = -1;
  for (int k = i - 1; k >= 0; k--)
    if (!meas || meas[(size_t)k * stride]) {
      lo = k;
      break;
    }
  for (int k = i + 1; k < n; k++)
    if (!meas || meas[(size_t)k * stride]) {
      hi = k;
      break;
    }
  *inner = lo >= 0 && hi >= 0;
  if (lo < 0 && hi < 0) return NAN;
  if (lo < 0) return e[(size_t)hi * stride];
  if (hi < 0) return e[(size_t)lo * stride];
  double f = (lx[i] - lx[lo]) / (lx[hi] - lx[lo]);
  return e[(size_t)lo * stride] * (1 - f) + e[(size_t)hi * stride] * f;
}

void prof_loo_error(const prof *p, prof_loo *out) {
  memset(out, 0, sizeof *out);
  errs e[PK_COUNT];
  memset(e, 0, sizeof e);
  for (int t = 0; t < p->ngemm; t++) {
    const gemm_tab *g = &p->gemm[t];
    prof_kind k = weight_only(g->wdtype, g->adtype) ? PK_GEMM_WQ : PK_GEMM;
    for (int i = 0; g->np > 1 && i < g->np; i++) {
      bool inner;
      double eff = loo1(g->lx, g->le, NULL, 1, g->np, i, &inner);
      double pred = gemm_sol(p, g, g->m[i]) / exp(eff);
      push(&e[k], fabs(pred - g->ns[i]) / g->ns[i]);
    }
  }
  for (int pass = 0; pass < 2; pass++) {
    const attn_tab *tabs = pass ? p->pre : p->dec;
    int nt = pass ? p->npre : p->ndec;
    prof_kind k = pass ? PK_PREFILL : PK_DECODE;
    for (int t = 0; t < nt; t++) {
      const attn_tab *a = &tabs[t];
      size_t ny = (size_t)a->ny, cells = (size_t)a->nx * ny;
      bool *meas = sim_malloc(cells);
      for (size_t c = 0; c < cells; c++) meas[c] = !isnan(a->ns[c]);
      for (int i = 0; i < a->nx; i++)
        for (int j = 0; j < a->ny; j++) {
          if (!meas[i * ny + j]) continue;
          /* along x: column j; along y: row i */
          bool ix, iy;
          double ex = loo1(a->lx, a->le + j, meas + j, ny, a->nx, i, &ix);
          double ey = loo1(a->ly, a->le + i * ny, meas + i * ny, 1, a->ny, j, &iy);
          /* an interpolation (point bracketed along that axis) beats a held boundary */
          if (ix && !iy) ey = NAN;
          if (iy && !ix) ex = NAN;
          double eff = isnan(ex) ? ey : isnan(ey) ? ex : 0.5 * (ex + ey);
          if (isnan(eff)) continue;
          double pred = attn_sol(p, a, a->x[i], a->y[j]) / exp(eff), m = a->ns[i * ny + j];
          push(&e[k], fabs(pred - m) / m);
        }
      free(meas);
    }
  }
  for (int k = 0; k < PK_COUNT; k++) {
    size_t n = e[k].n;
    out->n[k] = (uint32_t)n;
    if (n) {
      qsort(e[k].v, n, sizeof(double), cmp_double);
      out->median[k] = n % 2 ? e[k].v[n / 2] : 0.5 * (e[k].v[n / 2 - 1] + e[k].v[n / 2]);
      double r = 0.9 * (double)(n - 1);
      size_t lo = (size_t)r;
      double f = r - (double)lo;
      out->p90[k] = lo + 1 < n ? e[k].v[lo] * (1 - f) + e[k].v[lo + 1] * f : e[k].v[lo];
      out->max[k] = e[k].v[n - 1];
    }
    free(e[k].v);
  }
}
