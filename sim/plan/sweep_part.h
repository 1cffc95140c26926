/* sweep_part.h: one shard's rows of a sweep (`servesim sweep --shard K/N
 * --part FILE`), for `servesim merge` to combine into exactly what the
 * unsplit sweep writes. The file holds the sweep's own arguments (so merge
 * rebuilds the same grid, scenario, SLOs and prices), which shard of how many
 * it is, and its rows as the simulation left them, byte for byte: a part is
 * read back only by the same servesim build (version and row size checked)
 * on the same kind of machine, as on a cluster whose nodes share the binary.
 * A capacity search shards the same way (its candidates are the rows; the
 * recommendation, which simulates the target, is made by merge).
 * Layout: text header lines, then the raw rows:
 *   servesim-part 1 KIND          (KIND: sweep or capacity)
 *   version V row_bytes B shard K of N rows R fingerprint F
 *   args L            (then L bytes: the arguments, NUL-separated)
 *   data M checksum C (then M x (uint64 index, row bytes))
 * F fingerprints kind, version, row size and arguments: parts of another
 * sweep (or build) do not merge. C is FNV-1a 64 over the M (index, row) pairs
 * as written: a part changed on its way (a bad disk, a cut copy) is refused as
 * corrupted. The rows are untrusted input all the same (parts travel between
 * nodes, and a forger recomputes C): sweep_part_read checks every field of
 * every record on its raw bytes before anything reads it as a struct, and the
 * fill functions check it against the rebuilt set (plan/part_rows.h); a
 * refusal names the part, the row and the field. */
#ifndef SIM_SWEEP_PART_H
#define SIM_SWEEP_PART_H

#include <stdio.h>

#include "plan/sweep.h"

typedef struct sweep_part {
  char path[1024];
  char kind[16];          /* "sweep" or "capacity" */
  size_t row_bytes;       /* sizeof(sweep_row) or sizeof(cap_candidate) */
  size_t k, n, rows;      /* shard k of n, of a grid of `rows` rows */
  uint64_t fingerprint;
  char *args;             /* NUL-separated, args_len bytes (owned) */
  size_t args_len;
  size_t m;               /* rows held */
  uint64_t *index;        /* [m] grid indices (owned) */
  unsigned char *row;     /* [m x row_bytes] (owned) */
} sweep_part;

uint64_t sweep_part_fingerprint(const char *kind, size_t row_bytes, const char *args, size_t args_len);
/* Writes shard k of n of the n_rows rows at `rows` (row_bytes each): rows i with i % n == k - 1. */
int sweep_part_write(const char *kind, const void *rows, size_t row_bytes, size_t n_rows, size_t k, size_t n,
                     const char *args, size_t args_len, FILE *f, const char *path, sim_err *err);
/* Reads a part; expect_row_bytes(kind) gives the row size this build has for that kind (0: unknown kind). */
int sweep_part_read(sweep_part *p, const char *path, sim_err *err);
void sweep_part_free(sweep_part *p);
/* The np parts belong to one sweep (same fingerprint, shard count, grid) and hold every shard exactly once;
 * else an error naming the part (or the missing shard numbers). */
int sweep_parts_check(const sweep_part *p, int np, sim_err *err);
/* Puts the parts' rows into s (rebuilt from their arguments: the same grid, checked row by row); the caller
 * then finishes it (sweep_finish: the Pareto frontiers), and s is what the unsplit sweep computed. */
int sweep_parts_fill(sweep_set *s, const sweep_part *p, int np, sim_err *err);
/* The same for a capacity search: the candidates' searches in, then capacity_finish (which simulates the
 * recommendation at the target rate, as the unsplit search does). */
struct capacity_set;
int capacity_parts_fill(struct capacity_set *s, const sweep_part *p, int np, sim_err *err);

#endif
