/* prof.c: loading a profile (format: configs/profiles/README.md), its probes,
 * the work of one call as the speed of light counts it, and the helpers the
 * table modules share (hw/prof_impl.h). The tables themselves are read and
 * interpolated by prof_gemm.c, prof_attn.c and prof_ar.c.
 *
 * Version 1 files are read exactly as before version 2 existed: the same keys
 * (a version 2 key in a version 1 file is an unknown key), exact head-layout
 * matching. Version 2 adds the engine, its version, the data's attribution
 * and origin (required together for tables imported from the kernel
 * database), GEMM grids, context attention and all-reduce tables.
 *
 * Interpolation (all table kinds): log(efficiency) piecewise linear in
 * log(coordinate) (log(1 + ctx) for the prefill context, which can be 0),
 * bilinear for 2-D and trilinear for 3-D tables, the boundary efficiency held
 * outside the grid; time = SOL(query) / efficiency. Interpolating the log
 * makes efficiency a power law between two grid points: exact where time is
 * flat (launch- and latency-bound small calls: efficiency grows in proportion
 * to the size) and on the bandwidth and compute plateaus; plain linear
 * interpolation of efficiency overestimates the flat region by up to 25%
 * across a 4x gap (measured on the synthetic profile: decode leave-one-out
 * p90 17.5% linear vs 5.4% log). An exact measured grid point returns the
 * measured time itself. */
#include "hw/prof_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- reading helpers --------------------------------------------------------------- */

int prof__bad(pctx *c, const cJSON *at, const char *field, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return jx_fail(c->j, at, field, NULL, "%s", msg);
}

/* Rejects keys not in allowed (NULL-terminated) and repeated keys. */
int prof__keys(pctx *c, const cJSON *obj, const char *field, const char *const *allowed) {
  return jx_keys(c->j, obj, *field ? field : NULL, allowed, NULL);
}

const cJSON *prof__get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

int prof__u32(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, uint32_t *out) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return required ? prof__bad(c, obj, f, "missing (a positive integer)") : SIM_OK;
  if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 4294967295.0 ||
      v->valuedouble != floor(v->valuedouble))
    return prof__bad(c, v, f, "expected a positive integer");
  *out = (uint32_t)v->valuedouble;
  return SIM_OK;
}

int prof__pos(pctx *c, const cJSON *v, const char *f, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble <= 0)
    return prof__bad(c, v, f, "expected a positive number");
  *out = v->valuedouble;
  return SIM_OK;
}

int prof__dtype(pctx *c, const cJSON *obj, const char *key, const char *field, sim_dtype *out) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return prof__bad(c, obj, f, "missing (a dtype name: bf16, fp16, fp8, int8, int4, fp4)");
  if (!cJSON_IsString(v) || !dtype_parse(v->valuestring, out) || *out == DT_FP32)
    return prof__bad(c, v, f, "expected a dtype name (bf16, fp16, fp8, int8, int4, fp4)");
  return SIM_OK;
}

int prof__str(pctx *c, const cJSON *obj, const char *key, const char *field, bool required, char *out, size_t n) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s%s%s", field, *field ? "." : "", key);
  if (!v) return required ? prof__bad(c, obj, f, "missing (a non-empty string)") : SIM_OK;
  if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= n)
    return prof__bad(c, v, f, "expected a non-empty string shorter than %zu bytes", n);
  snprintf(out, n, "%s", v->valuestring);
  return SIM_OK;
}

int prof__grid(pctx *c, const cJSON *obj, const char *key, const char *field, bool allow_zero, uint32_t **out, int *n) {
  const cJSON *v = prof__get(obj, key);
  char f[256];
  snprintf(f, sizeof f, "%s.%s", field, key);
  if (!v) return prof__bad(c, obj, f, "missing (an increasing array of integers)");
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
    return prof__bad(c, v, f, "expected a non-empty array of integers");
  int k = cJSON_GetArraySize(v);
  uint32_t *g = sim_malloc(sizeof *g * (size_t)k);
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (d < (allow_zero ? 0 : 1) || d > 4294967295.0 || d != floor(d) || (i && d <= g[i - 1])) {
      free(g);
      char fi[300];
      snprintf(fi, sizeof fi, "%s[%d]", f, i);
      return prof__bad(c, e, fi, "expected a %s integer greater than the previous one",
                       allow_zero ? "non-negative" : "positive");
    }
    g[i] = (uint32_t)d;
  }
  *out = g;
  *n = k;
  return SIM_OK;
}

int prof__need_peak(pctx *c, const prof *p, const cJSON *at, const char *table, sim_dtype compute) {
  if (p->peak[compute] > 0) return SIM_OK;
  char fp[64];
  snprintf(fp, sizeof fp, "probes.peak_flops.%s", dtype_name(compute));
  return prof__bad(c, at, fp, "missing, but %s holds a %s GEMM table", table, dtype_name(compute));
}

/* ---- the document ------------------------------------------------------------------ */

void prof_free(prof *p) {
  if (!p) return;
  prof__free_tables(p);
  prof__free_moe(p);
  prof__free_mla(p);
  free(p);
}

static int parse_probes(pctx *c, prof *p, const cJSON *pr) {
  static const char *const keys[] = {"copy_Bps", "memcpy_Bps", "copy_kernel_Bps", "peak_flops", "peak_shape",
                                     "launch_ns", NULL};
  if (!cJSON_IsObject(pr)) return prof__bad(c, pr, "probes", "expected an object");
  int rc = prof__keys(c, pr, "probes", keys);
  if (rc) return rc;
  const cJSON *v = prof__get(pr, "copy_Bps");
  if (!v)
    return prof__bad(c, pr, "probes.copy_Bps", "missing (device-to-device copy bandwidth, bytes read + written per s)");
  if ((rc = prof__pos(c, v, "probes.copy_Bps", &p->copy_Bps))) return rc;
  const cJSON *pf = prof__get(pr, "peak_flops");
  if (!pf) return prof__bad(c, pr, "probes.peak_flops", "missing (object: dtype name -> FLOP/s)");
  if (!cJSON_IsObject(pf)) return prof__bad(c, pf, "probes.peak_flops", "expected an object: dtype name -> FLOP/s");
  for (const cJSON *e = pf->child; e; e = e->next) {
    char f[256];
    snprintf(f, sizeof f, "probes.peak_flops.%s", e->string ? e->string : "?");
    sim_dtype d;
    if (!e->string || !dtype_parse(e->string, &d) || d == DT_INT4 || d == DT_FP32)
      return prof__bad(c, e, f, "unknown dtype (expected bf16, fp16, fp8, int8 or fp4)");
    if ((rc = prof__pos(c, e, f, &p->peak[d]))) return rc;
  }
  if (p->peak[DT_BF16] <= 0)
    return prof__bad(c, pf, "probes.peak_flops.bf16", "missing (the bf16 GEMM peak bounds attention too)");
  if (p->peak[DT_FP16] <= 0) p->peak[DT_FP16] = p->peak[DT_BF16];
  return SIM_OK;
}

/* Version 2 header: engine, provenance and, for imported tables, the
 * kernel_db record and the attribution it requires. */
static int parse_v2_header(pctx *c, prof *p, const cJSON *root) {
  int rc;
  if ((rc = prof__str(c, root, "engine", "", false, p->engine, sizeof p->engine)) ||
      (rc = prof__str(c, root, "engine_version", "", false, p->engine_version, sizeof p->engine_version)) ||
      (rc = prof__str(c, root, "attribution", "", false, p->attribution, sizeof p->attribution)))
    return rc;
  const cJSON *ps = prof__get(root, "probes_source");
  if (ps && (!cJSON_IsString(ps) || (strcmp(ps->valuestring, "measured") && strcmp(ps->valuestring, "datasheet"))))
    return prof__bad(c, ps, "probes_source", "expected \"measured\" or \"datasheet\"");
  const cJSON *kd = prof__get(root, "kernel_db");
  if (!kd) return SIM_OK;
  static const char *const keys[] = {"repository", "commit", "gpu_dir", "framework_dir", "nccl_dir", NULL};
  if (!cJSON_IsObject(kd)) return prof__bad(c, kd, "kernel_db", "expected an object");
  if ((rc = prof__keys(c, kd, "kernel_db", keys))) return rc;
  char commit[64] = "", gpu_dir[64] = "", fw[64] = "", repo[128] = "", nccl[64] = "";
  if ((rc = prof__str(c, kd, "repository", "kernel_db", true, repo, sizeof repo)) ||
      (rc = prof__str(c, kd, "commit", "kernel_db", true, commit, sizeof commit)) ||
      (rc = prof__str(c, kd, "gpu_dir", "kernel_db", true, gpu_dir, sizeof gpu_dir)) ||
      (rc = prof__str(c, kd, "framework_dir", "kernel_db", true, fw, sizeof fw)) ||
      (rc = prof__str(c, kd, "nccl_dir", "kernel_db", false, nccl, sizeof nccl)))
    return rc;
  if (!p->engine[0] || !p->engine_version[0])
    return prof__bad(c, kd, "engine", "missing: tables imported from a kernel database name their engine and "
                                      "engine_version");
  if (!p->attribution[0] || !strstr(p->attribution, "Apache-2.0") || !strstr(p->attribution, commit))
    return prof__bad(c, prof__get(root, "attribution") ? prof__get(root, "attribution") : kd, "attribution",
                     "required for tables imported from a kernel database: it must name the Apache-2.0 license and "
                     "the commit %s",
                     commit);
  snprintf(p->origin, sizeof p->origin, "kernel-db: NVIDIA AIConfigurator, %s %s on %s", p->engine,
           p->engine_version, gpu_dir);
  return SIM_OK;
}

static int parse_version(pctx *c, prof *p, const cJSON *root) {
  const cJSON *v = prof__get(root, "format");
  if (!cJSON_IsString(v) || strcmp(v->valuestring, "servesim-profile"))
    return prof__bad(c, v, "format", "expected \"servesim-profile\"");
  v = prof__get(root, "version");
  if (!cJSON_IsNumber(v) || (v->valuedouble != 1 && v->valuedouble != 2))
    return prof__bad(c, v, "version", "expected 1 or 2 (this servesim reads profile format versions 1 and 2)");
  p->version = (int)v->valuedouble;
  return SIM_OK;
}

static int parse_doc(pctx *c, prof *p, const cJSON *root) {
  static const char *const keys1[] = {"format", "version", "gpu", "device", "date", "model", "servesim_version",
                                      "command", "settings", "units", "probes", "gemm", "attn_decode",
                                      "attn_prefill", "checks", "notes", "complete", "summary", NULL};
  static const char *const keys2[] = {"format", "version", "gpu", "device", "date", "model", "servesim_version",
                                      "command", "settings", "units", "probes", "gemm", "attn_decode",
                                      "attn_prefill", "checks", "notes", "complete", "summary", "engine",
                                      "engine_version", "attribution", "probes_source", "kernel_db", "gemm_grid",
                                      "attn_context", "allreduce", "moe", "mla_module", NULL};
  if (!cJSON_IsObject(root)) return prof__bad(c, root, "", "expected an object");
  int rc = parse_version(c, p, root);
  if (rc) return rc;
  if ((rc = prof__keys(c, root, "", p->version == 1 ? keys1 : keys2))) return rc;
  const cJSON *v = prof__get(root, "gpu");
  if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof p->gpu)
    return prof__bad(c, v, "gpu", "expected the gpu config name the profile was measured on (e.g. \"h200\")");
  snprintf(p->gpu, sizeof p->gpu, "%s", v->valuestring);
  if (p->version >= 2 && (rc = parse_v2_header(c, p, root))) return rc;
  v = prof__get(root, "probes");
  if (!v) return prof__bad(c, NULL, "probes", "missing (copy_Bps and peak_flops)");
  if ((rc = parse_probes(c, p, v))) return rc;
  if ((v = prof__get(root, "gemm")) && (rc = prof__parse_gemm(c, p, v))) return rc;
  if ((v = prof__get(root, "attn_decode")) && (rc = prof__parse_attn(c, p, v, AK_DECODE))) return rc;
  if ((v = prof__get(root, "attn_prefill")) && (rc = prof__parse_attn(c, p, v, AK_PREFILL))) return rc;
  if ((v = prof__get(root, "gemm_grid")) && (rc = prof__parse_grid(c, p, v))) return rc;
  if ((v = prof__get(root, "attn_context")) && (rc = prof__parse_attn(c, p, v, AK_CONTEXT))) return rc;
  if ((v = prof__get(root, "allreduce")) && (rc = prof__parse_ar(c, p, v))) return rc;
  if ((v = prof__get(root, "moe")) && (rc = prof__parse_moe(c, p, v))) return rc;
  if ((v = prof__get(root, "mla_module")) && (rc = prof__parse_mla(c, p, v))) return rc;
  return SIM_OK;
}

int prof_parse(prof **out, const char *json, const char *what, sim_err *err) {
  *out = NULL;
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  pctx c = {&j};
  prof *p = sim_calloc(1, sizeof *p);
  snprintf(p->source, sizeof p->source, "%s", what);
  rc = parse_doc(&c, p, j.root);
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
int prof_format_version(const prof *p) { return p->version; }
const char *prof_engine(const prof *p) { return p ? p->engine : ""; }
const char *prof_engine_version(const prof *p) { return p ? p->engine_version : ""; }
const char *prof_attribution(const prof *p) { return p ? p->attribution : ""; }
const char *prof_origin(const prof *p) { return p ? p->origin : ""; }
double prof_copy_Bps(const prof *p) { return p->copy_Bps; }
double prof_peak_flops(const prof *p, sim_dtype d) { return (unsigned)d < DT_COUNT ? p->peak[d] : 0; }
