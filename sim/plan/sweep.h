/* sweep.h: many independent simulations of a grid (grid.h), run on libuv's
 * thread pool (pool.h), summarized per point, with the Pareto frontiers and
 * cost per million tokens.
 *
 * Per point (a sweep_row): the scenario = base + the point's values; a point
 * whose deployment cannot start (memory plan, TP/heads mismatch, dtype the
 * GPU lacks) is a row with feasible = false and the reason, not an error.
 * Derived figures:
 *   throughput per GPU   = output tokens/s / GPUs (tp x replicas)
 *   tokens/s per user    = 1000 / mean TPOT (ms): the decode speed a user sees
 *   USD per hour         = GPUs x price per GPU-hour (price_lookup)
 *   USD per 1M output tokens = USD per hour / (output tokens/s x 3600) x 1e6
 *   USD per 1M total tokens  = the same with input + output tokens/s
 * Frontiers (pareto.h) over feasible rows that completed requests and, when
 * SLOs are given, met every one of them:
 *   pareto_user: max throughput/GPU and max tokens/s per user
 *   pareto_ttft: max throughput/GPU and min p99 TTFT
 * Determinism: rows are indexed by grid index and every run is seeded by its
 * scenario, so the outputs are byte-identical for any number of jobs.
 * Ownership: sweep_set owns its rows (sweep_free). */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stdio.h>

#include "plan/grid.h"
#include "core/pool.h"
#include "plan/plan_iv.h"
#include "plan/slo.h"
#include "runner/bottleneck.h"
#include "runner/runner.h"

typedef struct sweep_row {
  size_t index;               /* grid index */
  grid_point pt;
  char label[256];            /* grid_label */
  bool feasible;              /* the deployment started and ran */
  char reason[1024];          /* why not ("" when feasible) */
  uint32_t whatif_missed;     /* what-ifs not (fully) exercised in this run (runner/whatif.h) */
  char whatif_note[400];      /* the first of them, "" when none */
  char model[64], gpu[64], engine[64]; /* engine: NAME@VERSION as run */
  char cost_source[1400];     /* what served its step times (profsel.h); "" when it could not start */
  deploy_cfg deploy;          /* the deployment: resolved when the run got that far, else as asked with the
                                 parallel sizes' defaults (echoed over config/settings.h's table) */
  uint32_t replicas, gpus;    /* gpus = tp x pp x dp x replicas */
  uint32_t max_concurrency;
  double rate_scale;
  double offered_rate;        /* mean arrival rate of the workload as run, req/s */
  double price_per_gpu_hour;  /* USD; 0 = unknown */
  mem_plan mem;
  metrics_summary sum;
  bottleneck bn;
  slo_result slo;
  double tput_per_gpu;        /* output tokens/s per GPU */
  double tok_s_per_user;      /* 1000 / mean TPOT */
  double usd_per_hour;        /* whole deployment */
  double usd_per_m_output;    /* USD per million output tokens (INFINITY when nothing completed) */
  double usd_per_m_total;     /* USD per million input + output tokens (prompt-heavy workloads) */
  bool pareto_user, pareto_ttft;
  stratum strat;              /* what the prediction rests on (runner/stratum.h): its intervals' residuals */
} sweep_row;

typedef struct sweep_set {
  scenario base;              /* flags applied */
  grid_spec grid;             /* borrowed copy; configs owned by the caller's spec */
  slo_set slo;
  price_spec price;
  size_t n;
  sweep_row *rows;
  size_t n_feasible, n_pareto_user, n_pareto_ttft;
  plan_iv iv;                 /* intervals next to the headline figures (sweep_set_intervals; off when not set) */
} sweep_set;

/* Runs one scenario to a row (used by sweep and capacity). When keep is
 * non-NULL and the run succeeded, *keep receives the run_ctx (caller frees
 * with runner_free + free); else it is freed here. */
void sweep_eval(const scenario *sc, const slo_set *slo, const price_spec *price, sweep_row *row, run_ctx **keep);

/* Sets up the rows (labels, indices). Checks the names the grid uses (GPU
 * configs, the base model and engine, the workload) so that a bad spec fails
 * here with SIM_EINPUT, before any simulation. */
int sweep_prepare(sweep_set *s, const scenario *base, const grid_spec *g, const slo_set *slo, const price_spec *price,
                  sim_err *err);
int sweep_execute(sweep_set *s, unsigned jobs, pool_progress_fn progress, void *pctx, sim_err *err);
/* Shard k of n (1 <= k <= n): simulates only rows i with i % n == k - 1 (sweep_shard_rows of them); the
 * others stay as sweep_prepare left them. sweep_finish (the Pareto frontiers) runs once all rows are in. */
int sweep_execute_shard(sweep_set *s, size_t k, size_t n, unsigned jobs, pool_progress_fn progress, void *pctx,
                        sim_err *err);
size_t sweep_shard_rows(size_t n_rows, size_t k, size_t n);
/* Runs fn(ctx, i) on the thread pool for the rows i of shard k of n (sweep and capacity shards). */
int plan_run_shard(size_t n_rows, size_t k, size_t n, void (*fn)(void *, size_t), void *ctx, unsigned jobs,
                   pool_progress_fn progress, void *pctx, sim_err *err);
void sweep_finish(sweep_set *s);
/* Intervals at level (0 = none) from the residual file path (NULL = the bundled one; plan_iv.h): the model part
 * of each row's stratum next to its throughput per GPU and TTFT/TPOT figures. Call after sweep_prepare. */
int sweep_set_intervals(sweep_set *s, double level, const char *path, sim_err *err);
void sweep_free(sweep_set *s);

/* Rows of one deployment under different loads, by offered rate, with the
 * knee: the last load before the SLOs are first missed (when SLOs are given;
 * like capacity's max rate), else the last load before p99 TTFT exceeds 3 x
 * its value at the lowest load (more than 1% unfinished counts as exceeding);
 * knee = -1 when even the lowest load fails, n - 1 when none does.
 * limit_ms: the TTFT line to draw (the SLO's TTFT limit, or the 3x value). */
typedef struct sweep_curve {
  size_t n;
  size_t *row;                /* indices into rows, by offered rate (heap) */
  int knee;
  double limit_ms;
  char label[256];            /* the deployment (grid label without load values) */
} sweep_curve;
/* Builds curves of >= 2 points; returns how many (caller frees with sweep_curves_free). */
size_t sweep_curves(const sweep_set *s, sweep_curve **out);
void sweep_curves_free(sweep_curve *c, size_t n);

int sweep_write_csv(const sweep_set *s, FILE *f, sim_err *err);
int sweep_write_json(const sweep_set *s, FILE *f, sim_err *err);
/* The table printed by `servesim sweep`. */
void sweep_print(const sweep_set *s, FILE *f);
/* One paragraph answering "what did the sweep find" (for text and reports). */
void sweep_summary(const sweep_set *s, char *buf, size_t n);

#endif
