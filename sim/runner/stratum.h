/* stratum.h: what a prediction rests on, as a key the uncertainty of the
 * prediction is looked up by (docs/UNCERTAINTY.md). One function serves every
 * run (`servesim run` and each validation point alike: runner_build computes it),
 * so a run's stratum is the one its validation residuals were filed under.
 *
 * Three dimensions:
 *   cost  where the step costs come from (runner/profsel.h):
 *           same     measured kernel tables of this GPU type at the engine version that runs (the profile's
 *                    name <gpu>_<engine>-<version> names that version; a profile named otherwise and measured on
 *                    this GPU type, e.g. a `calibrate` run's, counts as same);
 *           version  measured tables of this GPU type at another version of the engine;
 *           scaled   measured tables of another GPU type scaled by the datasheet ratios (MIG slices included);
 *           roofline no measured table.
 *   loop  how the requests arrive:
 *           closed   client slots (max_concurrency > 0);
 *           batch    every request at t=0 without client slots (offline throughput, a static batch);
 *           open     arrivals spread over time (a rate, a trace).
 *   arch  dense or moe (the model has mixture-of-experts layers).
 * Key text: "<cost>/<loop>/<arch>", e.g. "version/closed/dense"; '*' stands for
 * any value of a dimension in the merged strata (runner/uncert.h).
 * The knee (distance from saturation) is not a dimension yet (docs/UNCERTAINTY.md says why). */
#ifndef SIM_STRATUM_H
#define SIM_STRATUM_H

#include "config/cfg.h"
#include "runner/profsel.h"
#include "workload/trace.h"

typedef enum strat_cost { SC_SAME = 0, SC_VERSION, SC_SCALED, SC_ROOFLINE, SC_COUNT } strat_cost;
typedef enum strat_loop { SL_CLOSED = 0, SL_BATCH, SL_OPEN, SL_COUNT } strat_loop;
typedef enum strat_arch { SA_DENSE = 0, SA_MOE, SA_COUNT } strat_arch;

typedef struct stratum {
  strat_cost cost;
  strat_loop loop;
  strat_arch arch;
} stratum;

/* The stratum of a run from its profile choice, engine, model, client slots and workload statistics. */
stratum stratum_of(const prof_sel *ps, const engine_cfg *e, const model_cfg *m, uint32_t max_concurrency,
                   const trace_stats *ts);
/* The cost class of a profile choice alone (exposed for tests). */
strat_cost stratum_cost_of(const prof_sel *ps, const engine_cfg *e);
const char *strat_cost_name(strat_cost c);
const char *strat_loop_name(strat_loop l);
const char *strat_arch_name(strat_arch a);
/* "<cost>/<loop>/<arch>" into buf. */
void stratum_key(const stratum *s, char *buf, size_t n);
/* Reads "<cost>/<loop>/<arch>" (no '*'); false when it is not one. */
bool stratum_parse(const char *key, stratum *out);
/* The merge chain of a stratum (most specific first): "<cost>/<loop>/<arch>", "<cost>/<loop>/ *",
 * "* / <loop> / *" and "* / * / *" (without the spaces), written into keys[4][32]. Returns 4.
 * The cost source is merged away before the loop: on the validation set the loop orders the error (a model's
 * spread of TTFT residuals: static batches 0.07 in ln, closed loops 0.7) and the cost source does not (the
 * closed-loop models with their own version's tables shift more from model to model than those with another
 * version's: 0.59 vs 0.30; docs/UNCERTAINTY.md). */
int stratum_chain(const stratum *s, char keys[4][32]);

#endif
