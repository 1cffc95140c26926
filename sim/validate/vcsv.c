/* vcsv.c: a small strict CSV reader for the validation tables (see vcsv.h).
 * Invariant: every row in c->rows has exactly c->header.n fields. */
#include "validate/vcsv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void row_free(vcsv_row *r) {
  for (int i = 0; i < r->n; i++) free(r->f[i]);
  free(r->f);
  r->f = NULL;
  r->n = 0;
}

void vcsv_free(vcsv *c) {
  row_free(&c->header);
  for (size_t i = 0; i < c->n; i++) row_free(&c->rows[i]);
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* Splits one line [s, e) into fields. */
static int split_line(const char *s, const char *e, int line, const char *what, vcsv_row *out, sim_err *err) {
  size_t cap = 0;
  out->f = NULL;
  out->n = 0;
  out->line = line;
  const char *p = s;
  for (;;) {
    size_t bcap = (size_t)(e - p) + 1, k = 0;
    char *buf = sim_malloc(bcap);
    if (p < e && *p == '"') {
      p++;
      for (;;) {
        if (p >= e) {
          free(buf);
          return sim_errf(err, SIM_EINPUT, "%s:%d: field %d: unterminated quoted field", what, line, out->n + 1);
        }
        if (*p == '"') {
          if (p + 1 < e && p[1] == '"') {
            buf[k++] = '"';
            p += 2;
            continue;
          }
          p++;
          break;
        }
        buf[k++] = *p++;
      }
      if (p < e && *p != ',') {
        free(buf);
        return sim_errf(err, SIM_EINPUT, "%s:%d: field %d: text after a closing quote", what, line, out->n + 1);
      }
    } else {
      while (p < e && *p != ',') {
        if (*p == '"') {
          free(buf);
          return sim_errf(err, SIM_EINPUT, "%s:%d: field %d: stray quote in an unquoted field", what, line,
                          out->n + 1);
        }
        buf[k++] = *p++;
      }
    }
    buf[k] = 0;
    SIM_GROW(out->f, cap, (size_t)out->n + 1);
    out->f[out->n++] = buf;
    if (p >= e) break;
    p++; /* the comma */
  }
  return SIM_OK;
}

int vcsv_parse(vcsv *c, const char *text, const char *what, sim_err *err) {
  memset(c, 0, sizeof *c);
  const char *p = text;
  int line = 0;
  bool have_header = false;
  while (*p) {
    line++;
    const char *e = strchr(p, '\n');
    const char *next = e ? e + 1 : p + strlen(p);
    if (!e) e = p + strlen(p);
    if (e > p && e[-1] == '\r') e--;
    if (e == p || *p == '#') {
      p = next;
      continue;
    }
    vcsv_row r;
    int rc = split_line(p, e, line, what, &r, err);
    if (rc) {
      row_free(&r);
      vcsv_free(c);
      return rc;
    }
    if (!have_header) {
      c->header = r;
      have_header = true;
    } else {
      if (r.n != c->header.n) {
        int n = r.n;
        row_free(&r);
        vcsv_free(c);
        return sim_errf(err, SIM_EINPUT, "%s:%d: expected %d fields (as in the header), got %d", what, line,
                        c->header.n ? c->header.n : 0, n);
      }
      SIM_GROW(c->rows, c->cap, c->n + 1);
      c->rows[c->n++] = r;
    }
    p = next;
  }
  if (!have_header) return sim_errf(err, SIM_EINPUT, "%s: no header line", what);
  return SIM_OK;
}

int vcsv_col(const vcsv *c, const char *name) {
  for (int i = 0; i < c->header.n; i++)
    if (!strcmp(c->header.f[i], name)) return i;
  return -1;
}

int vcsv_need(const vcsv *c, const char *name, const char *what, int *idx, sim_err *err) {
  *idx = vcsv_col(c, name);
  if (*idx < 0)
    return sim_errf(err, SIM_EINPUT, "%s:%d: %s: required column missing from the header", what, c->header.line,
                    name);
  return SIM_OK;
}

int vcsv_u32(const vcsv *c, const vcsv_row *r, int col, const char *what, uint32_t lo, uint32_t hi, uint32_t *out,
             sim_err *err) {
  uint64_t v;
  const char *s = r->f[col];
  if (!sim_parse_u64(s, &v) || v < lo || v > hi)
    return sim_errf(err, SIM_EINPUT, "%s:%d: %s: expected an integer in [%u, %u], got '%s'", what, r->line,
                    c->header.f[col], lo, hi, s);
  *out = (uint32_t)v;
  return SIM_OK;
}

int vcsv_pos(const vcsv *c, const vcsv_row *r, int col, const char *what, double *out, sim_err *err) {
  double v;
  const char *s = r->f[col];
  /* measured milliseconds or tokens per second: 1e12 (31 years, or a trillion tokens a second) is far above any */
  if (!sim_parse_double(s, &v) || !(v > 0) || !(v <= 1e12))
    return sim_errf(err, SIM_EINPUT, "%s:%d: %s: expected a positive number up to 1e12, got '%s'", what, r->line,
                    c->header.f[col], s);
  *out = v;
  return SIM_OK;
}
