/* kdb_csv.h: reading one table of the kernel database: a CSV file, gzipped
 * (.csv.gz) or plain (zlib's gzopen reads both), with a header row naming
 * the columns. Columns are found by name, so a version that adds columns
 * reads like one that does not.
 *
 * Format accepted: fields separated by ',', no quoting (a '"' is refused:
 * the collectors write none), '\n' or "\r\n" line ends, blank lines skipped,
 * every row with exactly as many fields as the header.
 * Errors are SIM_EINPUT with "<file>:<line>: column <name>: <problem>"
 * (missing column, a row cut short, a field that is not a number of the
 * expected kind, a latency that is not a positive finite number).
 *
 * Ownership: kdb_csv_open fills a caller-owned reader that kdb_csv_close
 * releases (also after an error). Field pointers are valid until the next
 * kdb_csv_next. */
#ifndef SIM_KDB_CSV_H
#define SIM_KDB_CSV_H

#include "core/common.h"

typedef struct kdb_csv {
  void *gz;          /* gzFile */
  char path[1024];   /* for messages */
  char *line;        /* current line, split in place into fields (owned) */
  size_t cap;        /* bytes allocated for line */
  long lineno;       /* 1-based number of the current line */
  int ncols;         /* header fields */
  char **cols;       /* [ncols] header names (owned) */
  char **field;      /* [ncols] fields of the current row (into line) */
} kdb_csv;

/* Opens path and reads its header. */
int kdb_csv_open(kdb_csv *c, const char *path, sim_err *err);
void kdb_csv_close(kdb_csv *c);
/* Index of column `name`, or -1. */
int kdb_csv_col(const kdb_csv *c, const char *name);
/* Index of a required column; a missing one fails naming the header line. */
int kdb_csv_need(const kdb_csv *c, const char *name, int *col, sim_err *err);
/* Reads the next row: *row false at the end of the file. */
int kdb_csv_next(kdb_csv *c, bool *row, sim_err *err);
const char *kdb_csv_str(const kdb_csv *c, int col);
/* An integer field in [lo, hi] (written "128" or "128.0"). */
int kdb_csv_int(const kdb_csv *c, int col, double lo, double hi, uint64_t *out, sim_err *err);
/* A latency in milliseconds (positive, finite), returned in ns. */
int kdb_csv_ms(const kdb_csv *c, int col, double *ns, sim_err *err);
/* Fails with "<file>:<line>: column <name>: <message>". */
int kdb_csv_fail(const kdb_csv *c, int col, sim_err *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
