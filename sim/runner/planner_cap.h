/* planner_cap.h: one replica's capacity for the autoscaler's mode=planner (serve/autoscale.h, planner_replicas):
 * the highest Poisson request rate at which one replica of the run's deployment (same model, GPU, engine,
 * parallelism and engine knobs; one replica, no autoscaling, no what-if) keeps the mean TTFT within the planner's
 * ttft and the mean inter-token latency within its itl, every request finished, on PLANNER_CAP_PROMPTS requests of
 * fixed lengths. It stands where Dynamo's planner reads its pre-deployment profile (profile_sla.py: prefill
 * throughput per GPU at the TTFT target, decode throughput per GPU at the ITL target): servesim profiles its own
 * model of the replica instead.
 * Search: from 1 req/s, doubling or halving to the first bracket (1/1024 to 65,536 req/s), then 7 bisections in
 * log space (the answer within 0.6% below the edge). Lengths are bucketed to 8 per octave (about 9%: the centre
 * 2^(k/8), rounded), each bucket searched once per run and remembered. Deterministic: the probes use the run's
 * seed. Owned by the caller (planner_cap_new / planner_cap_free). */
#ifndef SIM_PLANNER_CAP_H
#define SIM_PLANNER_CAP_H

#include "runner/scenario.h"

#define PLANNER_CAP_PROMPTS 300
#define PLANNER_CAP_MAX 256 /* buckets remembered */

typedef struct planner_cap_entry {
  uint32_t isl, osl;     /* the bucket's lengths, tokens */
  double rps;            /* capacity, requests/s per replica (0: no rate meets the targets) */
  uint32_t probes;       /* simulations the search ran */
} planner_cap_entry;

typedef struct planner_cap {
  scenario base;         /* the run's scenario, workload and fleet replaced per probe */
  double ttft_ms, itl_ms; /* the planner's targets */
  planner_cap_entry e[PLANNER_CAP_MAX];
  uint32_t n;
  uint64_t probes;       /* simulations in all */
  char error[512];       /* the first probe that could not run ("" = none) */
} planner_cap;

planner_cap *planner_cap_new(const scenario *sc);
void planner_cap_free(planner_cap *p);
/* The capacity for these mean lengths (the callback of cluster_cfg.scale.capacity); NAN if a probe failed. */
double planner_cap_rps(void *ctx, double isl, double osl);

#endif
