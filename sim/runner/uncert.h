/* uncert.h: the cost model's error by stratum, and prediction intervals
 * (docs/UNCERTAINTY.md).
 *
 * A residual table holds, per stratum key (runner/stratum.h) and per metric, the
 * quantiles of the log-ratio residual r = ln(measured / predicted) over the
 * held-out validation points of that stratum, at the levels unc_levels, with
 * their count. `servesim validate --residuals-out FILE` builds it
 * (validate/vresid.c); the bundled one is configs/uncertainty/residuals.json.
 *
 * Merging sparse strata upward: the table holds an entry for every key of each
 * point's merge chain (stratum_chain: the full key, then the arch, then the cost
 * source, then the loop replaced by '*') that has at least min_points
 * residuals of the metric from at least min_models distinct models (the error
 * of one model is mostly one shift shared by all its points: a key resting on
 * one or two models says little about the next model); a lookup takes the first key of the chain the
 * table has. So a stratum with too few points borrows from the coarser one it
 * belongs to, and the key used is always reported.
 *
 * The interval of a prediction x at level L (two-sided, equal tails):
 *   model part    quantiles q(p) of r, linear between the stored levels (clamped at the ends);
 *   workload part the spread of the metric over the run's seeds: s = sample standard deviation of ln(x_k)
 *                 over the run and its extra seeds (0 when the workload is a fixed trace);
 *   combined      the two independent in log space: with s = 0, [x e^{q((1-L)/2)}, x e^{q((1+L)/2)}]; else the
 *                 quantiles of r + s z (z standard normal, r drawn by its quantile function at a uniform u)
 *                 over UNC_DRAWS Monte Carlo draws of a fixed seed (deterministic).
 * Ownership: unc_table_init / unc_table_free on caller storage. */
#ifndef SIM_UNCERT_H
#define SIM_UNCERT_H

#include "core/common.h"
#include "runner/stratum.h"

#define UNC_NQ 11
extern const double unc_levels[UNC_NQ]; /* 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99 */
#define UNC_DRAWS 20000
#define UNC_MC_SEED 0x5e55u
#define UNC_MAX_LEVEL 0.98 /* its tails are the outermost stored levels */

typedef enum unc_metric { UM_TTFT = 0, UM_TPOT, UM_E2E, UM_TTFT_P99, UM_TPUT, UM_COUNT } unc_metric;
/* "ttft", "tpot", "e2e", "ttft_p99", "throughput" (mean TTFT, TPOT, E2E; p99 TTFT; output tokens/s) */
const char *unc_metric_name(unc_metric m);

typedef struct unc_dist {
  size_t n;             /* residuals behind it; 0 = no data */
  size_t models;        /* distinct models they come from */
  double q[UNC_NQ];     /* quantiles of ln(measured / predicted) at unc_levels */
} unc_dist;

typedef struct unc_entry {
  char key[32];         /* stratum key or merged key ("version/closed/ *", ...) */
  unc_dist d[UM_COUNT];
} unc_entry;

typedef struct unc_table {
  unc_entry *e;
  size_t n, cap;
  uint32_t min_points;  /* residuals a key needs to hold a metric */
  uint32_t min_models;  /* distinct models they must come from */
  char source[512];     /* where the table came from (file, or "bundled ...") */
} unc_table;

void unc_table_init(unc_table *t, uint32_t min_points, uint32_t min_models);
void unc_table_free(unc_table *t);
/* The entry of key, added (empty) when absent. */
unc_entry *unc_table_entry(unc_table *t, const char *key);
const unc_entry *unc_table_find(const unc_table *t, const char *key);
/* Sorts x[0..n) and fills d with its quantiles (numpy's linear interpolation). */
void unc_dist_from(unc_dist *d, double *x, size_t n);
/* The quantile at p in [0, 1], linear between the stored levels, clamped outside them. */
double unc_quantile(const unc_dist *d, double p);
/* The first key of s's merge chain with data for m, or NULL; *key (may be NULL) gets the key used. */
const unc_dist *unc_lookup(const unc_table *t, const stratum *s, unc_metric m, const char **key);

/* Reads a residual file (the format validate writes; docs/UNCERTAINTY.md); SIM_EINPUT "FILE:LINE: field: problem". */
int unc_table_parse(unc_table *t, const char *text, const char *what, sim_err *err);
/* path NULL: the bundled configs/uncertainty/residuals.json ($SERVESIM_DATA_DIR's first when it has one). */
int unc_table_load(unc_table *t, const char *path, sim_err *err);

typedef struct unc_interval {
  bool have;            /* false: no residual data for the metric in the stratum (lo, hi NAN) */
  double level, point, lo, hi;
  char key[32];         /* the stratum key the model part came from */
  size_t n_model;       /* residuals behind the model part */
  double model_lo, model_hi; /* the model part alone at this level, as factors on the point (e^q) */
  double workload_sd;   /* s: the workload part, standard deviation of ln(value) over the seeds */
  size_t n_seeds;       /* values the workload part came from (1 = none) */
} unc_interval;

/* The interval of `point` at `level` from the model part d (NULL: no data) and the values of the same metric
 * over the run's seeds (seeds[0] = point; n_seeds 1 = no workload part). */
void unc_combine(const unc_dist *d, const char *key, double point, const double *seeds, size_t n_seeds, double level,
                 unc_interval *out);

/* The headline figures of a run that get an interval, with the residual metric behind each (-1: the validation
 * set measures none, so no interval). */
typedef enum unc_fig { UF_TTFT_MEAN = 0, UF_TTFT_P99, UF_TPOT_MEAN, UF_TPOT_P99, UF_E2E_MEAN, UF_E2E_P99, UF_TPUT,
                       UF_COUNT } unc_fig;
const char *unc_fig_key(unc_fig f);   /* the run JSON's key: "mean_ttft_ms", ..., "output_throughput" */
const char *unc_fig_label(unc_fig f); /* "mean TTFT", ... */
const char *unc_fig_unit(unc_fig f);  /* "ms", "tok/s" */
int unc_fig_metric(unc_fig f);        /* unc_metric, or -1 */

/* A run's intervals (run_result.iv; runner/intervals.h fills it). */
typedef struct unc_figs {
  bool on;               /* computed (else nothing is reported) */
  double level;
  uint32_t n_values;     /* runs behind the workload part: the run and its extra seeds (1: none) */
  bool fixed_trace;      /* the workload is a trace: no seeds to vary */
  bool large;            /* more than RUNNER_IV_SEED_MAX_REQUESTS requests: no extra seeds (runner/intervals.h) */
  bool seedless;         /* another seed generates the same workload (fixed lengths, all sent at once): no extra
                            seeds, the spread is zero (runner/intervals.c) */
  char stratum[32];      /* the run's stratum key */
  char table[512];       /* the residual file read */
  unc_interval it[UF_COUNT];
} unc_figs;

#endif
