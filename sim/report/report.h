/* report.h: turning a finished run into output. Reads finished metrics only.
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
 *   report_bottleneck  which limit binds, and the evidence. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdio.h>

#include "runner/runner.h"

typedef enum limit_kind {
  LIMIT_NONE = 0,     /* light load: latency is the unloaded step time */
  LIMIT_KV_CAPACITY,  /* memory capacity: the KV pool is full (preemptions / admission stalls) */
  LIMIT_HBM,          /* steps bound by HBM bandwidth (weights and KV reads) */
  LIMIT_COMPUTE,      /* steps bound by tensor-core throughput */
  LIMIT_INTERCONNECT, /* all-reduces dominate the step */
  LIMIT_CPU,          /* engine overhead dominates the step */
  LIMIT_QUEUEING      /* replicas saturated: requests wait for a seat */
} limit_kind;

typedef struct bottleneck {
  limit_kind primary;        /* what binds the run overall */
  limit_kind step_bound;     /* what bounds the step time (compute/HBM/interconnect/CPU) */
  double share[BOUND_COUNT]; /* fraction of busy step time by bound */
  double utilization;        /* time a step was running / (duration x replicas) */
  double queue_share;        /* mean queueing delay / mean TTFT */
  double kv_peak;            /* max KV usage over the time series */
  double kv_full_time;       /* fraction of samples with KV usage >= 0.95 */
  uint64_t preemptions;
  char explain[512];         /* one plain-language sentence */
} bottleneck;

const char *limit_name(limit_kind k);
void report_bottleneck(const run_ctx *r, bottleneck *out);

int report_json(const run_ctx *r, FILE *f, sim_err *err);
int report_requests_csv(const run_ctx *r, FILE *f, sim_err *err);
int report_timeseries_csv(const run_ctx *r, FILE *f, sim_err *err);
void report_text(const run_ctx *r, double wall_s, FILE *f);

#endif
