/* router.c: replica selection policies over a tournament tree (see router.h). */
#include "serve/router.h"

#include <stdlib.h>

/* Is replica b strictly better than a? (a comes first in index order, so a
 * tie keeps a: the lowest index wins, as a scan keeping the first best.) */
static bool better(const router *r, uint32_t a, uint32_t b) {
  if (b == UINT32_MAX) return false;
  if (a == UINT32_MAX) return true;
  const router_view *va = &r->v[a], *vb = &r->v[b];
  if (va->failed != vb->failed) return va->failed;
  if (va->failed) return false;
  if (r->policy == ROUTE_LEAST_KV) {
    if (vb->kv_usage != va->kv_usage) return vb->kv_usage < va->kv_usage;
  }
  return vb->outstanding < va->outstanding;
}

static void fix_up(router *r, uint32_t k) {
  for (k >>= 1; k >= 1; k >>= 1) {
    uint32_t a = r->tree[2 * k], b = r->tree[2 * k + 1];
    r->tree[k] = better(r, a, b) ? b : a;
  }
}

void router_init(router *r, route_policy policy, uint32_t n) {
  SIM_ASSERT(n >= 1);
  r->policy = policy;
  r->n = n;
  r->next = 0;
  r->v = sim_calloc(n, sizeof *r->v);
  r->tree = NULL;
  r->size = 0;
  if (policy == ROUTE_ROUND_ROBIN) return;
  uint32_t size = 1;
  while (size < n) size *= 2;
  r->size = size;
  r->tree = sim_malloc(2 * (size_t)size * sizeof *r->tree);
  for (uint32_t i = 0; i < size; i++) r->tree[size + i] = i < n ? i : UINT32_MAX;
  for (uint32_t k = size - 1; k >= 1; k--) {
    uint32_t a = r->tree[2 * k], b = r->tree[2 * k + 1];
    r->tree[k] = better(r, a, b) ? b : a;
  }
}

void router_deinit(router *r) {
  free(r->v);
  free(r->tree);
  r->v = NULL;
  r->tree = NULL;
}

void router_update(router *r, uint32_t i, router_view v) {
  SIM_ASSERT(i < r->n);
  r->v[i] = v;
  if (r->tree) fix_up(r, r->size + i);
}

uint32_t router_pick(router *r) {
  if (r->policy == ROUTE_ROUND_ROBIN) {
    for (uint32_t k = 0; k < r->n; k++) {
      uint32_t i = (r->next + k) % r->n;
      if (!r->v[i].failed) {
        r->next = (i + 1) % r->n;
        return i;
      }
    }
    return UINT32_MAX;
  }
  uint32_t best = r->tree[1];
  return best == UINT32_MAX || r->v[best].failed ? UINT32_MAX : best;
}
