/* kdb_moe.c: the kernel-db fused-MoE table (moe_perf -> moe): one table per
 * shape (moe_dtype, hidden_size, inter_size, topk, num_experts, moe_tp_size,
 * moe_ep_size, distribution), its latencies by num_tokens. A shape measured
 * by several kernels (kernel_source: backends the engine chooses between)
 * keeps the fastest at each token count, as the GEMM grids do, but a
 * non-gated kernel's rows (TensorRT-LLM's moe_torch_flow_nongated: up and
 * down only, Nemotron-3's experts) make tables of their own. Every
 * moe_dtype is kept under its kernel-db name (bfloat16, fp8, fp8_block,
 * int4_wo, w4a16_mxfp4): the cost model asks for the one the checkpoint runs.
 * Memory: one record per row (about 5 MB for 50k rows). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

typedef struct mrow {
  prof_moe_key key;
  uint32_t tokens;
  uint32_t kernels; /* kernel_source bit */
  double ns;
} mrow;

/* By shape, then tokens, then time (the fastest first). */
static int cmp_row(const void *a, const void *b) {
  const mrow *x = a, *y = b;
  int c = prof_moe_key_cmp(&x->key, &y->key);
  if (c) return c;
  if (x->tokens != y->tokens) return x->tokens < y->tokens ? -1 : 1;
  return x->ns < y->ns ? -1 : x->ns > y->ns ? 1 : 0;
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
  for (bool row = true; !rc;) {
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    mrow m;
    memset(&m, 0, sizeof m);
    prof_moe_key *k_ = &m.key;
    const char *dt = kdb_csv_str(&c, col[C_DT]), *dist = kdb_csv_str(&c, col[C_DIST]);
    if (!dt[0] || strlen(dt) >= sizeof k_->dtype) {
      rc = kdb_csv_fail(&c, col[C_DT], err, "expected a dtype name, got '%s'", dt);
      break;
    }
    if (!dist[0] || strlen(dist) >= sizeof k_->dist) {
      rc = kdb_csv_fail(&c, col[C_DIST], err, "expected a distribution name, got '%s'", dist);
      break;
    }
    snprintf(k_->dtype, sizeof k_->dtype, "%s", dt);
    snprintf(k_->dist, sizeof k_->dist, "%s", dist);
    uint64_t x[8];
    static const int ic[8] = {C_TOK, C_H, C_I, C_K, C_E, C_TP, C_EP, 0};
    for (int i = 0; i < 7 && !rc; i++) rc = kdb_csv_int(&c, col[ic[i]], 1, 1e8, &x[i], err);
    if (rc) break;
    m.tokens = (uint32_t)x[0], k_->hidden = (uint32_t)x[1], k_->inter = (uint32_t)x[2], k_->topk = (uint32_t)x[3];
    k_->experts = (uint32_t)x[4], k_->tp = (uint32_t)x[5], k_->ep = (uint32_t)x[6];
    if (k_->topk > k_->experts) {
      rc = kdb_csv_fail(&c, col[C_K], err, "topk %u exceeds num_experts %u", k_->topk, k_->experts);
      break;
    }
    if ((rc = kdb_csv_ms(&c, col[C_LAT], &m.ns, err))) break;
    const char *ks = kdb_csv_str(&c, col[C_KS]);
    k_->ungated = strstr(ks, "nongated") != NULL; /* a non-gated kernel: its own tables (prof_moe_key) */
    m.kernels = kdb__name_bit(&kn, ks);
    SIM_GROW(v, cap, n + 1);
    v[n++] = m;
  }
  if (!rc && n) {
    qsort(v, n, sizeof *v, cmp_row);
    long dup = 0;
    size_t tables = 0;
    for (size_t a = 0; a < n;) {
      size_t b = a + 1;
      while (b < n && !prof_moe_key_cmp(&v[a].key, &v[b].key)) b++;
      prof_doc_moe *t = prof_doc_add_moe(k->doc);
      tables++;
      t->key = v[a].key;
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
                  rows.total, tables, dup);
    kdb__rows_note(k, &rows, "moe_perf", k->version);
  }
  free(v);
  kdb_csv_close(&c);
  return rc;
}
