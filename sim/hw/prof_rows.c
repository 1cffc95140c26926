/* prof_rows.c: the batch x length tables the module kinds share (prof_impl.h: MLA modules, prof_mla.c; Gated
 * DeltaNet kernels, prof_gdn.c): reading the file's full matrix (null where nothing was measured) into ragged
 * rows of the measured cells, the lookup (prof.h, prof_mla_module_ns), freeing, and the check that no two
 * tables of a kind share a key. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

/* One row of the matrix: its measured cells (r->n of them; 0 when none). */
static int parse_row(pctx *c, const cJSON *row, const char *fr, const uint32_t *ly, int nl, mla_row *r) {
  if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != nl)
    return prof__bad(c, row, fr, "expected an array of %d values (one per len; null = not measured)", nl);
  r->len = sim_malloc(sizeof *r->len * (size_t)nl);
  r->ns = sim_malloc(sizeof *r->ns * (size_t)nl);
  int q = 0, rc = SIM_OK;
  for (const cJSON *e = row->child; e && !rc; e = e->next, q++) {
    if (cJSON_IsNull(e)) continue;
    char fe[128];
    snprintf(fe, sizeof fe, "%s[%d]", fr, q);
    double v;
    if ((rc = prof__pos(c, e, fe, &v))) break;
    r->len[r->n] = ly[q];
    r->ns[r->n++] = v;
  }
  if (rc || r->n == 0) {
    free(r->len);
    free(r->ns);
    r->len = NULL, r->ns = NULL, r->n = 0;
    return rc;
  }
  r->ll = sim_malloc(sizeof *r->ll * (size_t)r->n);
  r->lt = sim_malloc(sizeof *r->lt * (size_t)r->n);
  for (int i = 0; i < r->n; i++) r->ll[i] = log((double)r->len[i]), r->lt[i] = log(r->ns[i]);
  return SIM_OK;
}

int prof__parse_phase(pctx *c, const cJSON *t, const char *f, const char *phase, bool *context) {
  char fp[96];
  snprintf(fp, sizeof fp, "%s.phase", f);
  if (!strcmp(phase, "context")) *context = true;
  else if (strcmp(phase, "generation"))
    return prof__bad(c, prof__get(t, "phase"), fp, "expected \"generation\" or \"context\", got \"%s\"", phase);
  return SIM_OK;
}

int prof__parse_rows(pctx *c, const cJSON *t, const char *f, mod_rows *m) {
  uint32_t *bx = NULL, *ly = NULL;
  int nb = 0, nl = 0, rc;
  mla_row **rows = &m->rows;
  int *nrows = &m->nrows;
  double **lb = &m->lb;
  *rows = NULL, *nrows = 0, *lb = NULL;
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
  *rows = sim_calloc((size_t)nb, sizeof **rows);
  int i = 0;
  size_t measured = 0;
  for (const cJSON *row = ns->child; row && !rc; row = row->next, i++) {
    char fr[112];
    snprintf(fr, sizeof fr, "%s[%d]", fn, i);
    mla_row r = {.batch = bx[i]};
    if ((rc = parse_row(c, row, fr, ly, nl, &r)) || !r.n) continue;
    (*rows)[(*nrows)++] = r;
    measured += (size_t)r.n;
  }
  free(bx);
  free(ly);
  if (rc) return rc;
  if (!measured) return prof__bad(c, ns, fn, "no measured value");
  *lb = sim_malloc(sizeof **lb * (size_t)*nrows);
  for (int r = 0; r < *nrows; r++) (*lb)[r] = log((double)(*rows)[r].batch);
  return SIM_OK;
}

void prof__free_mods(void *tabs, int n, size_t size, size_t rows_off, bool image) {
  for (int i = 0; i < n; i++) {
    mod_rows *m = (mod_rows *)((unsigned char *)tabs + (size_t)i * size + rows_off);
    for (int r = 0; r < m->nrows && !image; r++) {
      free(m->rows[r].len);
      free(m->rows[r].ns);
      free(m->rows[r].ll);
      free(m->rows[r].lt);
    }
    free(m->rows);
    if (!image) free(m->lb);
  }
  free(tabs);
}

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

static double rows_ns(const mod_rows *m, uint32_t batch, uint32_t len) {
  const mla_row *rw = m->rows;
  int n = m->nrows;
  if (batch <= rw[0].batch) return row_ns(&rw[0], len);
  if (batch >= rw[n - 1].batch) return row_ns(&rw[n - 1], len) * (double)batch / rw[n - 1].batch;
  int i;
  double f;
  prof__bracket(m->lb, n, log((double)batch), &i, &f);
  double a = row_ns(&rw[i], len);
  if (f == 0) return a;
  double b = row_ns(&rw[i + 1], len);
  return f == 1 ? b : exp(log(a) * (1 - f) + log(b) * f);
}

bool prof__mod_ns(const void *tabs, int n, size_t size, size_t rows_off, const void *key,
                  int (*cmp)(const void *, const void *), uint32_t batch, uint32_t len, double *ns) {
  if (!tabs || n <= 0 || !batch || !len) return false;
  const unsigned char *t = bsearch(key, tabs, (size_t)n, size, cmp);
  const mod_rows *m = t ? (const mod_rows *)(t + rows_off) : NULL;
  if (!m || !m->nrows) return false;
  *ns = rows_ns(m, batch, len);
  return true;
}

int prof__sort_unique(pctx *c, void *tabs, int n, size_t size, size_t idx_off, int (*cmp)(const void *, const void *),
                      const cJSON *arr, const char *field) {
  if (n < 2) return SIM_OK;
  qsort(tabs, (size_t)n, size, cmp);
  unsigned char *b = tabs;
  for (int q = 1; q < n; q++) {
    const void *a = b + (size_t)(q - 1) * size, *d = b + (size_t)q * size;
    if (cmp(a, d)) continue;
    int ia, id;
    memcpy(&ia, (const unsigned char *)a + idx_off, sizeof ia);
    memcpy(&id, (const unsigned char *)d + idx_off, sizeof id);
    int second = ia < id ? id : ia, first = ia < id ? ia : id;
    char f[64];
    snprintf(f, sizeof f, "%s[%d]", field, second);
    return prof__bad(c, cJSON_GetArrayItem(arr, second), f, "duplicate table (also %s[%d])", field, first);
  }
  return SIM_OK;
}

int prof__parse_mods(pctx *c, const cJSON *arr, const char *field, void **tabs, int *n, size_t size, size_t idx_off,
                     int (*one)(pctx *, const cJSON *, const char *, void *), int (*cmp)(const void *, const void *)) {
  if (!cJSON_IsArray(arr)) return prof__bad(c, arr, field, "expected an array of tables");
  int cnt = cJSON_GetArraySize(arr), i = 0, rc = SIM_OK;
  unsigned char *v = sim_calloc((size_t)(cnt ? cnt : 1), size);
  *tabs = v;
  for (const cJSON *t = arr->child; t && !rc; t = t->next, i++) {
    char f[64];
    snprintf(f, sizeof f, "%s[%d]", field, i);
    unsigned char *tab = v + (size_t)(*n)++ * size;
    memcpy(tab + idx_off, &i, sizeof i);
    rc = one(c, t, f, tab);
  }
  return rc ? rc : prof__sort_unique(c, v, *n, size, idx_off, cmp, arr, field);
}

void prof__free_modules(prof *p) {
  prof__free_mods(p->mla, p->nmla, sizeof *p->mla, offsetof(mla_tab, r), p->image);
  prof__free_mods(p->gdn, p->ngdn, sizeof *p->gdn, offsetof(gdn_tab, r), p->image);
  p->mla = NULL, p->gdn = NULL;
  p->nmla = p->ngdn = 0;
}
