/* slo.h: service-level objectives for sweep and capacity, and their check on
 * a finished run.
 *
 * Spec: KEY=MS with KEY = <metric>_<stat>, metric ttft, tpot or e2el, stat
 * pNN (a percentile in (0, 100], e.g. p99, p99.9, p50) or mean; MS a limit in
 * milliseconds: `--slo ttft_p99=2000 --slo tpot_p99=50`.
 *
 * Check: over ALL requests of the workload (not only the completed ones),
 * with vLLM's definitions (metrics.h): a request that did not finish counts
 * as +infinity for E2EL and TPOT, and for TTFT unless its first token came
 * (then its real TTFT counts); rejected requests count as +infinity. TPOT
 * skips requests with one output token, like vLLM. So a run cut by its time
 * limit with more than 1% of requests unfinished fails a p99 objective.
 * Percentiles interpolate linearly (numpy's default), +infinity absorbing. */
#ifndef SIM_SLO_H
#define SIM_SLO_H

#include "runner/result.h"

enum { SLO_MAX = 8 };

typedef enum slo_metric { SLO_TTFT = 0, SLO_TPOT, SLO_E2EL, SLO_METRICS } slo_metric;

typedef struct slo_item {
  slo_metric metric;
  double pct;      /* percentile in (0, 100]; < 0 = mean */
  double limit_ms; /* objective, ms */
  char key[24];    /* e.g. "ttft_p99" */
} slo_item;

typedef struct slo_set {
  int n;
  slo_item it[SLO_MAX];
} slo_set;

typedef struct slo_result {
  int n;
  double value_ms[SLO_MAX]; /* measured statistic (INFINITY when unfinished requests reach it) */
  bool ok[SLO_MAX];
  bool all_ok;              /* every objective met (true when there are none) */
  int first_fail;           /* index of the first objective missed, -1 if none */
  size_t unfinished;        /* requests that did not complete (rejected included) */
} slo_result;

/* Parses one KEY=MS (`what` names the flag or JSON field in errors) and
 * appends it (replacing an item with the same key). */
int slo_add(slo_set *s, const char *spec, const char *what, sim_err *err);
/* Appends key with a limit (JSON form: {"ttft_p99": 2000}). */
int slo_add_kv(slo_set *s, const char *key, double limit_ms, const char *what, sim_err *err);
void slo_eval(const run_result *r, const slo_set *s, slo_result *out);
/* "ttft_p99 <= 2000 ms, tpot_p99 <= 50 ms" */
void slo_describe(const slo_set *s, char *buf, size_t n);
/* Limit of the first objective on metric m (for SLO lines on charts), or -1 if none. */
double slo_limit(const slo_set *s, slo_metric m);
const char *slo_metric_name(slo_metric m);

#endif
