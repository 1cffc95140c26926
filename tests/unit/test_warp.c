/* test_warp.c: traffic steps and ramps (workload/warp.h): closed forms
 * against hand-computed values, the inverse, monotonicity, local rates, flag
 * and scenario parsing, and the runner applying the warp after rate scaling. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "runner/runner.h"
#include "workload/warp.h"

/* A trace with one request per second at t = 0, 1, ..., n-1. */
static void uniform_trace(trace *t, size_t n) {
  trace_init(t);
  for (size_t i = 0; i < n; i++) trace_push(t, (sim_ns)i * SIM_NS_PER_S, 100, 10, 0, NULL, 0);
}

static size_t count_in(const trace *t, double a_s, double b_s) {
  size_t c = 0;
  for (size_t i = 0; i < t->n; i++) {
    double x = (double)t->reqs[i].arrival_ns / 1e9;
    if (x >= a_s && x < b_s) c++;
  }
  return c;
}

Test(warp, step_hand_values) {
  traffic_warp w = {WARP_STEP, 10, 10, 2};
  cr_assert_float_eq(warp_map_s(&w, 5), 5, 1e-12);
  cr_assert_float_eq(warp_map_s(&w, 10), 10, 1e-12);
  cr_assert_float_eq(warp_map_s(&w, 14), 12, 1e-12); /* 10 + 4 / 2 */
  cr_assert_float_eq(warp_map_s(&w, 30), 20, 1e-12);
  cr_assert_float_eq(warp_multiplier(&w, 9.99), 1, 1e-12);
  cr_assert_float_eq(warp_multiplier(&w, 10), 2, 1e-12);
  trace t;
  uniform_trace(&t, 100);
  warp_apply(&t, &w);
  cr_assert_eq(count_in(&t, 0, 10), 10, "before the step: 1 req/s");
  cr_assert_eq(count_in(&t, 10, 20), 20, "after the step: 2 req/s");
  cr_assert_eq(t.reqs[0].arrival_ns, 0);
  trace_free(&t);
}

Test(warp, step_down_halves_the_rate) {
  traffic_warp w = {WARP_STEP, 0, 0, 0.5};
  cr_assert_float_eq(warp_map_s(&w, 10), 20, 1e-12);
}

Test(warp, ramp_hand_values) {
  /* m(tau) = 1 + (tau - 10) / 10 on [10, 20] (X = 2), t(tau) = tau + (tau-10)^2 / 20 */
  traffic_warp w = {WARP_RAMP, 10, 20, 2};
  cr_assert_float_eq(warp_multiplier(&w, 15), 1.5, 1e-12);
  cr_assert_float_eq(warp_multiplier(&w, 25), 2, 1e-12);
  cr_assert_float_eq(warp_unmap_s(&w, 15), 15 + 25.0 / 20, 1e-12);
  cr_assert_float_eq(warp_unmap_s(&w, 20), 25, 1e-12);        /* T0 + D (1 + X) / 2 */
  cr_assert_float_eq(warp_map_s(&w, 25), 20, 1e-9);           /* the ramp ends at T1 on the simulated clock */
  cr_assert_float_eq(warp_map_s(&w, 16.25), 15, 1e-9);
  cr_assert_float_eq(warp_map_s(&w, 35), 25, 1e-9);           /* after: 20 + (35 - 25) / 2 */
  cr_assert_float_eq(warp_map_s(&w, 7), 7, 1e-12);
}

Test(warp, inverse_monotone_and_continuous) {
  traffic_warp ws[] = {{WARP_RAMP, 100, 400, 3}, {WARP_RAMP, 50, 60, 0.25}, {WARP_STEP, 30, 30, 4},
                       {WARP_RAMP, 0, 1000, 10}};
  for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++) {
    double prev = -1;
    for (double t = 0; t < 3000; t += 0.37) {
      double tau = warp_map_s(&ws[k], t);
      cr_assert(tau > prev, "warp %zu not increasing at t=%g", k, t);
      cr_assert_float_eq(warp_unmap_s(&ws[k], tau), t, 1e-7 * (1 + t), "warp %zu: unmap(map(%g))", k, t);
      prev = tau;
    }
  }
}

Test(warp, ramp_local_rate_follows_the_multiplier) {
  traffic_warp w = {WARP_RAMP, 100, 300, 3};
  trace t;
  uniform_trace(&t, 2000); /* 1 req/s for 2000 s */
  warp_apply(&t, &w);
  /* about m(tau) requests per second: 1 before, 2 at tau = 200, 3 after 300 */
  cr_assert_eq(count_in(&t, 50, 100), 50);
  size_t mid = count_in(&t, 190, 210);
  cr_assert(mid >= 38 && mid <= 42, "around tau = 200 the rate is 2/s: %zu in 20 s", mid);
  size_t after = count_in(&t, 400, 500);
  cr_assert(after >= 299 && after <= 301, "after the ramp 3/s: %zu in 100 s", after);
  for (size_t i = 1; i < t.n; i++) cr_assert(t.reqs[i].arrival_ns >= t.reqs[i - 1].arrival_ns);
  trace_free(&t);
}

Test(warp, parse_flags) {
  traffic_warp w;
  sim_err err;
  cr_assert_eq(warp_parse_step("600:2", "--traffic-step", &w, &err), 0);
  cr_assert_eq(w.kind, WARP_STEP);
  cr_assert_float_eq(w.t0_s, 600, 0);
  cr_assert_float_eq(w.factor, 2, 0);
  cr_assert_eq(warp_parse_ramp("60:120:4", "--traffic-ramp", &w, &err), 0);
  cr_assert_eq(w.kind, WARP_RAMP);
  cr_assert_float_eq(w.t1_s, 120, 0);
  const char *bad_step[] = {"", "600", "600:", "a:2", "600:0", "600:-1", "-5:2", "1:2:3", "600:inf"};
  for (size_t i = 0; i < sizeof bad_step / sizeof bad_step[0]; i++) {
    cr_assert_eq(warp_parse_step(bad_step[i], "--traffic-step", &w, &err), SIM_EINPUT, "'%s' accepted", bad_step[i]);
    cr_assert(strstr(err.msg, "--traffic-step") != NULL, "%s", err.msg);
  }
  const char *bad_ramp[] = {"60:2", "120:60:2", "60:60:2", "60:120:0", "x:1:2", "60:120:2:3"};
  for (size_t i = 0; i < sizeof bad_ramp / sizeof bad_ramp[0]; i++) {
    cr_assert_eq(warp_parse_ramp(bad_ramp[i], "--traffic-ramp", &w, &err), SIM_EINPUT, "'%s' accepted", bad_ramp[i]);
    cr_assert(strstr(err.msg, "--traffic-ramp") != NULL, "%s", err.msg);
  }
}

Test(warp, scenario_json_keys) {
  scenario s;
  sim_err err;
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"workload\": {\"traffic_step\": {\"at_s\": 30, \"factor\": 3}}}", "t.json", &err),
               0, "%s", err.msg);
  cr_assert_eq(s.traffic.kind, WARP_STEP);
  cr_assert_float_eq(s.traffic.t0_s, 30, 0);
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"workload\": {\"traffic_ramp\": {\"from_s\": 10, \"to_s\": 70, \"factor\": 2}}}",
                              "t.json", &err),
               0, "%s", err.msg);
  cr_assert_eq(s.traffic.kind, WARP_RAMP);
  cr_assert_float_eq(s.traffic.t1_s, 70, 0);
  const char *bad[] = {
      "{\"workload\": {\"traffic_step\": {\"at_s\": 30}}}",
      "{\"workload\": {\"traffic_step\": {\"at_s\": 30, \"factor\": 2, \"x\": 1}}}",
      "{\"workload\": {\"traffic_ramp\": {\"from_s\": 70, \"to_s\": 10, \"factor\": 2}}}",
      "{\"workload\": {\"traffic_step\": {\"at_s\": 1, \"factor\": 2}, \"traffic_ramp\": {\"from_s\": 1, \"to_s\": 2, "
      "\"factor\": 2}}}",
      "{\"workload\": {\"traffic_step\": 5}}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    scenario_init(&s);
    cr_assert_eq(scenario_parse(&s, bad[i], "t.json", &err), SIM_EINPUT, "accepted: %s", bad[i]);
    cr_assert(strstr(err.msg, "t.json") && strstr(err.msg, "traffic"), "%s", err.msg);
  }
}

Test(warp, runner_applies_it_after_rate_scaling) {
  scenario s;
  scenario_init(&s);
  s.gen.num_prompts = 400;
  s.gen.request_rate = 5; /* 400 requests over ~80 s */
  s.rate_scale = 2;       /* -> 10 req/s over ~40 s */
  s.traffic = (traffic_warp){WARP_STEP, 20, 20, 2};
  trace a, b;
  sim_err err;
  cr_assert_eq(runner_load_workload(&s, &a, &err), 0, "%s", err.msg);
  s.traffic.kind = WARP_NONE;
  cr_assert_eq(runner_load_workload(&s, &b, &err), 0, "%s", err.msg);
  cr_assert_eq(a.n, b.n);
  for (size_t i = 0; i < a.n; i++) {
    double ta = (double)a.reqs[i].arrival_ns / 1e9, tb = (double)b.reqs[i].arrival_ns / 1e9;
    double want = tb <= 20 ? tb : 20 + (tb - 20) / 2;
    cr_assert_float_eq(ta, want, 1e-6, "request %zu: %g, want %g", i, ta, want);
    cr_assert_eq(a.reqs[i].prompt_tokens, b.reqs[i].prompt_tokens);
  }
  trace_free(&a);
  trace_free(&b);
}
