/* sweep_part.h: one shard's rows of a sweep (`servesim sweep --shard K/N
 * --part FILE`), for `servesim merge` to combine into exactly what the
 * unsplit sweep writes. The file holds the sweep's own arguments (so merge
 * rebuilds the same grid, scenario, SLOs and prices), which shard of how many
 * it is, and its rows as the simulation left them, byte for byte: a part is
 * read back only by the same servesim build (version and row size checked)
 * on the same kind of machine, as on a cluster whose nodes share the binary.
 * Layout: text header lines, then the raw rows:
 *   servesim-sweep-part 1
 *   version V row_bytes B shard K of N rows R fingerprint F
 *   args L            (then L bytes: the arguments, NUL-separated)
 *   data M            (then M x (uint64 index, row bytes))
 * F fingerprints version, row size and arguments: parts of another sweep
 * (or build) do not merge. */
#ifndef SIM_SWEEP_PART_H
#define SIM_SWEEP_PART_H

#include <stdio.h>

#include "plan/sweep.h"

typedef struct sweep_part {
  char path[1024];
  size_t k, n, rows;      /* shard k of n, of a grid of `rows` rows */
  uint64_t fingerprint;
  char *args;             /* NUL-separated, args_len bytes (owned) */
  size_t args_len;
  size_t m;               /* rows held */
  uint64_t *index;        /* [m] grid indices (owned) */
  sweep_row *row;         /* [m] (owned) */
} sweep_part;

uint64_t sweep_part_fingerprint(const char *args, size_t args_len);
/* Writes shard k of n of s (its rows i with i % n == k - 1). */
int sweep_part_write(const sweep_set *s, size_t k, size_t n, const char *args, size_t args_len, FILE *f,
                     const char *path, sim_err *err);
int sweep_part_read(sweep_part *p, const char *path, sim_err *err);
void sweep_part_free(sweep_part *p);
/* The np parts belong to one sweep (same fingerprint, shard count, grid) and hold every shard exactly once;
 * else an error naming the part (or the missing shard numbers). */
int sweep_parts_check(const sweep_part *p, int np, sim_err *err);
/* Puts the parts' rows into s (rebuilt from their arguments: the same grid, checked row by row) and finishes
 * it (Pareto frontiers): s is then what the unsplit sweep computed. */
int sweep_parts_fill(sweep_set *s, const sweep_part *p, int np, sim_err *err);

#endif
