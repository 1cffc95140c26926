/* plan_iv.h: prediction intervals and SLOs at a stated confidence for the studies (sweep, capacity), from the
 * cost model's part alone (docs/UNCERTAINTY.md).
 *
 * A study runs each configuration once: its intervals are the residual table's model part for the
 * configuration's stratum (runner/uncert.h: [x e^{q((1-L)/2)}, x e^{q((1+L)/2)}], no extra seed runs), so they
 * are deterministic and cost no simulation. The workload part (other seeds) is left out: it is a fraction of a
 * percent to a few percent at the workload sizes studies use (docs/UNCERTAINTY.md), far inside the model part.
 *
 * SLO statistics (slo.h: a percentile or the mean of TTFT, TPOT, E2E) are judged with the residuals of the
 * metric's mean (ttft, tpot, e2e): the validation set measures no percentile with enough points (only 12
 * open-loop p99 TTFT stages), and the model's error is a scale on its step times, which moves every statistic
 * of the metric alike away from the knee (near it a percentile moves more than the mean: there the factor errs
 * small). A statistic is met at confidence P when value x e^{q(P)} <= limit, q the one-sided P quantile of
 * ln(measured / predicted): the measured value stays under the limit with probability P by the residuals. */
#ifndef SIM_PLAN_IV_H
#define SIM_PLAN_IV_H

#include <stdio.h>

#include "core/jsonw.h"
#include "metrics/metrics.h"
#include "plan/slo.h"
#include "runner/uncert.h"

typedef struct plan_iv {
  bool on;        /* a table is loaded and the level > 0: intervals are shown */
  bool loaded;    /* t holds a table (also for a confidence without intervals shown) */
  double level;   /* two-sided level of the intervals shown, e.g. 0.8 */
  unc_table t;
} plan_iv;

/* level 0: no intervals shown; the table is read when level > 0 or need (a confidence reads it). path NULL: the
 * bundled residual file. */
int plan_iv_load(plan_iv *iv, double level, const char *path, bool need, sim_err *err);
void plan_iv_free(plan_iv *iv);
/* The interval of figure f of summary m for a run of stratum st (out->have false when off or no data). */
void plan_iv_fig(const plan_iv *iv, const stratum *st, const metrics_summary *m, unc_fig f, unc_interval *out);
/* The model part's interval of a value of SLO metric sm (its mean's residuals) at the shown level. */
void plan_iv_slo(const plan_iv *iv, const stratum *st, slo_metric sm, double value, unc_interval *out);
/* The residual metric behind SLO metric sm: UM_TTFT, UM_TPOT or UM_E2E. */
unc_metric plan_iv_slo_metric(slo_metric sm);
/* e^{q(p)} of sm's residuals in stratum st (one-sided quantile p); 1 with *key "" when the table has no data for
 * it. key: 32 bytes, the stratum key the residuals came from. */
double plan_iv_factor(const unc_table *t, const stratum *st, slo_metric sm, double p, char *key);
/* " [80%: lo - hi]" (numbers with fmt, e.g. "%.1f"), or " [80%: no validation data]"; nothing when iv is off. */
void plan_iv_text(const unc_interval *it, const char *fmt, char *buf, size_t n);
/* "intervals": {level, stratum, residuals (the file), figures: {<run JSON key>: {point, lo, hi, residuals_key}}}
 * of a run of stratum st with summary m (lo, hi, residuals_key null without data); nothing when off. */
void plan_iv_json(jw *j, const plan_iv *iv, const stratum *st, const metrics_summary *m);

#endif
