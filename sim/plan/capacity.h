/* capacity.h: how many GPUs of which configuration serve a target rate at
 * given SLOs.
 *
 * For each candidate configuration (a grid point, grid.h), with ONE replica:
 * the highest request rate whose run meets every SLO (slo.h), found by
 * bisection (bisect.h) over the rate: a trace is rescaled to the probed mean
 * rate (its burstiness kept), a generator runs at it. Then
 *     replicas = ceil(target_rate / max_rate),  GPUs = replicas x TP,
 *     USD/hour = GPUs x price per GPU-hour.
 * That count is an estimate: a fleet behind a router absorbs bursts one
 * replica alone cannot. Every candidate is then sized by simulation: the
 * target rate on `estimate` replicas behind a least_outstanding router,
 * then one replica fewer while the fleet still meets every SLO, or one more
 * (at most CAP_VERIFY_EXTRA more) until it does. A candidate's replicas are
 * the smallest simulated fleet that met the SLOs (one fewer was simulated
 * and missed, or it is one replica); the recommendation is the cheapest
 * such candidate (then fewest GPUs, then highest max_rate).
 *
 * Robustness: an overloaded run grows without bound, so every probe runs
 * with a time limit (scenario.time_limit_s; when the scenario sets none:
 * last arrival + 30 s + the longest time an SLO-meeting request may take,
 * max(ttft, e2el, ttft + tpot x longest output)); requests unfinished at the
 * limit count as SLO misses (slo.h), so a limit this long never fails a
 * configuration that meets the SLOs. The bisection is bounded by
 * max_probes and stops at relative tolerance rel_tol (default 2%): the
 * reported max_rate passed and a rate at most (1 + rel_tol) x higher failed.
 * Ownership: capacity_set owns candidates and the kept verification run. */
#ifndef SIM_CAPACITY_H
#define SIM_CAPACITY_H

#include <stdio.h>

#include "config/instance.h"
#include "plan/bisect.h"
#include "plan/sweep.h"

enum { CAP_VERIFY_EXTRA = 4, CAP_FLEET_MAX = 16 };

/* One simulated fleet of a candidate at the target rate. */
typedef struct cap_fleet_probe {
  uint32_t replicas;
  bool ok;                  /* every SLO met */
  double value_ms[SLO_MAX]; /* the SLO statistics measured */
} cap_fleet_probe;

typedef struct cap_probe {
  double rate;              /* offered mean rate per replica, req/s */
  bool ok;                  /* every SLO met */
  double value_ms[SLO_MAX]; /* the SLO statistics measured */
  double output_tput;       /* output tokens/s */
  double request_tput;      /* completed requests/s */
  size_t unfinished;        /* requests that did not complete by the time limit */
  limit_kind limit;         /* binding limit of the run */
} cap_probe;

typedef struct cap_candidate {
  size_t index;             /* grid index */
  grid_point pt;
  char label[256];
  sweep_row cfg;            /* configuration echo, memory plan, price (from the first probe) */
  bool feasible;            /* can start */
  char reason[1024];        /* why not */
  bisect_result bis;
  cap_probe probe[BISECT_MAX_PROBES]; /* in bis.probe_x order */
  double max_rate;          /* req/s per replica at the SLOs (bis.good; 0 = none) */
  uint32_t estimate;        /* ceil(target_rate / max_rate): one replica's arithmetic, where the fleet search starts */
  uint32_t replicas, gpus;  /* needed for the target rate: the smallest simulated fleet that met the SLOs when
                               verified, else the estimate */
  cap_fleet_probe fleet[CAP_FLEET_MAX]; /* the fleets simulated, in order */
  uint32_t n_fleet;
  double usd_per_hour;      /* GPUs x price; 0 = unknown price */
  limit_kind limit;         /* binding limit at the smallest failing rate */
  int fail_slo;             /* index of the SLO missed first there (-1 = none) */
  double fail_rate;         /* that rate */
  double fail_value_ms;     /* the value that missed */
  char fail_explain[512];   /* runner_bottleneck's sentence there */
  char why[1600];           /* plain-language verdict */
  int verified;             /* 0 = not verified, 1 = verified at `replicas`, -1 = failed verification */
  slo_result verify_slo;    /* the verification run's SLO values */
  metrics_summary verify_sum;
  /* with an instance catalog (capacity_set_instances): the cheapest instance type that holds its replicas */
  int inst;                 /* index in capacity_set.inst, -1 = none */
  uint32_t n_instances;     /* instances rented (replicas packed, several per instance when they fit) */
  uint32_t per_instance;    /* replicas one instance holds */
  char no_instance[512];    /* why no instance of the catalog holds it ("" when one does) */
} cap_candidate;

/* The point-estimate search's answer, kept beside a search at a confidence. */
typedef struct cap_alone {
  bool have;                /* that search ran */
  bool found;               /* and recommended a candidate */
  char label[256];
  uint32_t replicas, gpus;
  double usd_per_hour, max_rate;
} cap_alone;

/* `servesim capacity` (and its merge) exits with this when no candidate meets the SLOs at the target rate. */
#define CAPACITY_EXIT_NONE 3

typedef struct capacity_set {
  scenario base;
  grid_spec grid;           /* shallow copy (configs borrowed) */
  slo_set slo;
  price_spec price;
  double target_rate;       /* req/s for the whole deployment */
  bisect_opts bo;
  trace_stats base_stats;   /* the workload as given (before rescaling) */
  size_t n;
  cap_candidate *c;
  int best;                 /* recommended candidate, -1 = none */
  run_ctx *verify_run;      /* its verification run (for reports), or NULL */
  int n_verify_runs;
  char summary[4096];
  instance_cfg *inst;       /* the catalog (--instances), n_inst of them; costs are per rented instance */
  uint32_t n_inst;
  char mig_layouts[2048];   /* when candidates are MIG slices: requests/s of one whole GPU per layout, the best
                               named ("" otherwise) */
  /* intervals and confidence (capacity_set_intervals; plan_iv.h): */
  plan_iv iv;               /* the recommendation's verified SLO values and throughput get intervals when iv.on */
  double confidence;        /* > 0: every SLO judged at this confidence (value x e^{q(P)} <= limit, q the candidate's
                               stratum's residual quantile), so the recommendation meets them with probability P */
  cap_alone alone;          /* with confidence: what the point estimate alone (the same search at confidence 0)
                               recommended (capacity_set_alone) */
} capacity_set;

/* Checks the spec (SLOs and a target rate present, an open-loop workload,
 * names exist) and sets up the candidates. */
int capacity_prepare(capacity_set *s, const scenario *base, const grid_spec *g, const bisect_opts *bo,
                     sim_err *err);
int capacity_execute(capacity_set *s, unsigned jobs, pool_progress_fn progress, void *pctx, sim_err *err);
void capacity_free(capacity_set *s);
/* Prices deployments per rented instance: `list` names instance types (configs/instances or files),
 * comma-separated. Call after capacity_prepare, before capacity_execute. */
int capacity_set_instances(capacity_set *s, const char *list, sim_err *err);
/* Shard k of n (1 <= k <= n): searches only candidates i with i % n == k - 1; capacity_finish (replicas,
 * cost, the verified recommendation, verdicts, summary) runs once every candidate is in (merge). */
int capacity_execute_shard(capacity_set *s, size_t k, size_t n, unsigned jobs, pool_progress_fn progress, void *pctx,
                           sim_err *err);
void capacity_finish(capacity_set *s);
/* Intervals at level (0 = none) from the residual file path (NULL = bundled) and the confidence P (0 = judge the
 * SLOs on the point estimates; else in (0, UNC_MAX_LEVEL]): after capacity_prepare, before capacity_execute. */
int capacity_set_intervals(capacity_set *s, double level, const char *path, double confidence, sim_err *err);
/* Records what a finished search `point` (at confidence 0) recommended as s's point-estimate answer. */
void capacity_set_alone(capacity_set *s, const capacity_set *point);
/* With a confidence: each SLO of r (a run of stratum st) judged on value x e^{q(P)} (capacity_conf.c). */
void capacity_conf_judge(const capacity_set *s, const stratum *st, slo_result *r);
/* The confidence sentences of the summary (what each SLO was judged on, what the point estimate alone bought),
 * appended at w + *o (n bytes in all). */
void capacity_conf_text(const capacity_set *s, char *w, size_t n, size_t *o);
/* " (x 1.31 = 31.4 ms at confidence 0.9)" for SLO k's value of candidate c, "" without a confidence (a static
 * buffer per thread: use before the next call). */
const char *capacity_conf_note(const capacity_set *s, const cap_candidate *c, int k, double value);
/* The recommendation's verified SLO values with their intervals, "ttft_p99 812 ms [80%: 700 - 1500], ..." */
void capacity_conf_values(const capacity_set *s, char *w, size_t n, size_t *o);

int capacity_write_json(const capacity_set *s, FILE *f, sim_err *err);
void capacity_print(const capacity_set *s, FILE *f);

#endif
