/* router.h: which replica a new request goes to. Skips failed replicas.
 * round_robin: next in turn; least_outstanding: fewest routed-and-unfinished
 * requests (vLLM production-stack / llm-d style), ties to the lowest index;
 * least_kv: lowest KV-cache usage, then fewest outstanding. */
#ifndef SIM_ROUTER_H
#define SIM_ROUTER_H

#include "config/cfg.h"

typedef struct router_view {
  bool failed;          /* replica is gone (what-if) */
  uint32_t outstanding; /* routed and not finished */
  double kv_usage;      /* [0, 1] */
} router_view;

typedef struct router {
  route_policy policy;
  uint32_t next; /* round-robin cursor */
} router;

/* Returns the chosen replica index, or UINT32_MAX when every replica failed. */
uint32_t router_pick(router *r, const router_view *reps, uint32_t n);

#endif
