/* intervals.h: prediction intervals of a finished run's headline figures (runner/uncert.h for the method,
 * docs/UNCERTAINTY.md for the whole). The workload part reruns the scenario with `extra_seeds` other seeds
 * (seed + 1 ... seed + extra_seeds; only a generated workload has seeds to vary: a trace replay gets no workload
 * part); the model part is the residual table's entry for the run's stratum. Fills r->res.iv.
 * RUNNER_IV_DEFAULT_SEEDS: 3 extra runs, so that a run with intervals costs about 4 runs (README's benchmark). */
#ifndef SIM_INTERVALS_H
#define SIM_INTERVALS_H

#include "runner/runner.h"
#include "runner/uncert.h"

#define RUNNER_IV_DEFAULT_SEEDS 3u
#define RUNNER_IV_MAX_SEEDS 32u
/* Above this many requests a run gets no extra seeds: the seeds' spread of a mean falls as 1/sqrt(requests)
 * (0.63% for mean TTFT at 5,000 requests, docs/UNCERTAINTY.md: about 0.3% here), far inside the model part's
 * widths (tens of percent), while each extra run would cost as much as the run (a 1M-request run would take 2-4x
 * as long). */
#define RUNNER_IV_SEED_MAX_REQUESTS 20000u

/* r: a run that ended (runner_execute); t: the residual table; level in (0, UNC_MAX_LEVEL]. */
int runner_intervals(run_ctx *r, const unc_table *t, double level, uint32_t extra_seeds, sim_err *err);
/* The value of figure f in a summary (NAN when it has none). */
double runner_fig_value(const metrics_summary *s, unc_fig f);

#endif
