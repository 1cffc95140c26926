/* calib.h: the parts of `servesim calibrate` that need no GPU, shared by
 * cmd_calibrate.c (the measuring command) and calib_kdb.c (the kernel-db
 * import and the leave-one-out report). */
#ifndef SIM_CALIB_H
#define SIM_CALIB_H

#include <stdio.h>

#include "hw/prof.h"

/* The options of `calibrate --from-kernel-db` (all borrowed from argv). */
typedef struct calib_kdb_opts {
  const char *root;           /* --from-kernel-db DIR */
  const char *gpu;            /* --gpu: a gpu config name or path */
  const char *engine;         /* --engine vllm|trtllm */
  const char *engine_version; /* --engine-version, NULL = newest */
  const char *out;            /* --out FILE ("-" = stdout) */
  bool force;                 /* --force: replace --out */
  bool list;                  /* --list-versions: print the versions present and exit */
} calib_kdb_opts;

/* Runs the import; returns the exit status (0, 2 bad input, 1 internal). */
int calib_kernel_db(const calib_kdb_opts *o);
/* One line per operation family the profile has: tables, points, median,
 * p90 and max leave-one-out error. */
void calib_print_loo(const prof *p, FILE *f);

#endif
