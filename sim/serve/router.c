/* router.c: replica selection policies (see router.h). O(replicas) per pick. */
#include "serve/router.h"

uint32_t router_pick(router *r, const router_view *reps, uint32_t n) {
  uint32_t best = UINT32_MAX;
  switch (r->policy) {
    case ROUTE_ROUND_ROBIN:
      for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (r->next + k) % n;
        if (!reps[i].failed) {
          r->next = (i + 1) % n;
          return i;
        }
      }
      return UINT32_MAX;
    case ROUTE_LEAST_OUTSTANDING:
      for (uint32_t i = 0; i < n; i++)
        if (!reps[i].failed && (best == UINT32_MAX || reps[i].outstanding < reps[best].outstanding)) best = i;
      return best;
    case ROUTE_LEAST_KV:
      for (uint32_t i = 0; i < n; i++) {
        if (reps[i].failed) continue;
        if (best == UINT32_MAX || reps[i].kv_usage < reps[best].kv_usage ||
            (reps[i].kv_usage == reps[best].kv_usage && reps[i].outstanding < reps[best].outstanding))
          best = i;
      }
      return best;
  }
  return best;
}
