/* outfmt.h: small pieces every result writer shares: CSV fields and writing
 * a file whole or not at all (JSON goes through core/jsonw.h, the one JSON
 * writer). */
#ifndef SIM_OUTFMT_H
#define SIM_OUTFMT_H

#include <stdio.h>

#include "core/common.h"

/* A CSV string field, quoted (embedded quotes doubled) only when it holds a
 * comma, quote or line break (RFC 4180). */
void outfmt_csv_str(FILE *f, const char *s);
/* ",<number>" with 6 significant digits, or "," (empty) when not finite. */
void outfmt_csv_num(FILE *f, double v);

/* Output files (every command writes its files through these). */
typedef int (*outfmt_write_fn)(const void *arg, FILE *f, sim_err *err);
/* Writes fn(arg) to path through a temporary renamed into place, so a failed
 * run never leaves a half-written file; refuses to replace an existing file
 * without force (with force the file keeps its mode); refuses always a path
 * that is not a regular file, an input (outfmt_protect) or an output this
 * command already wrote; "-" = stdout. */
int outfmt_write_file(const char *path, bool force, outfmt_write_fn fn, const void *arg, sim_err *err);
/* Registers an input file of this command (a trace, a scenario, a part to merge): no output may replace it,
 * --force or not. A path that does not exist is ignored. */
void outfmt_protect(const char *path);
/* Before a long run: fails if one of paths[0..n) (NULL = not asked for,
 * "-" = stdout) exists and force is not given; fails whatever force says if
 * one is not a regular file, is a protected input, or is named twice. */
int outfmt_refuse_existing(const char *const *paths, int n, bool force, sim_err *err);

#endif
