/* kdb_moe.c: the kernel-db fused-MoE table (moe_perf -> moe): one table per
 * shape (moe_dtype, hidden_size, inter_size, topk, num_experts, moe_tp_size,
 * moe_ep_size, distribution), its latencies by num_tokens. A shape measured
 * by several kernels (kernel_source: backends the engine chooses between)
 * keeps the fastest at each token count, as the GEMM grids do. Every
 * moe_dtype is kept under its kernel-db name (bfloat16, fp8, fp8_block,
 * int4_wo, w4a16_mxfp4): the cost model asks for the one the checkpoint runs.
 * Memory: one record per row (about 5 MB for 50k rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

typedef struct mrow {
  char dtype[32], dist[24];
  uint32_t hidden, inter, topk, experts, tp, ep, tokens;
  uint32_t kernels; /* kernel_source bit */
  double ns;
} mrow;

static int cmp_row(const void *a, const void *b) {
  const mrow *x = a, *y = b;
  int c = strcmp(x->dtype, y->dtype);
  if (c) return c;
  const uint32_t kx[] = {x->hidden, x->inter, x->topk, x->experts, x->tp, x->ep};
  const uint32_t ky[] = {y->hidden, y->inter, y->topk, y->experts, y->tp, y->ep};
  for (int i = 0; i < 6; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  if ((c = strcmp(x->dist, y->dist))) return c;
  if (x->tokens != y->tokens) return x->tokens < y->tokens ? -1 : 1;
  return x->ns < y->ns ? -1 : x->ns > y->ns ? 1 : 0;
}

static bool same_shape(const mrow *x, const mrow *y) {
  return !strcmp(x->dtype, y->dtype) && x->hidden == y->hidden && x->inter == y->inter && x->topk == y->topk &&
         x->experts == y->experts && x->tp == y->tp && x->ep == y->ep && !strcmp(x->dist, y->dist);
}

int kdb__moe(kdb_ctx *k, const char *path, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  enum { C_DT, C_TOK, C_H, C_I, C_K, C_E, C_TP, C_EP, C_DIST, C_KS, C_LAT, NC };
  static const char *const names[NC] = {"moe_dtype",   "num_tokens",  "hidden_size",  "inter_size",
                                        "topk",        "num_experts", "moe_tp_size",  "moe_ep_size",
                                        "distribution", "kernel_source", "latency"};
  int col[NC];
  for (int i = 0; i < NC && !rc; i++) rc = kdb_csv_need(&c, names[i], &col[i], err);
  mrow *v = NULL;
  size_t n = 0, cap = 0;
  kdb_names kn;
  memset(&kn, 0, sizeof kn);
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  long total = 0;
  for (bool row = true; !rc;) {
    if ((rc = kdb_csv_next(&c, &row, err)) || !row) break;
    total++;
    if ((rc = kdb__rows_check(k, &rows, &c, err))) break;
    mrow m;
    memset(&m, 0, sizeof m);
    const char *dt = kdb_csv_str(&c, col[C_DT]), *dist = kdb_csv_str(&c, col[C_DIST]);
    if (!dt[0] || strlen(dt) >= sizeof m.dtype) {
      rc = kdb_csv_fail(&c, col[C_DT], err, "expected a dtype name, got '%s'", dt);
      break;
    }
    if (!dist[0] || strlen(dist) >= sizeof m.dist) {
      rc = kdb_csv_fail(&c, col[C_DIST], err, "expected a distribution name, got '%s'", dist);
      break;
    }
    snprintf(m.dtype, sizeof m.dtype, "%s", dt);
    snprintf(m.dist, sizeof m.dist, "%s", dist);
    uint64_t x[8];
    static const int ic[8] = {C_TOK, C_H, C_I, C_K, C_E, C_TP, C_EP, 0};
    for (int i = 0; i < 7 && !rc; i++) rc = kdb_csv_int(&c, col[ic[i]], 1, 1e8, &x[i], err);
    if (rc) break;
    m.tokens = (uint32_t)x[0], m.hidden = (uint32_t)x[1], m.inter = (uint32_t)x[2], m.topk = (uint32_t)x[3];
    m.experts = (uint32_t)x[4], m.tp = (uint32_t)x[5], m.ep = (uint32_t)x[6];
    if (m.topk > m.experts) {
      rc = kdb_csv_fail(&c, col[C_K], err, "topk %u exceeds num_experts %u", m.topk, m.experts);
      break;
    }
    if ((rc = kdb_csv_ms(&c, col[C_LAT], &m.ns, err))) break;
    m.kernels = kdb__name_bit(&kn, kdb_csv_str(&c, col[C_KS]));
    SIM_GROW(v, cap, n + 1);
    v[n++] = m;
  }
  if (!rc && n) {
    qsort(v, n, sizeof *v, cmp_row);
    long dup = 0;
    size_t tables = 0;
    for (size_t a = 0; a < n;) {
      size_t b = a + 1;
      while (b < n && same_shape(&v[a], &v[b])) b++;
      prof_doc_moe *t = prof_doc_add_moe(k->doc);
      tables++;
      snprintf(t->dtype, sizeof t->dtype, "%s", v[a].dtype);
      snprintf(t->dist, sizeof t->dist, "%s", v[a].dist);
      t->hidden = v[a].hidden, t->inter = v[a].inter, t->topk = v[a].topk, t->experts = v[a].experts;
      t->tp = v[a].tp, t->ep = v[a].ep;
      t->tokens = sim_malloc(sizeof *t->tokens * (b - a));
      t->ns = sim_malloc(sizeof *t->ns * (b - a));
      uint32_t mask = 0;
      for (size_t q = a; q < b; q++) {
        mask |= v[q].kernels;
        if (t->n && t->tokens[t->n - 1] == v[q].tokens) { /* sorted fastest first: the repeat is slower */
          dup++;
          continue;
        }
        t->tokens[t->n] = v[q].tokens;
        t->ns[t->n++] = v[q].ns;
      }
      kdb__names_join(&kn, mask, t->kernel, sizeof t->kernel);
      a = b;
    }
    prof_doc_note(k->doc,
                  "moe_perf: %ld rows, %zu fused-MoE tables (one per dtype, sizes, top-k, experts, TP, EP and routing "
                  "distribution); %ld rows repeated a token count with another kernel (the fastest kept)",
                  total, tables, dup);
    kdb__rows_note(k, &rows, "moe_perf", k->version);
  }
  free(v);
  kdb_csv_close(&c);
  return rc;
}
