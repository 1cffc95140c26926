/* vresid.h: the cost model's error by stratum from the validation set (docs/UNCERTAINTY.md): the residual file
 * (`validate --residuals-out FILE`) and its calibration (`validate --calibration`).
 *
 * A point's residual of a metric is ln(measured / predicted), over held-out points only (not in the fitting
 * subset: vpoint.train false) that ran and have both values. A key's quantiles are those of a new model's
 * residual by a one-way random-effects view of its points (vresid.c: random_effect_dist; docs/UNCERTAINTY.md). Metrics (runner/uncert.h): mean TTFT, mean TPOT,
 * mean E2E (the open-loop stages' measured E2E; for the closed-loop and static-batch points, which publish TTFT
 * and TPOT only, TTFT + (osl - 1) TPOT on both sides, the rule their throughput is derived by), p99 TTFT (the
 * open-loop stages) and output tokens/s.
 *
 * Calibration, leave one group out: the groups are the models (vgroup_key VG_MODEL). The residuals of one model
 * are correlated (a missing cost shifts all its series alike), so leaving out a series, a GPU or a source would
 * leave the same model's other series in the table and flatter the coverage; a model the table has never seen
 * is also what a user's new model is. For each model, a table is built from the held-out points of every other
 * model (same rules, same min_points) and each of its points' intervals at 50/80/95% are taken from that table;
 * a point is filed under the stratum key the full table resolves it to. */
#ifndef SIM_VRESID_H
#define SIM_VRESID_H

#include <stdio.h>

#include "core/jsonw.h"
#include "runner/uncert.h"
#include "validate/validate.h"

#define VRESID_MIN_POINTS 20 /* residuals a stratum key needs to hold a metric (merged upward below that) */
#define VRESID_MIN_MODELS 3  /* ... from at least this many distinct models (runner/uncert.h says why) */
#define VRESID_DRAWS 20000   /* Monte Carlo draws of a key's random-effects quantiles (vresid.c) */
#define VRESID_SEED 0x5e56u  /* their fixed seed */

/* ln(measured / predicted) of metric m at p (see above), or NAN; held-out or not is the caller's test. */
double vresid_residual(const vpoint *p, unc_metric m);
/* The table of the held-out points of s, leaving out the points of model `skip_model` (vgroup_key VG_MODEL; NULL
 * = none). Initializes *t. */
void vresid_build(const vset *s, uint32_t min_points, uint32_t min_models, const char *skip_model, unc_table *t);
/* Writes the table as the residual file; command: how it was made; data_dir: the validation directory read
 * (NULL = none), named relative to its parent in the file. */
int vresid_write(const vset *s, const unc_table *t, const char *command, FILE *f, sim_err *err);

enum { VCAL_LEVELS = 3, VCAL_METRICS = 2 }; /* 50/80/95%; TTFT, TPOT */
extern const double vcal_levels[VCAL_LEVELS];
typedef struct vcal_row {
  char key[32];                           /* stratum key the full table resolves the points to; "all" */
  size_t n[VCAL_METRICS];                 /* points with an interval */
  size_t in[VCAL_METRICS][VCAL_LEVELS];   /* of them, measured inside the interval */
  double width80[VCAL_METRICS];           /* median of (hi - lo) / predicted of the 80% interval */
} vcal_row;
typedef struct vcal {
  vcal_row *rows;                         /* rows[0] = all, then the keys in name order */
  size_t n;
  size_t groups;                          /* models left out in turn */
  size_t no_interval[VCAL_METRICS];       /* points no table of their fold had data for */
} vcal;
/* Leave-one-model-out coverage of the held-out points of s. */
void vcal_compute(const vset *s, uint32_t min_points, uint32_t min_models, vcal *out);
void vcal_free(vcal *c);
void vcal_text(const vcal *c, uint32_t min_points, FILE *f);
void vcal_json(const vcal *c, uint32_t min_points, jw *j);

#endif
