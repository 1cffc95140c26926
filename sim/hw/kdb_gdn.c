/* kdb_gdn.c: the kernel-db Gated DeltaNet tables (gdn_perf -> gdn_module). Each gdn_perf row times ONE kernel
 * of a linear-attention layer's recurrence on one GPU (AIConfigurator's collector, collect_gdn.py: the layer's
 * projections are not in it): the short causal convolution (kernel_source causal_conv1d_fn for prompts,
 * causal_conv1d_update for decodes) or the gated delta rule (chunk_gated_delta_rule[_flashinfer] for prompts,
 * fused_recurrent_gated_delta_rule[_packed_decode] for decodes), for `batch_size` sequences of `seq_len` tokens
 * (1 for decodes) at the per-GPU shape (num_k_heads, head_k_dim, num_v_heads, head_v_dim, d_conv). One table
 * per (phase, shape) over batch x length, each cell the convolution's time plus the rule's: the work
 * servesim's linear-attention cost stands for (hw/cost_linattn.h). Of alternative kernels of one role at one
 * cell the fastest is kept; a cell with one role only is left unmeasured (null), counted in a note. d_model
 * (the hidden size, only the projections' concern) and model_name are not part of the key: shapes measured for
 * several models are one table (their names listed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/kdb_impl.h"

typedef struct grow_ {
  prof_gdn_key key;
  uint32_t batch, len;
  int rule;           /* 0: the convolution, 1: the delta rule */
  uint32_t kernels, models;
  double ns;
} grow_;

static int cmp_row(const void *a, const void *b) {
  const grow_ *x = a, *y = b;
  int c = prof_gdn_key_cmp(&x->key, &y->key);
  if (!c) c = x->rule - y->rule;
  return c ? c : kdb__cmp_cell(x->batch, x->len, x->ns, y->batch, y->len, y->ns);
}

/* Rows v[a..e) of one key (sorted by role, then cell, fastest first): the cells with both kernels into a new
 * table. */
static void add_table(kdb_ctx *k, grow_ *v, size_t a, size_t e, const kdb_names *kn, const kdb_names *mn,
                      long *half) {
  prof_doc_gdn *t = prof_doc_add_gdn(k->doc);
  t->key = v[a].key;
  t->batch = kdb__axis(&v[a].batch, e - a, sizeof *v, &t->nb);
  t->len = kdb__axis(&v[a].len, e - a, sizeof *v, &t->nl);
  size_t cells = (size_t)t->nb * (size_t)t->nl;
  t->ns = sim_malloc(sizeof *t->ns * cells);
  double *part[2];
  for (int r = 0; r < 2; r++) {
    part[r] = sim_malloc(sizeof *part[r] * cells);
    for (size_t q = 0; q < cells; q++) part[r][q] = NAN;
  }
  uint32_t kmask = 0, mmask = 0;
  for (size_t q = a; q < e; q++) {
    size_t at = (size_t)kdb__idx_of(t->batch, t->nb, v[q].batch) * (size_t)t->nl +
                (size_t)kdb__idx_of(t->len, t->nl, v[q].len);
    kmask |= v[q].kernels, mmask |= v[q].models;
    if (isnan(part[v[q].rule][at])) part[v[q].rule][at] = v[q].ns; /* sorted fastest first */
  }
  for (size_t q = 0; q < cells; q++) {
    bool c0 = !isnan(part[0][q]), c1 = !isnan(part[1][q]);
    t->ns[q] = c0 && c1 ? part[0][q] + part[1][q] : NAN;
    if (c0 != c1) (*half)++;
  }
  free(part[0]);
  free(part[1]);
  kdb__names_join(kn, kmask, t->kernel, sizeof t->kernel);
  kdb__names_join(mn, mmask, t->models, sizeof t->models);
}

static void add_tables(kdb_ctx *k, grow_ *v, size_t n, const kdb_names *kn, const kdb_names *mn, long total,
                       const char *file) {
  qsort(v, n, sizeof *v, cmp_row);
  long half = 0;
  size_t tables = 0;
  for (size_t a = 0; a < n;) {
    size_t e = a + 1;
    while (e < n && !prof_gdn_key_cmp(&v[a].key, &v[e].key)) e++;
    add_table(k, v, a, e, kn, mn, &half);
    tables++;
    a = e;
  }
  prof_doc_note(k->doc,
                "%s: %ld rows, %zu Gated DeltaNet tables (one per phase and per-GPU shape: convolution + delta rule "
                "per cell, the fastest kernel of each); %ld cells with only one of the two kernels left unmeasured",
                file, total, tables, half);
}

/* The fields of one row after its role is known. */
static int read_row(kdb_csv *c, const int *col, grow_ *r, sim_err *err) {
  enum { C_PH = 1, C_B, C_LEN, C_KH, C_KD, C_VH, C_VD, C_CONV, C_LAT };
  const char *ph = kdb_csv_str(c, col[C_PH]);
  if (!strcmp(ph, "context")) r->key.context = true;
  else if (strcmp(ph, "generation"))
    return kdb_csv_fail(c, col[C_PH], err, "expected context or generation, got '%s'", ph);
  uint64_t b, len, kh, kd, vh, vd, cv;
  int rc;
  if ((rc = kdb_csv_int(c, col[C_B], 1, 1e8, &b, err)) || (rc = kdb_csv_int(c, col[C_LEN], 1, 1e9, &len, err)) ||
      (rc = kdb_csv_int(c, col[C_KH], 1, 1e6, &kh, err)) || (rc = kdb_csv_int(c, col[C_KD], 1, 1e6, &kd, err)) ||
      (rc = kdb_csv_int(c, col[C_VH], 1, 1e6, &vh, err)) || (rc = kdb_csv_int(c, col[C_VD], 1, 1e6, &vd, err)) ||
      (rc = kdb_csv_int(c, col[C_CONV], 1, 1e3, &cv, err)) || (rc = kdb_csv_ms(c, col[C_LAT], &r->ns, err)))
    return rc;
  r->batch = (uint32_t)b, r->len = (uint32_t)len;
  r->key.k_heads = (uint32_t)kh, r->key.k_dim = (uint32_t)kd, r->key.v_heads = (uint32_t)vh;
  r->key.v_dim = (uint32_t)vd, r->key.conv = (uint32_t)cv;
  return SIM_OK;
}

int kdb__gdn(kdb_ctx *k, const char *path, sim_err *err) {
  kdb_csv c;
  int rc = kdb_csv_open(&c, path, err);
  enum { C_KS, C_PH, C_B, C_LEN, C_KH, C_KD, C_VH, C_VD, C_CONV, C_LAT, C_MODEL, NC };
  static const char *const names[NC] = {"kernel_source", "phase",      "batch_size", "seq_len",
                                        "num_k_heads",   "head_k_dim", "num_v_heads", "head_v_dim",
                                        "d_conv",        "latency",    "model_name"};
  int col[NC];
  for (int i = 0; i < NC && !rc; i++) rc = kdb_csv_need(&c, names[i], &col[i], err);
  grow_ *v = NULL;
  size_t n = 0, cap = 0;
  kdb_names kn = {.n = 0}, mn = {.n = 0};
  kdb_skips sk = {.k = 0};
  kdb_rows rows;
  kdb__rows_init(&rows, &c);
  while (!rc) {
    bool row;
    if ((rc = kdb__next_row(k, &rows, &c, &row, err)) || !row) break;
    grow_ r = {.rule = 0};
    const char *ks = kdb_csv_str(&c, col[C_KS]);
    if (!strncmp(ks, "causal_conv1d", 13)) r.rule = 0;
    else if (strstr(ks, "gated_delta_rule")) r.rule = 1;
    else {
      kdb__skip(&sk, "kernel_source %.60s (neither the convolution nor the delta rule)", ks);
      continue;
    }
    if ((rc = read_row(&c, col, &r, err))) break;
    r.kernels = kdb__name_bit(&kn, ks);
    r.models = kdb__name_bit(&mn, kdb_csv_str(&c, col[C_MODEL]));
    SIM_GROW(v, cap, n + 1);
    v[n++] = r;
  }
  const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (!rc && n) add_tables(k, v, n, &kn, &mn, rows.total, file);
  if (!rc) kdb__table_notes(k, &rows, &sk, file);
  free(v);
  kdb_csv_close(&c);
  return rc;
}
