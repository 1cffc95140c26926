/* report.h: turning a finished run into output. Reads the run's result only
 * (runner/result.h: its records, metrics, description and verdicts).
 *
 *   report_json   the result file: vLLM `bench serve --save-result` keys for
 *                 what they share (duration, completed, throughputs,
 *                 mean/median/std/pXX of ttft/tpot/itl/e2el in ms, goodput)
 *                 plus a "servesim" section (configuration echo, memory plan,
 *                 per-step statistics, cost sources, bottleneck analysis).
 *                 Byte-identical for identical inputs: no dates, numbers
 *                 printed with a fixed format.
 *   report_requests_csv    one row per request (times in ms, status, reason)
 *   report_timeseries_csv  server-side series in vLLM's Prometheus names
 *   report_text   the human summary printed by `servesim run`
 * (which limit binds: runner/bottleneck.h). */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdio.h>

#include "core/jsonw.h"
#include "runner/result.h"

int report_json(const run_result *r, FILE *f, sim_err *err);
/* The same with `run --baseline`'s comparison (servesim.baseline_comparison: both runs' key metrics, the
 * recovery after a replica loss); baseline and cmp may be NULL. */
int report_json_cmp(const run_result *r, const run_result *baseline, const whatif_compare *cmp, FILE *f, sim_err *err);
int report_requests_csv(const run_result *r, FILE *f, sim_err *err);
int report_timeseries_csv(const run_result *r, FILE *f, sim_err *err);
/* verbose: the wall-time line adds the simulator's own counters (events, closed-form steps, step-table hits). */
void report_text(const run_result *r, double wall_s, bool verbose, FILE *f);
/* --autoscale (report_scale.c; nothing without it): the fleet's block of the text summary, servesim.autoscale in
 * the JSON, the time series' replica columns (a header suffix and each row's). */
void report_scale_text(const run_result *r, FILE *f);
void report_scale_json(const run_result *r, jw *x);
void report_scale_html(const run_result *r, FILE *f); /* a chart of the replicas serving, starting, draining */
const char *report_scale_csv_head(const run_result *r);
void report_scale_csv_row(const run_result *r, const ts_row *t, FILE *f);

#endif
