/* kdb_rows.h: what the kernel-db table importers share (kdb_rows.c): the
 * import's context, rows checked against the GPU and the directory's
 * version, name sets, skip reasons, sorted axes. Declares nothing of kdb.c
 * (scripts/check_layers.sh: no circle between a file and its parts). */
#ifndef SIM_KDB_ROWS_H
#define SIM_KDB_ROWS_H

#include "hw/kdb.h"
#include "hw/kdb_csv.h"

typedef struct kdb_ctx {
  const kdb_req *req;
  prof_doc *doc;
  char version[KDB_VERSION_LEN]; /* the framework version imported */
  uint32_t decode_offset;        /* kv_len = step + decode_offset */
  char other_tables[256];        /* tables with rows of req->other_device, ", " between */
} kdb_ctx;

/* Appends a phrase to the profile's kernel_db.caveat ("; " between phrases). */
void kdb__caveat(kdb_ctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks of the columns every table shares: `device` must name the GPU,
 * `version` values other than the directory's are counted for a note. */
typedef struct kdb_rows {
  int dev, ver;         /* column indices, -1 when absent */
  char odd_version[64]; /* first version value differing from the directory's */
  long odd;             /* rows with a differing version */
  long other;           /* rows measured on kdb_req.other_device */
  long total;           /* rows read so far */
} kdb_rows;
void kdb__rows_init(kdb_rows *r, const kdb_csv *c);
/* The next row of a table (*row false at its end), counted and checked (device, version): every reader's loop. */
int kdb__next_row(kdb_ctx *k, kdb_rows *r, kdb_csv *c, bool *row, sim_err *err);
/* Notes odd versions of a table file (name: its file name). */
void kdb__rows_note(kdb_ctx *k, const kdb_rows *r, const char *name, const char *expect);

/* Distinct strings (kernel_source values) with per-use bit masks. */
enum { KDB_MAX_NAMES = 31 };
typedef struct kdb_names {
  char v[KDB_MAX_NAMES][96];
  int n;
} kdb_names;
/* Bit of s in names (added when new; the last bit stands for "others"). */
uint32_t kdb__name_bit(kdb_names *names, const char *s);
/* Index of v in the sorted array a[0..n) (it must be there). */
int kdb__idx_of(const uint32_t *a, int n, uint32_t v);
/* The names of the bits in mask, sorted, joined with ", " into out. */
void kdb__names_join(const kdb_names *names, uint32_t mask, char *out, size_t n);

/* Counts of skipped rows by a reason string (a small sorted-on-output list). */
typedef struct kdb_skips {
  char why[16][96];
  long n[16];
  int k;
} kdb_skips;
void kdb__skip(kdb_skips *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "reason (N rows); reason (M rows)" in first-seen order into out. */
void kdb__skips_join(const kdb_skips *s, char *out, size_t n);
/* The end of a table's import: the rows skipped (s) and of odd versions (r) noted under the file's name. */
void kdb__table_notes(kdb_ctx *k, const kdb_rows *r, const kdb_skips *s, const char *file);

/* The order of two measurements of one table: by batch, then length, then time (fastest first). */
int kdb__cmp_cell(uint32_t b1, uint32_t l1, double t1, uint32_t b2, uint32_t l2, double t2);

/* Sorted unique values of v[0..n) (stride bytes apart, uint32 at each) into a
 * new array; *out_n gets the count. */
uint32_t *kdb__axis(const void *v, size_t n, size_t stride, int *out_n);

#endif
