/* vcsv.h: a small strict CSV reader for the validation tables (internal to
 * sim/validate/).
 *
 * RFC 4180 subset: fields separated by ',', optionally double-quoted (a quoted
 * field may hold commas; "" inside quotes is one quote), LF or CRLF line ends,
 * the last line may lack one. Lines that are empty or start with '#' are
 * skipped (comments). The first remaining line is the header. Quoted fields
 * may not span lines (none of the sources needs it): an unterminated quote is
 * an error naming the line.
 * Ownership: vcsv_parse fills a caller-owned vcsv; vcsv_free releases it. */
#ifndef SIM_VCSV_H
#define SIM_VCSV_H

#include "core/common.h"

typedef struct vcsv_row {
  char **f;     /* fields (owned), NUL-terminated, unquoted */
  int n;        /* number of fields */
  int line;     /* 1-based line in the file */
} vcsv_row;

typedef struct vcsv {
  vcsv_row header;
  vcsv_row *rows;
  size_t n, cap;
} vcsv;

/* Parses text; `what` names the file in messages. Every data row must have
 * as many fields as the header ("FILE:LINE: expected N fields, got M"). */
int vcsv_parse(vcsv *c, const char *text, const char *what, sim_err *err);
void vcsv_free(vcsv *c);
/* Index of the header column named `name` (exact), or -1. */
int vcsv_col(const vcsv *c, const char *name);
/* Like vcsv_col but a missing column is an error naming the file. */
int vcsv_need(const vcsv *c, const char *name, const char *what, int *idx, sim_err *err);

/* Field parsers: the whole field must be consumed. On failure they return
 * SIM_EINPUT with "WHAT:LINE: COLUMN: expected ..., got 'TEXT'". */
int vcsv_u32(const vcsv *c, const vcsv_row *r, int col, const char *what, uint32_t lo, uint32_t hi, uint32_t *out,
             sim_err *err);
int vcsv_pos(const vcsv *c, const vcsv_row *r, int col, const char *what, double *out, sim_err *err);

#endif
