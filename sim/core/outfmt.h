/* outfmt.h: small pieces every result writer shares: CSV fields and writing a
 * cJSON document. */
#ifndef SIM_OUTFMT_H
#define SIM_OUTFMT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "core/common.h"

/* A CSV string field, quoted (embedded quotes doubled) only when it holds a
 * comma, quote or line break (RFC 4180). */
void outfmt_csv_str(FILE *f, const char *s);
/* ",<number>" with 6 significant digits, or "," (empty) when not finite. */
void outfmt_csv_num(FILE *f, double v);
/* Prints root (tab-indented), deletes it, writes it and a newline to f. */
int outfmt_json_write(cJSON *root, FILE *f, sim_err *err);

#endif
