/* test_plan_iv.c: the studies' intervals and SLOs at a confidence (plan/plan_iv.h, capacity_conf.c) against
 * hand-computed numbers: the factor e^{q(P)} of a stratum's residuals (merged upward when the stratum has none),
 * the SLO metric's mean residuals standing for every statistic of it, an SLO judged on value x factor, and the
 * interval text. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "plan/capacity.h"
#include "plan/plan_iv.h"

/* version/closed/dense: ttft quantiles 0.1 x level index (0 ... 1.0), tpot all 0.2; * / * / *: everything 1. */
static const char *TABLE =
    "{\"min_points\": 20, \"min_models\": 3,\n"
    " \"quantile_levels\": [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99],\n"
    " \"strata\": {\n"
    "  \"version/closed/dense\": {\"ttft\": {\"n\": 30, \"q\": [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]},\n"
    "                          \"tpot\": {\"n\": 30, \"q\": [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]}},\n"
    "  \"*/*/*\": {\"ttft\": {\"n\": 90, \"q\": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]},\n"
    "            \"e2e\": {\"n\": 90, \"q\": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]}}}}\n";

static void load(plan_iv *iv, double level) {
  memset(iv, 0, sizeof *iv);
  sim_err err = {0, ""};
  cr_assert_eq(unc_table_parse(&iv->t, TABLE, "fixture", &err), SIM_OK, "%s", err.msg);
  iv->loaded = true;
  iv->on = level > 0;
  iv->level = level;
}

Test(plan_iv, factor_is_e_to_the_quantile_of_the_slo_metrics_mean) {
  plan_iv iv;
  load(&iv, 0.8);
  stratum vd = {SC_VERSION, SL_CLOSED, SA_DENSE}, sm = {SC_SCALED, SL_OPEN, SA_MOE};
  char key[32];
  /* q(0.9) of version/closed/dense ttft = 0.7 (the stored level); q(0.925) halfway between 0.7 and 0.8 */
  cr_assert_float_eq(plan_iv_factor(&iv.t, &vd, SLO_TTFT, 0.9, key), exp(0.7), 1e-12);
  cr_assert_str_eq(key, "version/closed/dense");
  cr_assert_float_eq(plan_iv_factor(&iv.t, &vd, SLO_TTFT, 0.925, key), exp(0.75), 1e-12);
  cr_assert_float_eq(plan_iv_factor(&iv.t, &vd, SLO_TPOT, 0.9, key), exp(0.2), 1e-12);
  /* e2e: not in the stratum, merged upward to * / * / * */
  cr_assert_float_eq(plan_iv_factor(&iv.t, &vd, SLO_E2EL, 0.9, key), exp(1), 1e-12);
  cr_assert_str_eq(key, "*/*/*");
  /* tpot: nowhere for this stratum: factor 1, no key */
  cr_assert_float_eq(plan_iv_factor(&iv.t, &sm, SLO_TPOT, 0.9, key), 1, 1e-12);
  cr_assert_str_eq(key, "");
  cr_assert_eq(plan_iv_slo_metric(SLO_E2EL), UM_E2E);
  plan_iv_free(&iv);
}

Test(plan_iv, slo_judged_on_value_times_factor) {
  capacity_set s;
  memset(&s, 0, sizeof s);
  load(&s.iv, 0.8);
  s.confidence = 0.9;
  sim_err err = {0, ""};
  cr_assert_eq(slo_add(&s.slo, "ttft_p99=200", "t", &err), SIM_OK);
  cr_assert_eq(slo_add(&s.slo, "tpot_p99=50", "t", &err), SIM_OK);
  stratum vd = {SC_VERSION, SL_CLOSED, SA_DENSE};
  /* 100 ms x e^0.7 = 201.4 > 200: missed at 0.9; tpot 40 x e^0.2 = 48.9 <= 50: met */
  slo_result r = {.n = 2, .value_ms = {100, 40}, .ok = {true, true}, .all_ok = true, .first_fail = -1};
  capacity_conf_judge(&s, &vd, &r);
  cr_assert(!r.ok[0] && r.ok[1] && !r.all_ok && r.first_fail == 0);
  /* 99 ms x e^0.7 = 199.4: met */
  slo_result r2 = {.n = 2, .value_ms = {99, 40}};
  capacity_conf_judge(&s, &vd, &r2);
  cr_assert(r2.ok[0] && r2.ok[1] && r2.all_ok && r2.first_fail == -1);
  /* an unfinished run stays a miss */
  slo_result r3 = {.n = 2, .value_ms = {INFINITY, 1}};
  capacity_conf_judge(&s, &vd, &r3);
  cr_assert(!r3.all_ok && r3.first_fail == 0);
  /* without a confidence nothing changes */
  s.confidence = 0;
  slo_result r4 = {.n = 2, .value_ms = {100, 40}, .ok = {true, true}, .all_ok = true, .first_fail = -1};
  capacity_conf_judge(&s, &vd, &r4);
  cr_assert(r4.all_ok);
  plan_iv_free(&s.iv);
}

Test(plan_iv, interval_of_a_figure_and_its_text) {
  plan_iv iv;
  load(&iv, 0.8);
  stratum vd = {SC_VERSION, SL_CLOSED, SA_DENSE};
  metrics_summary m;
  memset(&m, 0, sizeof m);
  m.ttft_ms.n = 10;
  m.ttft_ms.mean = 100;
  unc_interval it;
  plan_iv_fig(&iv, &vd, &m, UF_TTFT_MEAN, &it);
  /* 80%: q(0.1) = 0.3, q(0.9) = 0.7 */
  cr_assert(it.have);
  cr_assert_float_eq(it.lo, 100 * exp(0.3), 1e-9);
  cr_assert_float_eq(it.hi, 100 * exp(0.7), 1e-9);
  char buf[96];
  plan_iv_text(&it, "%.1f", buf, sizeof buf);
  cr_assert_str_eq(buf, " [80%: 135.0 - 201.4]");
  plan_iv_fig(&iv, &vd, &m, UF_TPOT_P99, &it);
  plan_iv_text(&it, "%.1f", buf, sizeof buf);
  cr_assert_str_eq(buf, " [80%: no validation data]");
  plan_iv_free(&iv);
  plan_iv off;
  sim_err err = {0, ""};
  cr_assert_eq(plan_iv_load(&off, 0, NULL, false, &err), SIM_OK);
  plan_iv_fig(&off, &vd, &m, UF_TTFT_MEAN, &it);
  plan_iv_text(&it, "%.1f", buf, sizeof buf);
  cr_assert_str_eq(buf, "", "off: nothing");
}
