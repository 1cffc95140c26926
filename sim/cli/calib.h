/* calib.h: the parts of `servesim calibrate` shared by its files:
 * cmd_calibrate.c (the command: checks, sweep, dry run, synthetic),
 * calib_out.c (the results of a run: writing the profile, the summary) and
 * calib_kdb.c (the kernel-db import, the leave-one-out report). */
#ifndef SIM_CALIB_H
#define SIM_CALIB_H

#include <stdio.h>

#include "hw/prof.h"
#include "kern.h"

#define MAX_CHECKS 64 /* correctness checks recorded per run */

/* ---- the results of a calibration run (filled by cmd_calibrate.c) ---- */

typedef struct cal_gemm {
  const kern_plan_gemm *plan;     /* the table planned (borrowed from the plan) */
  double ns[KERN_PLAN_MAX_GRID];  /* median ns per M of the plan; NAN: not measured (unsupported or failed) */
  bool done;                      /* at least one point measured */
} cal_gemm;

typedef struct cal_attn {
  const kern_plan_attn *plan;                         /* the table planned (borrowed) */
  double ns[KERN_PLAN_MAX_GRID][KERN_PLAN_MAX_GRID];  /* median ns per (x, y) of the plan; NAN: not measured */
  bool done;                                          /* usable: measured, with its first cell */
} cal_attn;

typedef struct cal_run {
  kern_device_info dev;                         /* the device measured */
  char gpu[64], date[64], command[1024];        /* gpu config name, date (UTC), the command line */
  double copy_Bps;                              /* probe: bytes read + written per s */
  double launch_eager_ns, launch_graph_ns;      /* probe: ns per empty kernel */
  double peak[DT_COUNT];                        /* probe: GEMM FLOP/s per dtype, 0 = not measured */
  kern_check checks[MAX_CHECKS];                /* the correctness checks run */
  int nchecks;
  bool fam_ok[KF_COUNT][DT_COUNT];              /* family and dtype passed its check */
  cal_gemm *gemm;                               /* [plan.ngemm] */
  cal_attn *attn;                               /* [plan.nattn] */
  char notes[8192];                             /* one note per line */
  int failures;                                 /* checks failed or measurements errored */
  bool complete;                                /* nothing stopped early */
} cal_run;

/* Writes the profile (format version 1, through core/jsonw.h) of a run to
 * path via a temporary renamed into place. */
int calib_write_profile(const char *path, const cal_run *r, const kern_plan *plan, const kern_opts *ko,
                        const kern_plan_req *req, sim_err *err);
/* Achieved rates against the measured ceilings, then the leave-one-out
 * error of p (when not NULL). */
void calib_summary(FILE *f, const cal_run *r, const kern_plan *plan, const prof *p, double wall_s);

/* The options of `calibrate --from-kernel-db` (all borrowed from argv). */
typedef struct calib_kdb_opts {
  const char *root;           /* --from-kernel-db DIR */
  const char *gpu;            /* --gpu: a gpu config name or path */
  const char *engine;         /* --engine vllm|trtllm */
  const char *engine_version; /* --engine-version, NULL = newest */
  const char *out;            /* --out FILE ("-" = stdout) */
  bool force;                 /* --force: replace --out */
  bool list;                  /* --list-versions: print the versions present and exit */
  const char *moe_out;        /* --moe-out FILE: the fused-MoE tables there, not in --out (NULL: in --out) */
} calib_kdb_opts;

/* Runs the import; returns the exit status (0, 2 bad input, 1 internal). */
int calib_kernel_db(const calib_kdb_opts *o);
/* One line per operation family the profile has: tables, points, median,
 * p90 and max leave-one-out error. */
void calib_print_loo(const prof *p, FILE *f);

#endif
