/* router.h: which replica a new request goes to. Skips failed replicas.
 * round_robin: next in turn; least_outstanding: fewest routed-and-unfinished
 * requests (vLLM production-stack / llm-d style), ties to the lowest index;
 * least_kv: lowest KV-cache usage, then fewest outstanding, then the lowest
 * index.
 *
 * The router keeps its own view of every replica, which the cluster updates
 * whenever a replica's state changes (router_update), and a tournament tree
 * over the views: an update costs O(log replicas) and a pick O(1) (round
 * robin: O(1) plus the failed replicas it skips), so a fleet of thousands of
 * replicas routes as fast as a handful. The choice is exactly that of a scan
 * over all views in index order keeping the first best.
 * Ownership: router_init/router_deinit on caller storage. */
#ifndef SIM_ROUTER_H
#define SIM_ROUTER_H

#include "config/cfg.h"

typedef struct router_view {
  bool failed;          /* replica is gone (what-if) */
  uint32_t outstanding; /* routed and not finished */
  double kv_usage;      /* [0, 1]; read by least_kv only */
} router_view;

typedef struct router {
  route_policy policy;
  uint32_t n;        /* replicas */
  uint32_t next;     /* round-robin cursor */
  router_view *v;    /* [n] */
  uint32_t *tree;    /* [2 * size]: node k holds the best replica of its leaves (UINT32_MAX: none); least_* only */
  uint32_t size;     /* leaves: a power of two >= n */
} router;

/* n >= 1 replicas, all alive, nothing outstanding, usage 0. */
void router_init(router *r, route_policy policy, uint32_t n);
void router_deinit(router *r);
/* Replica i's state changed. */
void router_update(router *r, uint32_t i, router_view v);
/* The chosen replica index, or UINT32_MAX when every replica failed. */
uint32_t router_pick(router *r);

#endif
