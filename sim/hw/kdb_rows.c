/* kdb_rows.c: what the kernel-db table importers share (kdb_rows.h): rows
 * checked against the GPU and the directory's version, name sets, skip
 * reasons and sorted axes. A leaf: kdb.c and the importers (kdb_gemm.c,
 * kdb_attn.c, kdb_moe.c, kdb_mla.c) call it; it calls none of them. */
#include "hw/kdb_rows.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kdb__rows_init(kdb_rows *r, const kdb_csv *c) {
  memset(r, 0, sizeof *r);
  r->dev = kdb_csv_col(c, "device");
  r->ver = kdb_csv_col(c, "version");
}

static int rows_check(kdb_ctx *k, kdb_rows *r, const kdb_csv *c, sim_err *err) {
  if (r->dev >= 0) {
    const char *d = kdb_csv_str(c, r->dev);
    const char *other = k->req->other_device;
    if (!cfg_gpu_has_alias(k->req->gpu, d) && other && other[0] && !strcmp(d, other)) {
      r->other++;
      return SIM_OK; /* named in the table's note and the caveat (kdb__rows_note) */
    }
    if (!cfg_gpu_has_alias(k->req->gpu, d))
      return kdb_csv_fail(c, r->dev, err, "'%s' is not a name of gpu %s (add it to the aliases of configs/gpus/%s.json "
                                          "if it is that GPU)",
                          d, k->req->gpu->name, k->req->gpu->name);
    if (!k->doc->device[0]) snprintf(k->doc->device, sizeof k->doc->device, "%s", d);
  }
  if (r->ver >= 0) {
    const char *v = kdb_csv_str(c, r->ver);
    if (strcmp(v, k->version)) {
      if (!r->odd) snprintf(r->odd_version, sizeof r->odd_version, "%s", v);
      r->odd++;
    }
  }
  return SIM_OK;
}

int kdb__next_row(kdb_ctx *k, kdb_rows *r, kdb_csv *c, bool *row, sim_err *err) {
  int rc = kdb_csv_next(c, row, err);
  if (rc || !*row) return rc;
  r->total++;
  return rows_check(k, r, c, err);
}

void kdb__rows_note(kdb_ctx *k, const kdb_rows *r, const char *name, const char *expect) {
  if (r->odd)
    prof_doc_note(k->doc, "%s: %ld rows give version %s (directory %s)", name, r->odd, r->odd_version, expect);
  if (r->other) {
    prof_doc_note(k->doc, "%s: %ld of %ld rows say device %s, not %s: accepted as that GPU's measurements "
                          "(--other-device)",
                  name, r->other, r->total, k->req->other_device, k->req->gpu->name);
    size_t len = strlen(k->other_tables), nl = strcspn(name, "."); /* the table's name without .csv.gz */
    if (len + 2 < sizeof k->other_tables)
      snprintf(k->other_tables + len, sizeof k->other_tables - len, "%s%.*s", len ? ", " : "", (int)nl, name);
  }
}

void kdb__caveat(kdb_ctx *k, const char *fmt, ...) {
  char *cv = k->doc->kdb_caveat;
  size_t len = strlen(cv), cap = sizeof k->doc->kdb_caveat;
  if (len && len + 2 < cap) len += (size_t)snprintf(cv + len, cap - len, "; ");
  va_list ap;
  va_start(ap, fmt);
  if (len + 1 < cap) vsnprintf(cv + len, cap - len, fmt, ap);
  va_end(ap);
}

int kdb__idx_of(const uint32_t *a, int n, uint32_t v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  SIM_ASSERT(lo < n && a[lo] == v);
  return lo;
}

uint32_t kdb__name_bit(kdb_names *names, const char *s) {
  for (int i = 0; i < names->n; i++)
    if (!strcmp(names->v[i], s)) return 1u << i;
  if (names->n < KDB_MAX_NAMES - 1) {
    snprintf(names->v[names->n], sizeof names->v[0], "%s", s);
    return 1u << names->n++;
  }
  snprintf(names->v[KDB_MAX_NAMES - 1], sizeof names->v[0], "(others)");
  return 1u << (KDB_MAX_NAMES - 1);
}

void kdb__names_join(const kdb_names *names, uint32_t mask, char *out, size_t n) {
  const char *v[KDB_MAX_NAMES];
  int k = 0;
  for (int i = 0; i < KDB_MAX_NAMES; i++)
    if (mask & (1u << i)) v[k++] = names->v[i];
  qsort(v, (size_t)k, sizeof *v, sim_cmp_cstr);
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < k && len + 1 < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", v[i]);
}

void kdb__skip(kdb_skips *s, const char *fmt, ...) {
  char why[96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  for (int i = 0; i < s->k; i++)
    if (!strcmp(s->why[i], why)) {
      s->n[i]++;
      return;
    }
  if (s->k < 15) {
    snprintf(s->why[s->k], sizeof s->why[0], "%s", why);
    s->n[s->k++] = 1;
    return;
  }
  if (s->k == 15) { /* the last slot gathers the rest */
    snprintf(s->why[15], sizeof s->why[0], "other reasons");
    s->n[15] = 0;
    s->k = 16;
  }
  s->n[15]++;
}

void kdb__skips_join(const kdb_skips *s, char *out, size_t n) {
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < s->k && len + 1 < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s%s (%ld rows)", i ? "; " : "", s->why[i], s->n[i]);
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

uint32_t *kdb__axis(const void *v, size_t n, size_t stride, int *out_n) {
  uint32_t *a = sim_malloc(sizeof *a * (n ? n : 1));
  for (size_t i = 0; i < n; i++) memcpy(&a[i], (const char *)v + i * stride, sizeof *a);
  qsort(a, n, sizeof *a, cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!k || a[k - 1] != a[i]) a[k++] = a[i];
  *out_n = (int)k;
  return a;
}

int kdb__cmp_cell(uint32_t b1, uint32_t l1, double t1, uint32_t b2, uint32_t l2, double t2) {
  if (b1 != b2) return b1 < b2 ? -1 : 1;
  if (l1 != l2) return l1 < l2 ? -1 : 1;
  return t1 < t2 ? -1 : t1 > t2 ? 1 : 0;
}

void kdb__table_notes(kdb_ctx *k, const kdb_rows *r, const kdb_skips *s, const char *file) {
  if (s->k) {
    char t[1024];
    kdb__skips_join(s, t, sizeof t);
    prof_doc_note(k->doc, "%s: skipped: %s", file, t);
  }
  kdb__rows_note(k, r, file, k->version);
}
