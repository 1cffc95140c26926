/* test_autoscale.c: the HPA decision rule (serve/autoscale.h) against sequences computed by hand from the
 * rule's documentation (kubernetes.io, "Horizontal Pod Autoscaling", Algorithm details; KEP-853 stabilization;
 * HPAScalingRules' default policies), and the spec parser's errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "serve/autoscale.h"

static autoscale_cfg spec(const char *s) {
  autoscale_cfg c;
  autoscale_cfg_init(&c);
  sim_err err = {0, ""};
  cr_assert_eq(autoscale_parse(&c, s, "--autoscale", &err), SIM_OK, "%s", err.msg);
  return c;
}

/* c's echo, which must contain `want` and parse back: what it parses to. */
static autoscale_cfg echoed(const autoscale_cfg *c, const char *want) {
  char buf[256];
  autoscale_describe(c, buf, sizeof buf);
  cr_assert(strstr(buf, want), "%s", buf);
  autoscale_cfg back;
  autoscale_cfg_init(&back);
  sim_err err = {0, ""};
  cr_assert_eq(autoscale_parse(&back, buf, "echo", &err), 0, "%s", err.msg);
  return back;
}

/* Each spec bad[i][0] refused (exit-2 class) with a message naming --autoscale and containing bad[i][1]. */
static void expect_refused(const char *bad[][2], size_t n) {
  for (size_t i = 0; i < n; i++) {
    autoscale_cfg c;
    autoscale_cfg_init(&c);
    sim_err err = {0, ""};
    cr_assert_eq(autoscale_parse(&c, bad[i][0], "--autoscale", &err), SIM_EINPUT, "accepted '%s'", bad[i][0]);
    cr_assert(strstr(err.msg, bad[i][1]) && strstr(err.msg, "--autoscale"), "'%s': %s", bad[i][0], err.msg);
  }
}

Test(autoscale, raw_rule_all_ready) {
  autoscale_cfg c = spec("metric=num_requests_waiting,target=5,min=1,max=20");
  cr_assert_eq(autoscale_raw(&c, 2, 0, 10), 2);   /* avg 5 = target */
  cr_assert_eq(autoscale_raw(&c, 2, 0, 11), 2);   /* ratio 1.1: within the 0.1 tolerance */
  cr_assert_eq(autoscale_raw(&c, 2, 0, 9), 2);    /* ratio 0.9: within */
  cr_assert_eq(autoscale_raw(&c, 2, 0, 12), 3);   /* ratio 1.2: ceil(2.4) */
  cr_assert_eq(autoscale_raw(&c, 2, 0, 60), 12);  /* avg 30: ceil(6 x 2) */
  cr_assert_eq(autoscale_raw(&c, 10, 0, 40), 8);  /* avg 4: ceil(0.8 x 10) */
  cr_assert_eq(autoscale_raw(&c, 10, 0, 0), 0);   /* idle: 0 (min clamps later) */
  cr_assert_eq(autoscale_raw(&c, 0, 3, 0), 3);    /* no ready pod, no metrics: unchanged */
}

Test(autoscale, raw_rule_with_starting_pods) {
  autoscale_cfg c = spec("metric=waiting,target=5,max=20");
  /* scale-up: starting pods count 0: (30 + 0) / 4 / 5 = 1.5 -> ceil(6) */
  cr_assert_eq(autoscale_raw(&c, 2, 2, 30), 6);
  /* scale-down: starting pods count as the target: (4 + 10) / 6 / 5 = 0.4667 -> ceil(2.8) = 3 */
  cr_assert_eq(autoscale_raw(&c, 4, 2, 4), 3);
  /* the filled ratio crosses 1 (1.2 -> 6 / 4 / 5 = 0.3): unchanged */
  cr_assert_eq(autoscale_raw(&c, 1, 3, 6), 4);
  /* the filled ratio within the tolerance (2.2 -> 11 / 2 / 5 = 1.1): unchanged */
  cr_assert_eq(autoscale_raw(&c, 1, 1, 11), 2);
}

/* A step input: the waiting queue jumps at t = 15 s and empties at t = 60 s. Hand-computed with the defaults
 * (interval 15 s, tolerance 0.1, up window 0, down window 300 s, 100% / 4 pods per 15 s, min 1, max 10); each
 * decision's replicas are ready at the next (no cold start in this table). */
Test(autoscale, hpa_step_sequence) {
  autoscale_cfg c = spec("metric=num_requests_waiting,target=5,min=1,max=10");
  autoscaler a;
  autoscaler_init(&a, &c);
  struct {
    double t_s, waiting_sum;
    uint32_t want;
  } seq[] = {
      {0, 10, 2},    /* avg 5: at target */
      {15, 60, 6},   /* raw ceil(30 / 5 x 2) = 12; rate limit max(2 x 2, 2 + 4) = 6 */
      {30, 60, 10},  /* avg 10, raw 12; limit max(12, 10) = 12 (the +4 of t=15 is not after 30 - 15); max 10 */
      {45, 40, 10},  /* avg 4, raw 8; the down window holds 12: stays 10 */
      {60, 0, 10},   /* raw 0; window max 12 */
      {300, 0, 10},  /* window (0, 300] still holds t=15 (12) and t=30 (12) */
      {315, 0, 10},  /* t=15 left the window; t=30 (12) still in */
      {330, 0, 8},   /* t=30 gone; the highest left is t=45's 8 */
      {345, 0, 1},   /* t=45 gone: 0, clamped to min 1 */
  };
  uint32_t cur = 2;
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    uint32_t w = autoscaler_decide(&a, sim_s_to_ns(seq[i].t_s), cur, 0, seq[i].waiting_sum);
    cr_assert_eq(w, seq[i].want, "t=%g s: %u replicas, expected %u", seq[i].t_s, w, seq[i].want);
    cur = w;
  }
  autoscaler_deinit(&a);
}

Test(autoscale, up_window_takes_the_lowest) {
  autoscale_cfg c = spec("metric=running,target=10,min=1,max=50,up_window=30,up_limit=off");
  autoscaler a;
  autoscaler_init(&a, &c);
  cr_assert_eq(autoscaler_decide(&a, sim_s_to_ns(0), 2, 0, 20), 2);
  /* avg 40: raw 8, but the window (t > -15) holds 2: min(2, 8) = 2 */
  cr_assert_eq(autoscaler_decide(&a, sim_s_to_ns(15), 2, 0, 80), 2);
  /* t=0 left the 30-s window at t=30 (0 + 30 > 30 is false); min(8, 8) = 8 */
  cr_assert_eq(autoscaler_decide(&a, sim_s_to_ns(30), 2, 0, 80), 8);
  autoscaler_deinit(&a);
}

Test(autoscale, kv_usage_metric) {
  autoscale_cfg c = spec("metric=vllm:gpu_cache_usage_perc,target=0.5,max=8,down_window=0");
  cr_assert_eq(c.metric, AS_KV_USAGE);
  autoscaler a;
  autoscaler_init(&a, &c);
  /* 3 replicas at 0.9, 0.8, 0.7 usage: avg 0.8 / 0.5 = 1.6 -> ceil(4.8) = 5 */
  cr_assert_eq(autoscaler_decide(&a, 0, 3, 0, 2.4), 5);
  /* 5 at avg 0.2: 0.4 -> ceil(2) = 2, no down window */
  cr_assert_eq(autoscaler_decide(&a, sim_s_to_ns(15), 5, 0, 1.0), 2);
  autoscaler_deinit(&a);
}

/* ttft_p90, HPA's External metric with a Value target: ratio = p90 / target, ceil(ratio x ready pods). */
Test(autoscale, fleet_ttft_rule) {
  autoscale_cfg c = spec("metric=ttft_p90,target=0.5,window=30,max=16");
  cr_assert_eq(c.metric, AS_TTFT_P90);
  cr_assert_float_eq(c.window_s, 30, 1e-12);
  cr_assert_eq(autoscale_raw_fleet(&c, 3, 0, 0.54), 3);   /* 1.08: within the tolerance */
  cr_assert_eq(autoscale_raw_fleet(&c, 3, 0, 1.5), 9);    /* 3 x 3 */
  cr_assert_eq(autoscale_raw_fleet(&c, 3, 2, 1.5), 9);    /* ready pods only: starting ones do not multiply */
  cr_assert_eq(autoscale_raw_fleet(&c, 4, 0, 0.2), 2);    /* 0.4 x 4 = 1.6 -> 2 */
  cr_assert_eq(autoscale_raw_fleet(&c, 4, 1, NAN), 5);    /* no first token in the window: unchanged */
  autoscaler a;
  autoscaler_init(&a, &c);
  /* through the policy: 2 ready at a p90 of 2 s (ratio 4): raw 8, the up limit max(4, 6) = 6 */
  cr_assert_eq(autoscaler_decide(&a, 0, 2, 0, 2.0), 6);
  autoscaler_deinit(&a);
  autoscale_cfg back = echoed(&c, "metric=ttft_p90,target=0.5,window=30");
  cr_assert_eq(back.metric, AS_TTFT_P90);
}

Test(autoscale, parse_errors_name_the_key) {
  const char *bad[][2] = {
      {"metric=waiting,max=4", "target"},
      {"target=5", "max"},
      {"target=5,max=4,min=5", "min"},
      {"target=5,max=4,min=0", "min"},
      {"target=5,max=4,metric=tokens", "unknown metric"},
      {"target=5,max=4,colour=red", "unknown key"},
      {"target=5,max=4,interval=0", "interval"},
      {"target=5,max=4,initial=9", "initial"},
      {"target=2,max=4,metric=kv", "fraction"},
      {"target=5,max=4,down_window", "key=value"},
      {"target=x,max=4", "target"},
  };
  expect_refused(bad, sizeof bad / sizeof bad[0]);
}

/* Dynamo's SLA planner (planner_core.py _compute_replica_requirements, without correction): ceil(requests /
 * interval / capacity), at least min, at most max; no capacity keeps the count. Defaults from defaults.py. */
Test(autoscale, planner_rule_by_hand) {
  autoscale_cfg c = spec("mode=planner,min=1,max=20");
  cr_assert(c.planner);
  cr_assert_float_eq(c.interval_s, 180.0, 1e-12, "Dynamo's adjustment_interval");
  cr_assert_float_eq(c.ttft_s, 0.5, 1e-12);
  cr_assert_float_eq(c.itl_s, 0.05, 1e-12);
  cr_assert_eq(planner_replicas(&c, 3, 1800, 2.5), 4);    /* 10 req/s over 2.5 per replica */
  cr_assert_eq(planner_replicas(&c, 3, 1801, 2.5), 5);    /* a request more needs a fifth */
  cr_assert_eq(planner_replicas(&c, 3, 0, 2.5), 1);       /* idle: min */
  cr_assert_eq(planner_replicas(&c, 3, 1e6, 2.5), 20);    /* max */
  cr_assert_eq(planner_replicas(&c, 3, 1800, NAN), 3);    /* no capacity: unchanged */
  cr_assert_eq(planner_replicas(&c, 3, 1800, 0), 3);      /* no rate meets the targets: unchanged */
  autoscale_cfg d = spec("mode=planner,max=8,interval=60,ttft=0.2,itl=0.03,predictor=constant");
  cr_assert_float_eq(d.interval_s, 60.0, 1e-12);
  cr_assert_eq(planner_replicas(&d, 1, 600, 2.5), 4);     /* 10 req/s again */
  autoscale_cfg back = echoed(&d, "mode=planner,ttft=0.2,itl=0.03");
  cr_assert(back.planner && back.interval_s == 60 && back.ttft_s == 0.2 && back.max == 8);
}

Test(autoscale, planner_spec_errors) {
  const char *bad[][2] = {
      {"mode=planner,max=4,predictor=arima", "not modelled"},
      {"mode=planner,fixed=3", "exclude"},
      {"mode=auto,max=3", "mode must be"},
      {"mode=planner,max=3,ttft=0", "ttft"},
      {"mode=planner", "max"},
      {"mode=planner,max=3,target=5", "HPA's"},
      {"mode=planner,max=3,metric=running", "HPA's"},
  };
  expect_refused(bad, sizeof bad / sizeof bad[0]);
}
