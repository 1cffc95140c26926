/* kdb_csv.c: the kernel-db table reader (see kdb_csv.h). */
#include "hw/kdb_csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int kdb_csv_fail(const kdb_csv *c, int col, sim_err *err, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sim_errf(err, SIM_EINPUT, "%s:%ld: column %s: %s", c->path, c->lineno,
                  col >= 0 && col < c->ncols ? c->cols[col] : "?", msg);
}

/* Reads one line (without its end) into c->line; *got false at the end. */
static int read_line(kdb_csv *c, bool *got, sim_err *err) {
  size_t len = 0;
  *got = false;
  for (;;) {
    if (c->cap - len < 2) {
      c->cap = c->cap ? c->cap * 2 : 4096;
      c->line = sim_realloc(c->line, c->cap);
    }
    if (!gzgets((gzFile)c->gz, c->line + len, (int)(c->cap - len > 1u << 30 ? 1u << 30 : c->cap - len))) {
      int zerr;
      const char *msg = gzerror((gzFile)c->gz, &zerr);
      if (zerr != Z_OK && zerr != Z_STREAM_END)
        return sim_errf(err, SIM_EINPUT, "%s:%ld: read error: %s (a truncated or corrupt .gz file?)", c->path,
                        c->lineno + 1, msg);
      if (len == 0) return SIM_OK; /* end of file */
      break;
    }
    len += strlen(c->line + len);
    if (len && c->line[len - 1] == '\n') break;
    if (gzeof((gzFile)c->gz)) { /* a last line without its end, or a stream cut short */
      int zerr;
      const char *msg = gzerror((gzFile)c->gz, &zerr);
      if (zerr != Z_OK && zerr != Z_STREAM_END)
        return sim_errf(err, SIM_EINPUT, "%s:%ld: read error: %s (a truncated or corrupt .gz file?)", c->path,
                        c->lineno + 1, msg);
      break;
    }
  }
  while (len && (c->line[len - 1] == '\n' || c->line[len - 1] == '\r')) c->line[--len] = 0;
  c->lineno++;
  *got = true;
  return SIM_OK;
}

static bool blank(const char *s) {
  for (; *s; s++)
    if (*s != ' ' && *s != '\t') return false;
  return true;
}

/* Splits c->line at commas into out[0..max); returns the field count. */
static int split(char *s, char **out, int max) {
  int n = 0;
  for (;;) {
    if (n < max) out[n] = s;
    n++;
    char *comma = strchr(s, ',');
    if (!comma) break;
    *comma = 0;
    s = comma + 1;
  }
  return n;
}

int kdb_csv_open(kdb_csv *c, const char *path, sim_err *err) {
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  errno = 0;
  c->gz = gzopen(path, "rb");
  if (!c->gz) return sim_errf(err, SIM_EINPUT, "%s: cannot open: %s", path, errno ? strerror(errno) : "zlib error");
  bool got;
  int rc = read_line(c, &got, err);
  if (rc) return rc;
  if (!got || blank(c->line)) return sim_errf(err, SIM_EINPUT, "%s:1: no header row (an empty table)", path);
  if (strchr(c->line, '"')) return sim_errf(err, SIM_EINPUT, "%s:1: quoted fields are not supported", path);
  int n = 1;
  for (const char *q = c->line; *q; q++) n += *q == ',';
  c->cols = sim_calloc((size_t)n, sizeof *c->cols);
  c->field = sim_calloc((size_t)n, sizeof *c->field);
  char **tmp = sim_calloc((size_t)n, sizeof *tmp);
  split(c->line, tmp, n);
  for (int i = 0; i < n; i++) {
    c->cols[i] = sim_strdup(tmp[i]);
    for (int k = 0; k < i; k++)
      if (!strcmp(c->cols[k], c->cols[i])) {
        free(tmp);
        c->ncols = i + 1;
        return sim_errf(err, SIM_EINPUT, "%s:1: column %s: appears twice in the header", path, c->cols[i]);
      }
  }
  free(tmp);
  c->ncols = n;
  return SIM_OK;
}

void kdb_csv_close(kdb_csv *c) {
  if (c->gz) gzclose((gzFile)c->gz);
  for (int i = 0; i < c->ncols; i++) free(c->cols[i]);
  free(c->cols);
  free(c->field);
  free(c->line);
  memset(c, 0, sizeof *c);
}

int kdb_csv_col(const kdb_csv *c, const char *name) {
  for (int i = 0; i < c->ncols; i++)
    if (!strcmp(c->cols[i], name)) return i;
  return -1;
}

int kdb_csv_need(const kdb_csv *c, const char *name, int *col, sim_err *err) {
  *col = kdb_csv_col(c, name);
  if (*col >= 0) return SIM_OK;
  char have[600] = "";
  size_t len = 0;
  for (int i = 0; i < c->ncols && len + 2 < sizeof have; i++)
    len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "", c->cols[i]);
  return sim_errf(err, SIM_EINPUT, "%s:1: column %s: missing (the header has %s)", c->path, name, have);
}

int kdb_csv_next(kdb_csv *c, bool *row, sim_err *err) {
  *row = false;
  for (;;) {
    bool got;
    int rc = read_line(c, &got, err);
    if (rc || !got) return rc;
    if (!blank(c->line)) break;
  }
  if (strchr(c->line, '"')) return sim_errf(err, SIM_EINPUT, "%s:%ld: quoted fields are not supported", c->path, c->lineno);
  int n = split(c->line, c->field, c->ncols);
  if (n < c->ncols)
    return kdb_csv_fail(c, n, err, "missing (the row has %d of the header's %d fields: cut short?)", n, c->ncols);
  if (n > c->ncols)
    return sim_errf(err, SIM_EINPUT, "%s:%ld: the row has %d fields, the header %d", c->path, c->lineno, n, c->ncols);
  *row = true;
  return SIM_OK;
}

const char *kdb_csv_str(const kdb_csv *c, int col) {
  SIM_ASSERT(col >= 0 && col < c->ncols);
  return c->field[col];
}

int kdb_csv_int(const kdb_csv *c, int col, double lo, double hi, uint64_t *out, sim_err *err) {
  double v;
  const char *s = kdb_csv_str(c, col);
  if (!sim_parse_double(s, &v) || v != floor(v) || v < lo || v > hi)
    return kdb_csv_fail(c, col, err, "'%s' is not an integer in [%.0f, %.0f]", s, lo, hi);
  *out = (uint64_t)v;
  return SIM_OK;
}

int kdb_csv_ms(const kdb_csv *c, int col, double *ns, sim_err *err) {
  double v;
  const char *s = kdb_csv_str(c, col);
  if (!sim_parse_double(s, &v) || !isfinite(v))
    return kdb_csv_fail(c, col, err, "'%s' is not a finite number (milliseconds)", s);
  if (v <= 0) return kdb_csv_fail(c, col, err, "%s ms: a latency must be positive", s);
  *ns = v * 1e6;
  return SIM_OK;
}
