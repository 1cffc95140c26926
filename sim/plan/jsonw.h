/* jsonw.h: a small streaming JSON writer for the planning outputs (plan,
 * sweep, capacity). Deterministic: numbers print with "%.10g" (integers
 * exactly through jw_u64), non-finite numbers as null, keys in call order,
 * two-space indentation. Strings are escaped per RFC 8259 (bytes >= 0x80 pass
 * through as UTF-8).
 * Usage: jw_begin opens the root object; jw_obj/jw_arr open a member (key NULL
 * inside an array) closed by jw_end; jw_finish closes the root and reports a
 * write error. Caller-owned jw value, no heap. */
#ifndef SIM_JSONW_H
#define SIM_JSONW_H

#include <stdio.h>

#include "core/common.h"

enum { JW_MAX_DEPTH = 32 };

typedef struct jw {
  FILE *f;
  int depth;                 /* open containers, root included */
  bool first[JW_MAX_DEPTH];  /* no member written yet at this depth */
  bool is_arr[JW_MAX_DEPTH]; /* container kind at this depth */
} jw;

void jw_begin(jw *j, FILE *f);
void jw_obj(jw *j, const char *key);
void jw_arr(jw *j, const char *key);
void jw_end(jw *j);
void jw_str(jw *j, const char *key, const char *v);
void jw_num(jw *j, const char *key, double v);
void jw_u64(jw *j, const char *key, uint64_t v);
void jw_bool(jw *j, const char *key, bool v);
void jw_null(jw *j, const char *key);
int jw_finish(jw *j, sim_err *err);
/* Writes s as a JSON string literal (quotes included). */
void jw_escape(FILE *f, const char *s);

#endif
