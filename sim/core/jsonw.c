/* jsonw.c: the streaming JSON writer (see jsonw.h). */
#include "core/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void jw_escape(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p == '\t') fputs("\\t", f);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void indent(jw *j, int depth) {
  fputc('\n', j->f);
  for (int i = 0; i < depth; i++) fputs("  ", j->f);
}

/* Separator, line break or indentation, and key of the next member. */
static void member(jw *j, const char *key) {
  SIM_ASSERT(j->depth > 0);
  int d = j->depth - 1, pl = j->per_line[d];
  if (pl < 0) {
    if (!j->first[d]) fputc(',', j->f);
    indent(j, j->depth);
  } else if (!j->first[d]) {
    fputc(',', j->f);
    if (pl > 0 && j->count[d] % (uint32_t)pl == 0) indent(j, j->depth);
    else fputc(' ', j->f);
  }
  j->first[d] = false;
  j->count[d]++;
  if (!j->is_arr[d]) {
    SIM_ASSERT(key != NULL);
    jw_escape(j->f, key);
    fputs(": ", j->f);
  }
}

static void open_container(jw *j, const char *key, bool arr, int per_line) {
  member(j, key);
  SIM_ASSERT(j->depth < JW_MAX_DEPTH);
  fputc(arr ? '[' : '{', j->f);
  j->first[j->depth] = true;
  j->is_arr[j->depth] = arr;
  /* inside a flow container everything stays inline */
  j->per_line[j->depth] = j->per_line[j->depth - 1] >= 0 ? 0 : per_line;
  j->count[j->depth] = 0;
  j->depth++;
}

void jw_begin(jw *j, FILE *f) {
  memset(j, 0, sizeof *j);
  j->f = f;
  fputc('{', f);
  j->first[0] = true;
  j->per_line[0] = -1;
  j->depth = 1;
}

void jw_obj(jw *j, const char *key) { open_container(j, key, false, -1); }
void jw_arr(jw *j, const char *key) { open_container(j, key, true, -1); }
void jw_arr_flow(jw *j, const char *key, int per_line) {
  SIM_ASSERT(per_line >= 0);
  open_container(j, key, true, per_line);
}

void jw_end(jw *j) {
  SIM_ASSERT(j->depth > 1);
  j->depth--;
  if (!j->first[j->depth] && j->per_line[j->depth] < 0) indent(j, j->depth);
  fputc(j->is_arr[j->depth] ? ']' : '}', j->f);
}

void jw_str(jw *j, const char *key, const char *v) {
  member(j, key);
  jw_escape(j->f, v ? v : "");
}

/* snprintf follows LC_NUMERIC: servesim never sets a locale, but a decimal
 * comma would make invalid JSON, so numbers are normalized here. */
static void dot_decimal(char *s) {
  for (; *s; s++)
    if (*s == ',') *s = '.';
}

void jw_num(jw *j, const char *key, double v) {
  member(j, key);
  if (!isfinite(v)) {
    fputs("null", j->f);
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  dot_decimal(buf);
  fputs(strcmp(buf, "-0") ? buf : "0", j->f);
}

void jw_format_sig(char *buf, size_t n, double v, int digits) {
  SIM_ASSERT(digits >= 1 && digits <= 17 && n >= 32);
  if (!isfinite(v)) {
    snprintf(buf, n, "null");
    return;
  }
  /* round through the decimal exponent form: exact and locale-normalized */
  char e[48];
  snprintf(e, sizeof e, "%.*e", digits - 1, v);
  dot_decimal(e);
  double r = strtod(e, NULL);
  if (r == 0) {
    snprintf(buf, n, "0");
  } else if (fabs(r) < 1e15 && r == floor(r)) {
    snprintf(buf, n, "%.0f", r);
  } else {
    snprintf(buf, n, "%.*g", digits, r);
    dot_decimal(buf);
  }
}

void jw_sig(jw *j, const char *key, double v, int digits) {
  member(j, key);
  char buf[64];
  jw_format_sig(buf, sizeof buf, v, digits);
  fputs(buf, j->f);
}

void jw_u64(jw *j, const char *key, uint64_t v) {
  member(j, key);
  fprintf(j->f, "%" PRIu64, v);
}

void jw_bool(jw *j, const char *key, bool v) {
  member(j, key);
  fputs(v ? "true" : "false", j->f);
}

void jw_null(jw *j, const char *key) {
  member(j, key);
  fputs("null", j->f);
}

int jw_finish(jw *j, sim_err *err) {
  SIM_ASSERT(j->depth == 1);
  fputs(j->first[0] ? "}\n" : "\n}\n", j->f);
  j->depth = 0;
  if (ferror(j->f)) return sim_errf(err, SIM_EINPUT, "write failed");
  return SIM_OK;
}
