/* bottleneck.h: which limit binds a finished run (memory capacity, HBM
 * bandwidth, compute, interconnect, engine CPU or queueing), from its step
 * costs by bound, time series and summary, with one plain-language sentence
 * of evidence. Read by the reports, sweep and capacity. */
#ifndef SIM_BOTTLENECK_H
#define SIM_BOTTLENECK_H

#include "hw/cost_types.h"

struct run_result;

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
void runner_bottleneck(const struct run_result *r, bottleneck *out);

#endif
