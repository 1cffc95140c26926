/* jsonw.h: the one streaming JSON writer of servesim (run results, plan,
 * sweep, capacity and validate outputs, profiles; cJSON only reads).
 * Deterministic: numbers print with "%.10g" (integers exactly through jw_u64,
 * a chosen number of significant digits through jw_sig), always with '.' as the decimal point whatever the locale,
 * non-finite numbers as null, keys in call order, two-space indentation.
 * Strings are escaped per RFC 8259 (bytes >= 0x80 pass through as UTF-8).
 *
 * Usage: jw_begin opens the root object; jw_obj/jw_arr open a member (key NULL
 * inside an array) closed by jw_end; jw_finish closes the root and reports a
 * write error. A "flow" array (jw_arr_flow) writes its members on few lines:
 * `per_line` members per line, 0 = all on the line that opens it (long
 * numeric tables stay compact and a line number still locates a row).
 * Containers opened inside a flow array are written inline (no newlines) and
 * must be flow arrays themselves or hold scalars only.
 * Caller-owned jw value, no heap. */
#ifndef SIM_JSONW_H
#define SIM_JSONW_H

#include <stdio.h>

#include "core/common.h"

enum { JW_MAX_DEPTH = 32 };

typedef struct jw {
  FILE *f;
  int depth;                   /* open containers, root included */
  bool first[JW_MAX_DEPTH];    /* no member written yet at this depth */
  bool is_arr[JW_MAX_DEPTH];   /* container kind at this depth */
  int per_line[JW_MAX_DEPTH];  /* flow container: members per line (0 = one line); -1 = one member per line */
  uint32_t count[JW_MAX_DEPTH];/* members written at this depth */
} jw;

void jw_begin(jw *j, FILE *f);
void jw_obj(jw *j, const char *key);
void jw_arr(jw *j, const char *key);
/* An array written compactly, per_line members per line (0: one line). */
void jw_arr_flow(jw *j, const char *key, int per_line);
void jw_end(jw *j);
void jw_str(jw *j, const char *key, const char *v);
void jw_num(jw *j, const char *key, double v);
/* v rounded to `digits` significant digits (1..17): written as an integer
 * when the rounded value is one below 1e15 ("123500"), else in %g form
 * ("812.3", "1.5e-07"); non-finite: null. */
void jw_sig(jw *j, const char *key, double v, int digits);
void jw_u64(jw *j, const char *key, uint64_t v);
void jw_bool(jw *j, const char *key, bool v);
void jw_null(jw *j, const char *key);
int jw_finish(jw *j, sim_err *err);
/* Writes s as a JSON string literal (quotes included). */
void jw_escape(FILE *f, const char *s);
/* Formats v with `digits` significant digits as jw_sig does into buf
 * (NUL-terminated, "null" when not finite). */
void jw_format_sig(char *buf, size_t n, double v, int digits);

#endif
