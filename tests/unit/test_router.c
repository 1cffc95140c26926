/* test_router.c: replica selection policies. */
#include <criterion/criterion.h>

#include "serve/router.h"

Test(router, round_robin_skips_failed) {
  router r = {ROUTE_ROUND_ROBIN, 0};
  router_view v[3] = {{false, 0, 0}, {true, 0, 0}, {false, 0, 0}};
  cr_assert_eq(router_pick(&r, v, 3), 0);
  cr_assert_eq(router_pick(&r, v, 3), 2);
  cr_assert_eq(router_pick(&r, v, 3), 0);
  v[0].failed = v[2].failed = true;
  cr_assert_eq(router_pick(&r, v, 3), UINT32_MAX);
}

Test(router, least_outstanding_and_ties) {
  router r = {ROUTE_LEAST_OUTSTANDING, 0};
  router_view v[3] = {{false, 5, 0}, {false, 2, 0}, {false, 2, 0}};
  cr_assert_eq(router_pick(&r, v, 3), 1, "ties go to the lowest index");
  v[1].failed = true;
  cr_assert_eq(router_pick(&r, v, 3), 2);
}

Test(router, least_kv_usage) {
  router r = {ROUTE_LEAST_KV, 0};
  router_view v[3] = {{false, 1, 0.5}, {false, 9, 0.2}, {false, 0, 0.2}};
  cr_assert_eq(router_pick(&r, v, 3), 2, "equal usage: fewer outstanding");
}
