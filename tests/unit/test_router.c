/* test_router.c: replica selection policies, and the tournament tree against
 * a scan of every replica on random updates. */
#include <criterion/criterion.h>

#include "core/rng.h"
#include "serve/router.h"

static router make(route_policy p, const router_view *v, uint32_t n) {
  router r;
  router_init(&r, p, n);
  for (uint32_t i = 0; i < n; i++) router_update(&r, i, v[i]);
  return r;
}

Test(router, round_robin_skips_failed) {
  router_view v[3] = {{false, 0, 0}, {true, 0, 0}, {false, 0, 0}};
  router r = make(ROUTE_ROUND_ROBIN, v, 3);
  cr_assert_eq(router_pick(&r), 0);
  cr_assert_eq(router_pick(&r), 2);
  cr_assert_eq(router_pick(&r), 0);
  router_update(&r, 0, (router_view){true, 0, 0});
  router_update(&r, 2, (router_view){true, 0, 0});
  cr_assert_eq(router_pick(&r), UINT32_MAX);
  router_deinit(&r);
}

Test(router, least_outstanding_and_ties) {
  router_view v[3] = {{false, 5, 0}, {false, 2, 0}, {false, 2, 0}};
  router r = make(ROUTE_LEAST_OUTSTANDING, v, 3);
  cr_assert_eq(router_pick(&r), 1, "ties go to the lowest index");
  router_update(&r, 1, (router_view){true, 2, 0});
  cr_assert_eq(router_pick(&r), 2);
  router_update(&r, 2, (router_view){true, 2, 0});
  cr_assert_eq(router_pick(&r), 0);
  router_update(&r, 0, (router_view){true, 0, 0});
  cr_assert_eq(router_pick(&r), UINT32_MAX, "every replica failed");
  router_deinit(&r);
}

Test(router, least_kv_usage) {
  router_view v[3] = {{false, 1, 0.5}, {false, 9, 0.2}, {false, 0, 0.2}};
  router r = make(ROUTE_LEAST_KV, v, 3);
  cr_assert_eq(router_pick(&r), 2, "equal usage: fewer outstanding");
  router_deinit(&r);
}

Test(router, one_replica) {
  router_view v[1] = {{false, 3, 0.9}};
  router r = make(ROUTE_LEAST_KV, v, 1);
  cr_assert_eq(router_pick(&r), 0);
  router_update(&r, 0, (router_view){true, 0, 0});
  cr_assert_eq(router_pick(&r), UINT32_MAX);
  router_deinit(&r);
}

/* What the tree must answer: the first best replica of a scan in index order. */
static uint32_t scan(route_policy p, const router_view *v, uint32_t n) {
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    if (v[i].failed) continue;
    if (best == UINT32_MAX) {
      best = i;
      continue;
    }
    bool less = p == ROUTE_LEAST_KV
                    ? v[i].kv_usage < v[best].kv_usage ||
                          (v[i].kv_usage == v[best].kv_usage && v[i].outstanding < v[best].outstanding)
                    : v[i].outstanding < v[best].outstanding;
    if (less) best = i;
  }
  return best;
}

Test(router, tree_answers_as_a_scan_on_random_updates) {
  static const uint32_t sizes[] = {1, 2, 3, 7, 8, 9, 100, 1000};
  rng g;
  rng_seed(&g, 11);
  for (int pi = 0; pi < 2; pi++) {
    route_policy p = pi ? ROUTE_LEAST_KV : ROUTE_LEAST_OUTSTANDING;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      uint32_t n = sizes[si];
      router_view *v = calloc(n, sizeof *v);
      router r;
      router_init(&r, p, n);
      for (int op = 0; op < 20000; op++) {
        uint32_t i = (uint32_t)rng_below(&g, n);
        v[i].failed = rng_below(&g, 50) == 0 ? !v[i].failed : v[i].failed;
        v[i].outstanding = (uint32_t)rng_below(&g, 6); /* few values: many ties */
        v[i].kv_usage = (double)rng_below(&g, 4) / 4.0;
        router_update(&r, i, v[i]);
        cr_assert_eq(router_pick(&r), scan(p, v, n), "policy %d, %u replicas, op %d", (int)p, n, op);
      }
      router_deinit(&r);
      free(v);
    }
  }
}
