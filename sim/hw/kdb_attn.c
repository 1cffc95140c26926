/* kdb_attn.c: the kernel-db attention tables: generation_attention_perf ->
 * attn_decode (batch_size x kv_len, kv_len = step + the collector's offset,
 * kdb.h) and context_attention_perf -> attn_context (batch_size x isl), one
 * table per (window_size, KV dtype, num_heads, num_key_value_heads,
 * head_dim): window_size 0 is full attention, a positive one a sliding-window
 * kernel (each query attends to the last window_size tokens), another
 * operation with tables of its own ("window", written to the companion file
 * with the fused-MoE tables: only models with sliding-window layers read them).
 *
 * Kept: beam_width 1, attn_dtype bfloat16 (TensorRT-LLM's context rows
 * with attn_dtype fp8 are its FP8 context FMHA, a quantization option of the
 * model rather than of the KV cache, and servesim keys attention by KV dtype
 * alone: the bf16-compute rows with an fp8 cache serve fp8 KV caches),
 * kv_cache_dtype bfloat16 or fp8. SGLang is the exception: its fa3 backend
 * casts the query to the cache dtype whenever the KV cache is fp8 and
 * head_dim <= 256 (python/sglang/srt/layers/attention/
 * flashattention_backend.py, since commit 2695ab053 of 2025-04, before
 * 0.5.0), and trtllm_mha quantizes it itself (AIConfigurator
 * collector/sglang/collect_attn.py), so an fp8-cache prefill in SGLang is fp8
 * compute and the 0.5.14 collector labels those rows attn_dtype fp8 (it
 * records no bf16-compute rows for them): SGLang's context rows of
 * attn_dtype fp8 with an fp8 cache are kept as fp8-KV rows. A cell measured
 * twice (alternative backends, or both labels) keeps the faster time.
 * Cells the collector skipped (large batch x length) stay null; prof_load
 * holds the efficiency of the nearest measured cell before them in their row
 * or column. A table where some null cell has no such cell would not load:
 * it is left out with a note (none in the data of commit 095f58a51c4c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

typedef struct trow {
  uint32_t win;                 /* window_size; 0 = full attention */
  sim_dtype kv;                 /* KV cache dtype */
  uint32_t hd, kvh, qh;         /* head_dim, KV heads, query heads */
  uint32_t x, y;                /* batch, kv_len or isl */
  uint32_t kernels;             /* kernel_source bit */
  double ns;                    /* measured */
} trow;

static int cmp_trow(const void *a, const void *b) {
  const trow *p = a, *q = b;
  if (p->win != q->win) return p->win < q->win ? -1 : 1;
  if (p->kv != q->kv) return (int)p->kv - (int)q->kv;
  if (p->hd != q->hd) return p->hd < q->hd ? -1 : 1;
  if (p->kvh != q->kvh) return p->kvh < q->kvh ? -1 : 1;
  if (p->qh != q->qh) return p->qh < q->qh ? -1 : 1;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  if (p->y != q->y) return p->y < q->y ? -1 : 1;
  return p->ns < q->ns ? -1 : p->ns > q->ns;
}

typedef struct cols {
  int b, isl, nh, nkv, hd, attn, kv, step, lat; /* required */
  int win, beam, ks;                            /* optional (-1) */
} cols;

static int need_cols(const kdb_csv *c, cols *k, sim_err *err) {
  int rc;
  if ((rc = kdb_csv_need(c, "batch_size", &k->b, err)) || (rc = kdb_csv_need(c, "isl", &k->isl, err)) ||
      (rc = kdb_csv_need(c, "num_heads", &k->nh, err)) || (rc = kdb_csv_need(c, "num_key_value_heads", &k->nkv, err)) ||
      (rc = kdb_csv_need(c, "head_dim", &k->hd, err)) || (rc = kdb_csv_need(c, "attn_dtype", &k->attn, err)) ||
      (rc = kdb_csv_need(c, "kv_cache_dtype", &k->kv, err)) || (rc = kdb_csv_need(c, "step", &k->step, err)) ||
      (rc = kdb_csv_need(c, "latency", &k->lat, err)))
    return rc;
  k->win = kdb_csv_col(c, "window_size");
  k->beam = kdb_csv_col(c, "beam_width");
  k->ks = kdb_csv_col(c, "kernel_source");
  return SIM_OK;
}

/* One row into *r; *keep false (with a skip counted) for rows servesim does not use. */
static int read_row(const kdb_ctx *k, const kdb_csv *c, const cols *cl, bool context, kdb_names *kn, kdb_skips *sk,
                    trow *r, bool *keep, bool *fp8q, sim_err *err) {
  *keep = false;
  uint64_t v = 0;
  int rc;
  if (cl->win >= 0 && (rc = kdb_csv_int(c, cl->win, 0, 1e9, &v, err))) return rc;
  r->win = (uint32_t)v;
  if (cl->beam >= 0 && strcmp(kdb_csv_str(c, cl->beam), "1"))
    return kdb__skip(sk, "beam_width %s", kdb_csv_str(c, cl->beam)), SIM_OK;
  const char *ad = kdb_csv_str(c, cl->attn), *kd = kdb_csv_str(c, cl->kv);
  *fp8q = context && !strcmp(k->req->engine, "sglang") && !strcmp(ad, "fp8") && !strcmp(kd, "fp8");
  if (strcmp(ad, "bfloat16") && !*fp8q) return kdb__skip(sk, "attn_dtype %s", ad), SIM_OK;
  if (!strcmp(kd, "bfloat16")) r->kv = DT_BF16;
  else if (!strcmp(kd, "fp8")) r->kv = DT_FP8;
  else return kdb__skip(sk, "kv_cache_dtype %s", kd), SIM_OK;
  uint64_t b, isl, nh, nkv, hd, step;
  if ((rc = kdb_csv_int(c, cl->b, 1, 1e9, &b, err)) || (rc = kdb_csv_int(c, cl->isl, 1, 1e9, &isl, err)) ||
      (rc = kdb_csv_int(c, cl->nh, 1, 65536, &nh, err)) || (rc = kdb_csv_int(c, cl->nkv, 1, 65536, &nkv, err)) ||
      (rc = kdb_csv_int(c, cl->hd, 1, 65536, &hd, err)) || (rc = kdb_csv_int(c, cl->step, 0, 1e9, &step, err)) ||
      (rc = kdb_csv_ms(c, cl->lat, &r->ns, err)))
    return rc;
  if (context && step != 0)
    return kdb_csv_fail(c, cl->step, err, "%llu: context rows start from an empty cache (step 0)",
                        (unsigned long long)step);
  if (!context && isl != 1)
    return kdb_csv_fail(c, cl->isl, err, "%llu: generation rows decode one token (isl 1)", (unsigned long long)isl);
  if (!context && step + k->decode_offset < 1)
    return kdb_csv_fail(c, cl->step, err, "0: a generation row attends to at least one token");
  if (nh % nkv) return kdb__skip(sk, "num_heads not a multiple of num_key_value_heads"), SIM_OK;
  r->qh = (uint32_t)nh, r->kvh = (uint32_t)nkv, r->hd = (uint32_t)hd, r->x = (uint32_t)b;
  r->y = (uint32_t)(context ? isl : step + k->decode_offset);
  r->kernels = cl->ks >= 0 ? kdb__name_bit(kn, kdb_csv_str(c, cl->ks)) : 0;
  *keep = true;
  return SIM_OK;
}

/* True when every null cell has a measured cell before it in its row or column (prof_attn.c's rule). */
static bool fillable(const double *ns, int nx, int ny) {
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      if (!isnan(ns[i * ny + j])) continue;
      bool ok = false;
      for (int jj = 0; jj < j && !ok; jj++) ok = !isnan(ns[i * ny + jj]);
      for (int ii = 0; ii < i && !ok; ii++) ok = !isnan(ns[ii * ny + j]);
      if (!ok) return false;
    }
  return true;
}

/* The table of rows v[0..n) (one key, sorted); returns the repeated cells. */
static long build(kdb_ctx *k, const trow *v, size_t n, bool context, const kdb_names *kn, const char *file) {
  int nx, ny;
  uint32_t *x = kdb__axis(&v[0].x, n, sizeof *v, &nx), *y = kdb__axis(&v[0].y, n, sizeof *v, &ny);
  double *ns = sim_malloc(sizeof(double) * (size_t)nx * (size_t)ny);
  for (size_t q = 0; q < (size_t)nx * (size_t)ny; q++) ns[q] = NAN;
  long dup = 0;
  uint32_t mask = 0;
  for (size_t q = 0; q < n; q++) {
    double *cell = &ns[(size_t)kdb__idx_of(x, nx, v[q].x) * (size_t)ny + (size_t)kdb__idx_of(y, ny, v[q].y)];
    if (!isnan(*cell)) dup++; /* sorted by time within a cell: the first is the fastest */
    else *cell = v[q].ns;
    mask |= v[q].kernels;
  }
  if (!fillable(ns, nx, ny)) {
    char win[32] = "";
    if (v[0].win) snprintf(win, sizeof win, " window %u", v[0].win);
    prof_doc_note(k->doc, "%s: %s heads %u/%u d%u%s left out: a cell not measured has no measured cell before it in "
                          "its row or column",
                  file, dtype_name(v[0].kv), v[0].qh, v[0].kvh, v[0].hd, win);
    free(x), free(y), free(ns);
    return dup;
  }
  prof_doc_attn *a = prof_doc_add_attn(k->doc, context ? PDA_CONTEXT : PDA_DECODE);
  a->kv_dtype = v[0].kv;
  a->q_heads = v[0].qh, a->kv_heads = v[0].kvh, a->head_dim = v[0].hd;
  a->window = v[0].win;
  a->x = x, a->y = y, a->nx = nx, a->ny = ny, a->ns = ns;
  kdb__names_join(kn, mask, a->kernel, sizeof a->kernel);
  return dup;
}

static void notes(kdb_ctx *k, const char *file, bool context, long total, size_t used, size_t tables,
                  size_t windowed, long dup, long fp8q, const kdb_skips *sk, const kdb_rows *rows) {
  char win[96] = "";
  if (windowed) snprintf(win, sizeof win, " (%zu of them sliding-window tables, in the companion file)", windowed);
  prof_doc_note(k->doc, "%s: %ld rows, %zu imported into %zu %s tables%s", file, total, used, tables,
                context ? "attn_context" : "attn_decode", win);
  if (!context)
    prof_doc_note(k->doc, "%s: kv_len = step + %u (%s)", file, k->decode_offset,
                  k->decode_offset ? "the collector caches `step` tokens and decodes one more"
                                   : "the collector's sequences hold `step` tokens, the decoded one included");
  if (dup) prof_doc_note(k->doc, "%s: %ld rows repeat a cell (alternative kernels); the fastest is kept", file, dup);
  if (fp8q)
    prof_doc_note(k->doc, "%s: %ld rows of attn_dtype fp8 with an fp8 cache kept as fp8-KV rows (SGLang computes an "
                          "fp8-cache prefill in fp8)",
                  file, fp8q);
  if (sk->k) {
    char s[1400];
    kdb__skips_join(sk, s, sizeof s);
    prof_doc_note(k->doc, "%s: skipped: %s", file, s);
  }
  kdb__rows_note(k, rows, file, k->version);
}

int kdb__attn(kdb_ctx *k, const char *path, bool context, sim_err *err) {
  kdb_csv c;
  cols cl;
  int rc = kdb_csv_open(&c, path, err);
  if (!rc) rc = need_cols(&c, &cl, err);
  trow *v = NULL;
  size_t n = 0, cap = 0;
  kdb_names kn = {0};
  kdb_skips sk = {0};
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  long fp8q = 0;
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    bool keep, q8 = false;
    trow r;
    if ((rc = read_row(k, &c, &cl, context, &kn, &sk, &r, &keep, &q8, err))) break;
    if (!keep) continue;
    fp8q += q8;
    SIM_GROW(v, cap, n + 1);
    v[n++] = r;
  }
  if (!rc) {
    if (n > 1) qsort(v, n, sizeof *v, cmp_trow);
    const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t before = k->doc->nattn[context ? PDA_CONTEXT : PDA_DECODE];
    long dup = 0;
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (j < n && v[j].win == v[i].win && v[j].kv == v[i].kv && v[j].hd == v[i].hd && v[j].kvh == v[i].kvh &&
             v[j].qh == v[i].qh)
        j++;
      dup += build(k, v + i, j - i, context, &kn, file);
      i = j;
    }
    size_t after = k->doc->nattn[context ? PDA_CONTEXT : PDA_DECODE], windowed = 0;
    for (size_t t = before; t < after; t++) windowed += k->doc->attn[context ? PDA_CONTEXT : PDA_DECODE][t].window > 0;
    notes(k, file, context, rows.total, n, after - before, windowed, dup, fp8q, &sk, &rows);
  }
  free(v);
  kdb_csv_close(&c);
  return rc;
}
