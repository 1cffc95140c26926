/* prof_mla.c: multi-head latent attention module tables of a profile and
 * prof_mla_module_ns (see prof.h). A table is one key (phase, KV dtype, GEMM
 * type, heads per GPU, MLA dimensions) over batch x length; the file holds
 * the full matrix with null where nothing was measured (the collector stops
 * at a token budget, batch x length), memory holds ragged rows of the
 * measured cells. Tables are sorted by key and found by binary search. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

int prof_mla_key_cmp(const prof_mla_key *x, const prof_mla_key *y) {
  if (x->context != y->context) return x->context ? 1 : -1;
  if (x->kv_dtype != y->kv_dtype) return (int)x->kv_dtype - (int)y->kv_dtype;
  int c = strcmp(x->gemm, y->gemm);
  if (c) return c;
  const uint32_t kx[] = {x->heads, x->dims.hidden, x->dims.q_lora, x->dims.kv_lora, x->dims.qk_nope,
                         x->dims.qk_rope, x->dims.v_head};
  const uint32_t ky[] = {y->heads, y->dims.hidden, y->dims.q_lora, y->dims.kv_lora, y->dims.qk_nope,
                         y->dims.qk_rope, y->dims.v_head};
  for (int i = 0; i < 7; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

static int cmp_mla(const void *a, const void *b) {
  return prof_mla_key_cmp(&((const mla_tab *)a)->key, &((const mla_tab *)b)->key);
}

static int parse_one(pctx *c, prof *p, const cJSON *t, const char *f, mla_tab *m) {
  static const char *const keys[] = {"phase",   "kv_dtype", "gemm",    "heads", "hidden", "q_lora", "kv_lora",
                                     "qk_nope", "qk_rope",  "v_head",  "model", "kernel", "batch",  "len",
                                     "ns",      NULL};
  (void)p;
  if (!cJSON_IsObject(t)) return prof__bad(c, t, f, "expected an object");
  prof_mla_key *k = &m->key;
  char phase[16];
  char model[96];
  int rc;
  if ((rc = prof__keys(c, t, f, keys)) || (rc = prof__str(c, t, "phase", f, true, phase, sizeof phase)) ||
      (rc = prof__dtype(c, t, "kv_dtype", f, &k->kv_dtype)) ||
      (rc = prof__str(c, t, "gemm", f, true, k->gemm, sizeof k->gemm)) ||
      (rc = prof__u32(c, t, "heads", f, true, &k->heads)) || (rc = prof__u32(c, t, "hidden", f, true, &k->dims.hidden)) ||
      (rc = prof__u32(c, t, "q_lora", f, true, &k->dims.q_lora)) ||
      (rc = prof__u32(c, t, "kv_lora", f, true, &k->dims.kv_lora)) ||
      (rc = prof__u32(c, t, "qk_nope", f, true, &k->dims.qk_nope)) ||
      (rc = prof__u32(c, t, "qk_rope", f, true, &k->dims.qk_rope)) ||
      (rc = prof__u32(c, t, "v_head", f, true, &k->dims.v_head)) ||
      (rc = prof__str(c, t, "model", f, false, model, sizeof model)))
    return rc;
  char fp[96];
  snprintf(fp, sizeof fp, "%s.phase", f);
  if (!strcmp(phase, "context")) k->context = true;
  else if (strcmp(phase, "generation"))
    return prof__bad(c, prof__get(t, "phase"), fp, "expected \"generation\" or \"context\", got \"%s\"", phase);
  if (k->kv_dtype == DT_FP16) k->kv_dtype = DT_BF16;
  uint32_t *bx = NULL, *ly = NULL;
  int nb = 0, nl = 0;
  if ((rc = prof__grid(c, t, "batch", f, false, &bx, &nb)) || (rc = prof__grid(c, t, "len", f, false, &ly, &nl))) {
    free(bx);
    free(ly);
    return rc;
  }
  const cJSON *ns = prof__get(t, "ns");
  char fn[96];
  snprintf(fn, sizeof fn, "%s.ns", f);
  if (!cJSON_IsArray(ns) || cJSON_GetArraySize(ns) != nb) {
    free(bx);
    free(ly);
    return prof__bad(c, ns, fn, "expected an array of %d rows (one per batch) of %d values (one per len)", nb, nl);
  }
  m->rows = sim_calloc((size_t)nb, sizeof *m->rows);
  int i = 0;
  size_t measured = 0;
  for (const cJSON *row = ns->child; row && !rc; row = row->next, i++) {
    char fr[112];
    snprintf(fr, sizeof fr, "%s[%d]", fn, i);
    if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != nl) {
      rc = prof__bad(c, row, fr, "expected an array of %d values (one per len; null = not measured)", nl);
      break;
    }
    mla_row r = {.batch = bx[i]};
    r.len = sim_malloc(sizeof *r.len * (size_t)nl);
    r.ns = sim_malloc(sizeof *r.ns * (size_t)nl);
    int q = 0;
    for (const cJSON *e = row->child; e; e = e->next, q++) {
      if (cJSON_IsNull(e)) continue;
      char fe[128];
      snprintf(fe, sizeof fe, "%s[%d]", fr, q);
      double v;
      if ((rc = prof__pos(c, e, fe, &v))) break;
      r.len[r.n] = ly[q];
      r.ns[r.n++] = v;
    }
    if (rc || r.n == 0) {
      free(r.len);
      free(r.ns);
      continue;
    }
    r.ll = sim_malloc(sizeof *r.ll * (size_t)r.n);
    r.lt = sim_malloc(sizeof *r.lt * (size_t)r.n);
    for (int q2 = 0; q2 < r.n; q2++) r.ll[q2] = log((double)r.len[q2]), r.lt[q2] = log(r.ns[q2]);
    m->rows[m->nrows++] = r;
    measured += (size_t)r.n;
  }
  free(bx);
  free(ly);
  if (rc) return rc;
  if (!measured) return prof__bad(c, ns, fn, "no measured value");
  m->lb = sim_malloc(sizeof *m->lb * (size_t)m->nrows);
  for (int r = 0; r < m->nrows; r++) m->lb[r] = log((double)m->rows[r].batch);
  return SIM_OK;
}

int prof__parse_mla(pctx *c, prof *p, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, "mla_module", "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  p->mla = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *p->mla);
  const cJSON **nodes = sim_calloc((size_t)(cnt ? cnt : 1), sizeof *nodes);
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "mla_module[%d]", i);
    nodes[i] = t;
    mla_tab *m = &p->mla[p->nmla++];
    m->idx = i;
    rc = parse_one(c, p, t, f, m);
  }
  if (!rc && p->nmla > 1) {
    qsort(p->mla, (size_t)p->nmla, sizeof *p->mla, cmp_mla);
    for (int q = 1; q < p->nmla && !rc; q++) {
      const mla_tab *a = &p->mla[q - 1], *b = &p->mla[q];
      if (cmp_mla(a, b)) continue;
      int second = a->idx < b->idx ? b->idx : a->idx, first = a->idx < b->idx ? a->idx : b->idx;
      char f[64];
      snprintf(f, sizeof f, "mla_module[%d]", second);
      rc = prof__bad(c, nodes[second], f, "duplicate table (also mla_module[%d])", first);
    }
  }
  free(nodes);
  return rc;
}

void prof__free_mla(prof *p) {
  for (int i = 0; i < p->nmla; i++) {
    mla_tab *m = &p->mla[i];
    for (int r = 0; r < m->nrows && !p->image; r++) {
      free(m->rows[r].len);
      free(m->rows[r].ns);
      free(m->rows[r].ll);
      free(m->rows[r].lt);
    }
    free(m->rows);
    if (!p->image) free(m->lb);
  }
  free(p->mla);
  p->mla = NULL;
  p->nmla = 0;
}

int prof_mla_tables(const prof *p) { return p ? p->nmla : 0; }

/* Time of one batch row at `len` (prof.h: log-log between measured lengths,
 * held below, linear with the last slope above). */
static double row_ns(const mla_row *r, uint32_t len) {
  double x = len;
  if (len <= r->len[0]) return r->ns[0];
  int n = r->n;
  if (len >= r->len[n - 1]) {
    if (n < 2) return r->ns[n - 1];
    double slope = (r->ns[n - 1] - r->ns[n - 2]) / ((double)r->len[n - 1] - r->len[n - 2]);
    double t = r->ns[n - 1] + (slope > 0 ? slope : 0) * (x - r->len[n - 1]);
    return t;
  }
  int i;
  double f;
  prof__bracket(r->ll, n, log(x), &i, &f);
  return f == 0 ? r->ns[i] : f == 1 ? r->ns[i + 1] : exp(r->lt[i] * (1 - f) + r->lt[i + 1] * f);
}

bool prof_mla_module_ns(const prof *p, const prof_mla_key *k, uint32_t batch, uint32_t len, double *ns) {
  if (!p || !p->nmla || !batch || !len) return false;
  mla_tab key;
  memset(&key, 0, sizeof key);
  key.key = *k;
  if (key.key.kv_dtype == DT_FP16) key.key.kv_dtype = DT_BF16;
  const mla_tab *m = bsearch(&key, p->mla, (size_t)p->nmla, sizeof *p->mla, cmp_mla);
  if (!m || !m->nrows) return false;
  const mla_row *rw = m->rows;
  int n = m->nrows;
  if (batch <= rw[0].batch) {
    *ns = row_ns(&rw[0], len);
  } else if (batch >= rw[n - 1].batch) {
    *ns = row_ns(&rw[n - 1], len) * (double)batch / rw[n - 1].batch;
  } else {
    int i;
    double f;
    prof__bracket(m->lb, n, log((double)batch), &i, &f);
    double a = row_ns(&rw[i], len);
    if (f == 0) *ns = a;
    else {
      double b = row_ns(&rw[i + 1], len);
      *ns = f == 1 ? b : exp(log(a) * (1 - f) + log(b) * f);
    }
  }
  return true;
}
