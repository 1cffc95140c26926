/* jsonw.c: the streaming JSON writer (see jsonw.h). */
#include "plan/jsonw.h"

#include <inttypes.h>
#include <math.h>
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

/* Separator, indentation and key of the next member. */
static void member(jw *j, const char *key) {
  SIM_ASSERT(j->depth > 0);
  if (!j->first[j->depth - 1]) fputc(',', j->f);
  j->first[j->depth - 1] = false;
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
  if (!j->is_arr[j->depth - 1]) {
    SIM_ASSERT(key != NULL);
    jw_escape(j->f, key);
    fputs(": ", j->f);
  }
}

static void open_container(jw *j, const char *key, bool arr) {
  member(j, key);
  SIM_ASSERT(j->depth < JW_MAX_DEPTH);
  fputc(arr ? '[' : '{', j->f);
  j->first[j->depth] = true;
  j->is_arr[j->depth] = arr;
  j->depth++;
}

void jw_begin(jw *j, FILE *f) {
  memset(j, 0, sizeof *j);
  j->f = f;
  fputc('{', f);
  j->first[0] = true;
  j->depth = 1;
}

void jw_obj(jw *j, const char *key) { open_container(j, key, false); }
void jw_arr(jw *j, const char *key) { open_container(j, key, true); }

void jw_end(jw *j) {
  SIM_ASSERT(j->depth > 1);
  j->depth--;
  if (!j->first[j->depth]) {
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
  }
  fputc(j->is_arr[j->depth] ? ']' : '}', j->f);
}

void jw_str(jw *j, const char *key, const char *v) {
  member(j, key);
  jw_escape(j->f, v ? v : "");
}

void jw_num(jw *j, const char *key, double v) {
  member(j, key);
  if (!isfinite(v)) {
    fputs("null", j->f);
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  fputs(strcmp(buf, "-0") ? buf : "0", j->f);
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
