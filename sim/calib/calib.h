/* calib.h: calibration, the making of measured profiles (floor 7, beside the
 * studies): timing a model's kernels on the local GPU (calib_run.c), the
 * no-GPU plan, synthetic profile and leave-one-out report (calib_nogpu.c),
 * writing a run's profile and summary (calib_out.c), and importing NVIDIA
 * AIConfigurator's kernel database (calib_kdb.c). The command line
 * (`servesim calibrate`, cli/cmd_calibrate.c) only parses flags into these
 * options and prints the errors they return.
 * Each entry returns SIM_OK, or an exit status with *err's message when there
 * is one to print (an empty message: the diagnostics went to stderr already). */
#ifndef SIM_CALIB_H
#define SIM_CALIB_H

#include <stdio.h>

#include "hw/prof.h"
#include "kern.h"

#define MAX_CHECKS 64 /* correctness checks recorded per run */

/* ---- what a calibration run is asked ---- */

typedef struct calib_opts {
  const char *model;     /* model config: a name under configs/models/ or an HF config.json path */
  const char *out;       /* the profile to write (the caller has refused to replace an existing one) */
  const char *gpu_name;  /* gpu config name to record; NULL: mapped from the device name */
  const char *summary;   /* also write the summary table here; NULL: no */
  const char *command;   /* provenance: the command line */
  const char *date;      /* provenance: the date, UTC */
  bool quick;            /* sparser grids, fewer repeats */
  double time_budget_s;  /* stop starting new tables after this long; 0: no limit */
  uint64_t seed;         /* random inputs; 0: the fixed default */
} calib_opts;

/* Times the plan of req on the local GPU and writes o->out. Exit status 0,
 * SIM_EINTERNAL when a check failed or a measurement errored (the profile is
 * still written), SIM_EINPUT (no CUDA, no GPU, bad model). */
int calib_measure(const calib_opts *o, const kern_plan_req *req, sim_err *err);
/* Every kernel family's correctness check, skip[f] left out; prints each. */
int calib_check(const calib_opts *o, const bool *skip, sim_err *err);
/* The plan and its estimated GPU time from H200 ceilings; needs no GPU. */
int calib_dry_run(const calib_opts *o, const kern_plan_req *req, sim_err *err);
/* A SYNTHETIC profile (smooth roofline, H200 ceilings, no GPU) to o->out. */
int calib_synthetic(const calib_opts *o, const kern_plan_req *req, sim_err *err);
/* Prints the leave-one-out interpolation error of the profile at path. */
int calib_loo(const char *path, sim_err *err);
/* "NVIDIA H200" -> "h200": the gpu config a device's profile belongs to. */
void calib_map_gpu_name(const char *dev, char *out, size_t n);
/* The kernel shapes of a model config. */
int calib_model_shape(const char *model, kern_model_shape *s, sim_err *err);

/* ---- the results of a calibration run (filled by calib_run.c) ---- */

typedef struct calib_gemm {
  const kern_plan_gemm *plan;     /* the table planned (borrowed from the plan) */
  double ns[KERN_PLAN_MAX_GRID];  /* median ns per M of the plan; NAN: not measured (unsupported or failed) */
  bool done;                      /* at least one point measured */
} calib_gemm;

typedef struct calib_attn {
  const kern_plan_attn *plan;                         /* the table planned (borrowed) */
  double ns[KERN_PLAN_MAX_GRID][KERN_PLAN_MAX_GRID];  /* median ns per (x, y) of the plan; NAN: not measured */
  bool done;                                          /* usable: measured, with its first cell */
} calib_attn;

typedef struct calib_run {
  kern_device_info dev;                         /* the device measured */
  char gpu[64], date[64], command[1024];        /* gpu config name, date (UTC), the command line */
  double copy_Bps;                              /* probe: bytes read + written per s */
  double launch_eager_ns, launch_graph_ns;      /* probe: ns per empty kernel */
  double peak[DT_COUNT];                        /* probe: GEMM FLOP/s per dtype, 0 = not measured */
  kern_check checks[MAX_CHECKS];                /* the correctness checks run */
  int nchecks;
  bool fam_ok[KF_COUNT][DT_COUNT];              /* family and dtype passed its check */
  calib_gemm *gemm;                               /* [plan.ngemm] */
  calib_attn *attn;                               /* [plan.nattn] */
  char notes[8192];                             /* one note per line */
  int failures;                                 /* checks failed or measurements errored */
  bool complete;                                /* nothing stopped early */
} calib_run;

/* Writes the profile (format version 1, through core/jsonw.h) of a run to
 * path via a temporary renamed into place. */
int calib_write_profile(const char *path, const calib_run *r, const kern_plan *plan, const kern_opts *ko,
                        const kern_plan_req *req, sim_err *err);
/* Achieved rates against the measured ceilings, then the leave-one-out
 * error of p (when not NULL). */
void calib_summary(FILE *f, const calib_run *r, const kern_plan *plan, const prof *p, double wall_s);

/* The options of `calibrate --from-kernel-db` (all borrowed from argv). */
typedef struct calib_kdb_opts {
  const char *root;           /* --from-kernel-db DIR */
  const char *gpu;            /* --gpu: a gpu config name or path */
  const char *engine;         /* --engine vllm|trtllm|sglang */
  const char *engine_version; /* --engine-version, NULL = newest */
  const char *out;            /* --out FILE ("-" = stdout) */
  bool force;                 /* --force: replace --out */
  bool list;                  /* --list-versions: print the versions present and exit */
  const char *moe_out;        /* --moe-out FILE: the fused-MoE tables there, not in --out (NULL: in --out) */
  uint32_t gemm_m_step;       /* --gemm-m-step N: only GEMM rows with m <= N or a multiple of N (0: all) */
  const char *other_device;   /* --other-device NAME: also accept rows of this device (hw/kdb.h), NULL = none */
} calib_kdb_opts;

/* Runs the import; returns the exit status (0, 2 bad input, 1 internal). */
int calib_kernel_db(const calib_kdb_opts *o, sim_err *err);
/* One line per operation family the profile has: tables, points, median,
 * p90 and max leave-one-out error. */
void calib_print_loo(const prof *p, FILE *f);

#endif
