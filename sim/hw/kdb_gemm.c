/* kdb_gemm.c: the kernel-db GEMM table (gemm_perf -> gemm_grid, one grid per
 * servesim dtype pair) and all-reduce tables (custom_allreduce_perf and
 * nccl_perf -> allreduce). See kdb.h for the mapping.
 * Rows are gathered per key, then each table is built from the sorted unique
 * coordinates; a cell measured twice keeps the faster time (the repeats are
 * alternative kernels the collector let the engine choose between).
 * Memory: one 24-byte record per row (about 2.5 MB for 100k rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

/* gemm_dtype -> (weights, activations) */
static const struct {
  const char *name;
  sim_dtype w, a;
  bool block; /* block-scaled FP8: 128 x 128 weight blocks, per-token groups of 128 activations */
} gemm_map[] = {{"bfloat16", DT_BF16, DT_BF16, false}, {"fp8", DT_FP8, DT_FP8, false},
                {"fp8_block", DT_FP8, DT_FP8, true},   {"int8_wo", DT_INT8, DT_BF16, false},
                {"int4_wo", DT_INT4, DT_BF16, false},  {"sq", DT_INT8, DT_INT8, false},
                {"nvfp4", DT_FP4, DT_FP4, false}};
enum { NMAP = sizeof gemm_map / sizeof gemm_map[0] };

typedef struct grow {
  uint32_t m, n, k;   /* shape */
  uint32_t kernels;   /* kernel_source bit */
  double ns;          /* measured */
} grow;

typedef struct grows {
  grow *v;
  size_t n, cap;
} grows;

/* SGLang's collector times its gemm_dtype int8_wo as W8A8: the activations are
 * quantized per token to int8 and int8_scaled_mm multiplies int8 by int8
 * (AIConfigurator collector/sglang/collect_gemm.py at f3d9c5473, the 0.5.6
 * collector that took H100's sglang-0.5.6.post2 table), so its rows are
 * int8/int8, not the weight-only int8/bf16 of TensorRT-LLM's int8_wo. */
static sim_dtype act_dtype(const kdb_ctx *k, int d) {
  if (!strcmp(k->req->engine, "sglang") && !strcmp(gemm_map[d].name, "int8_wo")) return DT_INT8;
  return gemm_map[d].a;
}

/* One grid from the rows of one dtype pair; returns the rows that repeated a cell. */
static long build_grid(kdb_ctx *k, const grows *r, int d, const kdb_names *kn, const char *file) {
  prof_doc_grid *g = prof_doc_add_grid(k->doc);
  g->wdtype = gemm_map[d].w;
  g->adtype = act_dtype(k, d);
  g->block = gemm_map[d].block;
  g->m = kdb__axis(&r->v[0].m, r->n, sizeof *r->v, &g->nm);
  g->n = kdb__axis(&r->v[0].n, r->n, sizeof *r->v, &g->nn);
  g->k = kdb__axis(&r->v[0].k, r->n, sizeof *r->v, &g->nk);
  size_t cells = (size_t)g->nm * (size_t)g->nn * (size_t)g->nk, measured = 0;
  g->ns = sim_malloc(sizeof(double) * cells);
  for (size_t q = 0; q < cells; q++) g->ns[q] = NAN;
  uint32_t mask = 0;
  long dup = 0;
  for (size_t q = 0; q < r->n; q++) {
    const grow *w = &r->v[q];
    size_t at = ((size_t)kdb__idx_of(g->m, g->nm, w->m) * (size_t)g->nn + (size_t)kdb__idx_of(g->n, g->nn, w->n)) *
                    (size_t)g->nk +
                (size_t)kdb__idx_of(g->k, g->nk, w->k);
    if (isnan(g->ns[at])) measured++;
    else dup++;
    if (isnan(g->ns[at]) || w->ns < g->ns[at]) g->ns[at] = w->ns;
    mask |= w->kernels;
  }
  kdb__names_join(kn, mask, g->kernel, sizeof g->kernel);
  prof_doc_note(k->doc, "%s: %s/%s%s from gemm_dtype %s%s: %zu of %d x %d x %d cells measured (m x n x k), kernel %s",
                file, dtype_name(g->wdtype), dtype_name(g->adtype), g->block ? " block-scaled" : "", gemm_map[d].name,
                g->adtype != gemm_map[d].a ? " (SGLang's collector quantizes the activations too: W8A8)" : "",
                measured, g->nm, g->nn, g->nk, g->kernel[0] ? g->kernel : "not recorded");
  return dup;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

int kdb__gemm(kdb_ctx *k, const char *path, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  int cd, cm, cn, ck, cl;
  if (!rc && !(rc = kdb_csv_need(&c, "gemm_dtype", &cd, err)) && !(rc = kdb_csv_need(&c, "m", &cm, err)) &&
      !(rc = kdb_csv_need(&c, "n", &cn, err)) && !(rc = kdb_csv_need(&c, "k", &ck, err)))
    rc = kdb_csv_need(&c, "latency", &cl, err);
  grows r[NMAP];
  memset(r, 0, sizeof r);
  kdb_names kn = {0};
  kdb_skips sk = {0};
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  int cks = kdb_csv_col(&c, "kernel_source");
  long off_step = 0; /* rows left out by req->gemm_m_step */
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    const char *dt = kdb_csv_str(&c, cd);
    int d = 0;
    while (d < NMAP && strcmp(gemm_map[d].name, dt)) d++;
    if (d == NMAP) {
      kdb__skip(&sk, "gemm_dtype %s", dt);
      continue;
    }
    uint64_t m, n, kk;
    grow g;
    if ((rc = kdb_csv_int(&c, cm, 1, 2147483648.0, &m, err)) || (rc = kdb_csv_int(&c, cn, 1, 2147483648.0, &n, err)) ||
        (rc = kdb_csv_int(&c, ck, 1, 2147483648.0, &kk, err)) || (rc = kdb_csv_ms(&c, cl, &g.ns, err)))
      break;
    g.m = (uint32_t)m, g.n = (uint32_t)n, g.k = (uint32_t)kk;
    uint32_t step = k->req->gemm_m_step;
    if (step > 1 && g.m > step && g.m % step) {
      off_step++;
      continue;
    }
    g.kernels = cks >= 0 ? kdb__name_bit(&kn, kdb_csv_str(&c, cks)) : 0;
    SIM_GROW(r[d].v, r[d].cap, r[d].n + 1);
    r[d].v[r[d].n++] = g;
  }
  const char *file = base_name(path);
  if (!rc) {
    long dup = 0;
    char missing[128] = "";
    size_t ml = 0;
    for (int d = 0; d < NMAP; d++) {
      if (r[d].n) dup += build_grid(k, &r[d], d, &kn, file);
      else ml += (size_t)snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? ", " : "", gemm_map[d].name);
    }
    prof_doc_note(k->doc, "%s: %ld rows; no rows of gemm_dtype %s (those GEMMs have no table here)", file, rows.total,
                  missing[0] ? missing : "(none missing)");
    if (dup) prof_doc_note(k->doc, "%s: %ld rows repeat a (dtype, m, n, k) cell; the fastest is kept", file, dup);
    if (k->req->gemm_m_step > 1) /* a provenance fact even when no row was left out */
      prof_doc_note(k->doc, "%s: %ld rows left out: m above %u and not a multiple of it (--gemm-m-step %u)", file,
                    off_step, k->req->gemm_m_step, k->req->gemm_m_step);
    if (sk.k) {
      char s[1024];
      kdb__skips_join(&sk, s, sizeof s);
      prof_doc_note(k->doc, "%s: skipped, not servesim dtypes yet: %s", file, s);
    }
    kdb__rows_note(k, &rows, file, k->version);
  }
  for (int d = 0; d < NMAP; d++) free(r[d].v);
  kdb_csv_close(&c);
  return rc;
}

/* ---- all-reduce -------------------------------------------------------------------------- */

typedef struct arow {
  prof_ar_impl impl;
  uint32_t num_gpus;
  double bytes, ns;
} arow;

typedef struct arows {
  arow *v;
  size_t n, cap;
} arows;

static int cmp_arow(const void *a, const void *b) {
  const arow *x = a, *y = b;
  if (x->impl != y->impl) return (int)x->impl - (int)y->impl;
  if (x->num_gpus != y->num_gpus) return x->num_gpus < y->num_gpus ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* One table per (impl, num_gpus); returns the rows that repeated a size. */
static long ar_tables(kdb_ctx *k, arows *r, sim_dtype dt, const char *kernel) {
  if (r->n > 1) qsort(r->v, r->n, sizeof *r->v, cmp_arow);
  long dup = 0;
  for (size_t i = 0; i < r->n;) {
    size_t j = i;
    while (j < r->n && r->v[j].impl == r->v[i].impl && r->v[j].num_gpus == r->v[i].num_gpus) j++;
    prof_doc_ar *a = prof_doc_add_ar(k->doc);
    a->impl = r->v[i].impl;
    a->num_gpus = r->v[i].num_gpus;
    a->dtype = dt;
    snprintf(a->kernel, sizeof a->kernel, "%s", kernel);
    a->bytes = sim_malloc(sizeof(double) * (j - i));
    a->ns = sim_malloc(sizeof(double) * (j - i));
    for (size_t q = i; q < j; q++) {
      if (a->n && a->bytes[a->n - 1] == r->v[q].bytes) { /* sorted by time too: the first is the fastest */
        dup++;
        continue;
      }
      a->bytes[a->n] = r->v[q].bytes;
      a->ns[a->n++] = r->v[q].ns;
    }
    i = j;
  }
  return dup;
}

static void ar_notes(kdb_ctx *k, const char *file, long total, size_t used, long dup, const kdb_skips *sk,
                     const kdb_rows *rows) {
  prof_doc_note(k->doc, "%s: %ld rows, %zu imported", file, total, used);
  if (dup) prof_doc_note(k->doc, "%s: %ld rows repeat a size; the fastest is kept", file, dup);
  if (sk->k) {
    char s[1024];
    kdb__skips_join(sk, s, sizeof s);
    prof_doc_note(k->doc, "%s: skipped: %s", file, s);
  }
  kdb__rows_note(k, rows, file, k->version);
}

/* Common columns of both all-reduce tables: num_gpus, message_size (elements) and latency. */
static int ar_row(const kdb_csv *c, int cg, int cs, int cl, double elem_bytes, arow *a, sim_err *err) {
  uint64_t g, s;
  int rc;
  if ((rc = kdb_csv_int(c, cg, 2, 65536, &g, err)) || (rc = kdb_csv_int(c, cs, 1, 1099511627776.0, &s, err)) ||
      (rc = kdb_csv_ms(c, cl, &a->ns, err)))
    return rc;
  a->num_gpus = (uint32_t)g;
  a->bytes = (double)s * elem_bytes;
  return SIM_OK;
}

int kdb__custom_ar(kdb_ctx *k, const char *path, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  int cd, cg, cs, cl;
  if (!rc && !(rc = kdb_csv_need(&c, "allreduce_dtype", &cd, err)) && !(rc = kdb_csv_need(&c, "num_gpus", &cg, err)) &&
      !(rc = kdb_csv_need(&c, "message_size", &cs, err)))
    rc = kdb_csv_need(&c, "latency", &cl, err);
  int cb = kdb_csv_col(&c, "backend"), cks = kdb_csv_col(&c, "kernel_source"), ci = kdb_csv_col(&c, "implementation");
  bool vllm = !strcmp(k->req->engine, "vllm"), sglang = !strcmp(k->req->engine, "sglang");
  bool stand_in = sglang && ci >= 0; /* SGLang 0.5.6.post2's folder holds TensorRT-LLM's table (kdb.h) */
  arows r = {0};
  kdb_skips sk = {0};
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    arow a;
    const char *dt = kdb_csv_str(&c, cd);
    if (strcmp(dt, "bfloat16")) {
      kdb__skip(&sk, "allreduce_dtype %s (servesim all-reduces bf16 activations)", dt);
      continue;
    }
    if ((vllm || sglang) && !stand_in) { /* the engine's custom all-reduce, captured in a CUDA graph or eager */
      const char *b = cb >= 0 ? kdb_csv_str(&c, cb) : cks >= 0 ? kdb_csv_str(&c, cks) : "";
      if (strstr(b, "graph")) a.impl = PROF_AR_CUSTOM_GRAPH;
      else if (strstr(b, "eager")) a.impl = PROF_AR_CUSTOM_EAGER;
      else {
        kdb__skip(&sk, "backend '%s' (neither graph nor eager)", b);
        continue;
      }
    } else { /* TensorRT-LLM's AUTO all-reduce (also the stand-in); the collector replays it in a CUDA graph */
      if (ci >= 0 && strcmp(kdb_csv_str(&c, ci), "trtllm")) {
        kdb__skip(&sk, "implementation '%s'", kdb_csv_str(&c, ci));
        continue;
      }
      a.impl = PROF_AR_CUSTOM_GRAPH;
    }
    if ((rc = ar_row(&c, cg, cs, cl, 2, &a, err))) break;
    SIM_GROW(r.v, r.cap, r.n + 1);
    r.v[r.n++] = a;
  }
  if (!rc) {
    size_t used = r.n;
    const char *kernel = vllm     ? "vLLM custom all-reduce"
                         : stand_in ? "TensorRT-LLM all-reduce (AUTO strategy), standing in for SGLang's"
                         : sglang   ? "SGLang custom all-reduce"
                                    : "TensorRT-LLM all-reduce (AUTO strategy)";
    long dup = ar_tables(k, &r, DT_BF16, kernel);
    ar_notes(k, base_name(path), rows.total, used, dup, &sk, &rows);
    if (stand_in && used) {
      const char *v = rows.odd ? rows.odd_version : k->version;
      prof_doc_note(k->doc, "%s: the rows are TensorRT-LLM %s's all-reduce (column implementation), not SGLang's: "
                            "imported as the graph-mode custom all-reduce, a stand-in (configs/profiles/README.md); "
                            "eager steps use NCCL's table",
                    base_name(path), v);
      kdb__caveat(k, "custom_allreduce_perf is TensorRT-LLM %s's all-reduce, standing in for SGLang's", v);
    }
  }
  free(r.v);
  kdb_csv_close(&c);
  return rc;
}

int kdb__nccl(kdb_ctx *k, const char *path, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  int co, cd, cg, cs, cl;
  if (!rc && !(rc = kdb_csv_need(&c, "op_name", &co, err)) && !(rc = kdb_csv_need(&c, "nccl_dtype", &cd, err)) &&
      !(rc = kdb_csv_need(&c, "num_gpus", &cg, err)) && !(rc = kdb_csv_need(&c, "message_size", &cs, err)))
    rc = kdb_csv_need(&c, "latency", &cl, err);
  arows r = {0};
  kdb_skips sk = {0};
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    const char *op = kdb_csv_str(&c, co), *dt = kdb_csv_str(&c, cd);
    prof_ar_impl impl = !strcmp(op, "all_reduce")       ? PROF_AR_NCCL
                        : !strcmp(op, "all_gather")     ? PROF_AG_NCCL
                        : !strcmp(op, "reduce_scatter") ? PROF_RS_NCCL
                                                        : PROF_AR_COUNT;
    if (impl == PROF_AR_COUNT) {
      kdb__skip(&sk, "op_name %s", op);
      continue;
    }
    if (strcmp(dt, "half")) {
      kdb__skip(&sk, "%s in %s (servesim moves 16-bit activations)", op, dt);
      continue;
    }
    arow a = {.impl = impl};
    if ((rc = ar_row(&c, cg, cs, cl, 2, &a, err))) break;
    SIM_GROW(r.v, r.cap, r.n + 1);
    r.v[r.n++] = a;
  }
  if (!rc) {
    size_t used = r.n;
    size_t first = k->doc->nar;
    long dup = ar_tables(k, &r, DT_FP16, "NCCL all_reduce (nccl-tests)");
    for (size_t q = first; q < k->doc->nar; q++) { /* message_size: the whole buffer for all the collectives */
      prof_doc_ar *a = &k->doc->ar[q];
      if (a->impl == PROF_AG_NCCL) snprintf(a->kernel, sizeof a->kernel, "NCCL all_gather (nccl-tests)");
      if (a->impl == PROF_RS_NCCL) snprintf(a->kernel, sizeof a->kernel, "NCCL reduce_scatter (nccl-tests)");
    }
    ar_notes(k, base_name(path), rows.total, used, dup, &sk, &rows);
  }
  free(r.v);
  kdb_csv_close(&c);
  return rc;
}
