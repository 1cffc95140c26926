/* test_plan_grid.c: sweep grids (flags and spec files, errors naming the
 * flag or field, expansion order), SLO specs and their check over all
 * requests (unfinished = missed), prices, and a small sweep on the thread
 * pool giving the same rows for any number of jobs. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "plan/grid.h"
#include "plan/sweep.h"

static grid_spec G;

/* the setting axes by key (config/settings.c's table decides their places) */
#define AXK(key) ((grid_axis_id)grid_axis_of_key(key))
#define AX_TP AXK("tensor_parallel_size")
#define AX_REPLICAS AXK("replicas")
#define AX_QUANT AXK("quantization")
#define AX_KV AXK("kv_cache_dtype")
#define AX_MNS AXK("max_num_seqs")

Test(grid, flags_and_expansion_order) {
  grid_init(&G);
  sim_err err;
  cr_assert_eq(grid_set_axis_list(&G, AX_GPU, "h100-sxm,h200", "--gpu", &err), 0, "%s", err.msg);
  cr_assert_eq(grid_set_axis_list(&G, AX_TP, "2,4,8", "--tp", &err), 0, "%s", err.msg);
  cr_assert_eq(grid_set_axis_list(&G, AX_RATE, "1,2.5", "--request-rate", &err), 0, "%s", err.msg);
  cr_assert_eq(grid_size(&G), 12);
  grid_point p;
  grid_point_at(&G, 0, &p);
  cr_assert_str_eq(p.v[AX_GPU].s, "h100-sxm");
  cr_assert_float_eq(p.v[AX_TP].x, 2, 0);
  cr_assert_float_eq(p.v[AX_RATE].x, 1, 0);
  grid_point_at(&G, 1, &p); /* the last axis varies fastest */
  cr_assert_float_eq(p.v[AX_RATE].x, 2.5, 0);
  cr_assert_float_eq(p.v[AX_TP].x, 2, 0);
  grid_point_at(&G, 7, &p); /* 7 = gpu 1, tp 0, rate 1 */
  cr_assert_str_eq(p.v[AX_GPU].s, "h200");
  cr_assert_float_eq(p.v[AX_TP].x, 2, 0);
  cr_assert_float_eq(p.v[AX_RATE].x, 2.5, 0);
  char label[256];
  grid_label(&p, label, sizeof label);
  cr_assert_str_eq(label, "h200 tp2 rate=2.5");
  scenario sc;
  scenario_default(&sc);
  cr_assert_eq(grid_apply(&p, &sc, &err), 0);
  cr_assert_str_eq(sc.gpu, "h200");
  cr_assert_eq(sc.deploy.tp, 2);
  cr_assert_float_eq(sc.target_rate, 2.5, 0, "with a trace, the rate rescales it");
  grid_point q;
  grid_point_at(&G, 6, &q);
  cr_assert(grid_same_deployment(&p, &q), "same deployment, different rate");
  grid_point_at(&G, 8, &q);
  cr_assert(!grid_same_deployment(&p, &q));
  grid_free(&G);
}

Test(grid, bad_flag_values_name_the_flag) {
  const struct {
    grid_axis_id a;
    const char *list, *flag, *expect;
  } bad[] = {{AX_TP, "2,x", "--tp", "'x'"},
             {AX_TP, "0", "--tp", "'0'"},
             {AX_REPLICAS, "1,,2", "--replicas", "empty"},
             {AX_QUANT, "none,fp7", "--quantization", "fp7"},
             {AX_KV, "int4", "--kv-cache-dtype", "int4"},
             {AX_RATE, "1,-2", "--request-rate", "-2"},
             {AX_RATE_SCALE, "inf", "--rate-scale", "inf"},
             {AX_MNS, "64,64", "--max-num-seqs", "twice"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    grid_init(&G);
    sim_err err;
    cr_assert_eq(grid_set_axis_list(&G, bad[i].a, bad[i].list, bad[i].flag, &err), SIM_EINPUT, "%s accepted",
                 bad[i].list);
    cr_assert(strstr(err.msg, bad[i].flag) && strstr(err.msg, bad[i].expect), "%s", err.msg);
    grid_free(&G);
  }
}

Test(grid, spec_file) {
  grid_init(&G);
  sim_err err;
  const char *json = "{\"description\": \"x\", \"grid\": {\"gpu\": [\"h200\"], \"tensor_parallel_size\": [2, 4],"
                     " \"quantization\": \"fp8\"}, \"configs\": [{\"max_num_seqs\": 64}, {\"max_num_seqs\": 256, "
                     "\"kv_cache_dtype\": \"fp8\"}], \"slo_ms\": {\"ttft_p99\": 2000, \"tpot_mean\": 40},"
                     " \"target_rate\": 20, \"gpu_hour_price\": {\"h200\": 3}}";
  cr_assert_eq(grid_parse(&G, json, "g.json", &err), 0, "%s", err.msg);
  cr_assert_eq(grid_size(&G), 4);
  grid_point p;
  grid_point_at(&G, 3, &p);
  cr_assert_float_eq(p.v[AX_MNS].x, 256, 0);
  cr_assert_str_eq(p.v[AX_KV].s, "fp8");
  cr_assert_float_eq(p.v[AX_TP].x, 4, 0);
  cr_assert_str_eq(p.v[AX_QUANT].s, "fp8");
  cr_assert_eq(G.slo.n, 2);
  cr_assert_float_eq(G.slo.it[1].pct, -1, 0);
  cr_assert_float_eq(G.target_rate, 20, 0);
  gpu_cfg g;
  cr_assert_eq(cfg_gpu_load(&g, "h200", &err), 0);
  cr_assert_float_eq(price_lookup(&G.price, &g), 3, 0);
  /* flags may not set an axis the file sets */
  cr_assert_eq(grid_set_axis_list(&G, AX_TP, "8", "--tp", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "--tp") && strstr(err.msg, "g.json"), "%s", err.msg);
  cr_assert_eq(grid_set_axis_list(&G, AX_MNS, "8", "--max-num-seqs", &err), SIM_EINPUT, "configs set it");
  grid_free(&G);
}

Test(grid, bad_spec_files_name_file_and_field) {
  const struct {
    const char *json, *expect1, *expect2;
  } bad[] = {
      {"{\"grdi\": {}}", "g.json", "grdi"},
      {"{\"grid\": {\"tp\": [2]}}", "g.json", "unknown axis 'tp'"},
      {"{\"grid\": {\"tensor_parallel_size\": [2, \"four\"]}}", "grid.tensor_parallel_size[1]", "four"},
      {"{\"grid\": {\"tensor_parallel_size\": []}}", "grid.tensor_parallel_size", "empty"},
      {"{\"grid\": {\"quantization\": [8]}}", "grid.quantization[0]", "string"},
      {"{\"grid\": {\"request_rate\": [0]}}", "grid.request_rate[0]", "> 0"},
      {"{\"configs\": [{\"gpu\": \"h200\", \"bogus\": 1}]}", "configs[0]", "bogus"},
      {"{\"configs\": {}}", "configs", "array"},
      {"{\"slo_ms\": {\"ttft_p101\": 5}}", "slo_ms.ttft_p101", "pNN"},
      {"{\"slo_ms\": {\"latency_p99\": 5}}", "slo_ms.latency_p99", "unknown objective"},
      {"{\"slo_ms\": {\"ttft_p99\": -5}}", "slo_ms.ttft_p99", "positive"},
      {"{\"target_rate\": \"fast\"}", "target_rate", "req/s"},
      {"{\"gpu_hour_price\": {\"h200\": 0}}", "gpu_hour_price.h200", "> 0"},
      {"{\"grid\": {\"max_num_seqs\": [1]},\n \"configs\": [{\"max_num_seqs\": 2}]}", "max_num_seqs",
       "configs"},
      {"{\"grid\": [1, 2]}", "grid", "object"},
      {"{\n\"grid\": {\"gpu\": [\"h200\",]}\n}", "g.json:2", "invalid JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    grid_init(&G);
    sim_err err = {0, ""};
    cr_assert_eq(grid_parse(&G, bad[i].json, "g.json", &err), SIM_EINPUT, "accepted: %s", bad[i].json);
    cr_assert(strstr(err.msg, bad[i].expect1) && strstr(err.msg, bad[i].expect2), "case %zu: %s", i, err.msg);
    grid_free(&G);
  }
}

Test(grid, prices) {
  price_spec p = {-1, 0, {{0}}, {0}};
  sim_err err;
  gpu_cfg h100, h200;
  cr_assert_eq(cfg_gpu_load(&h100, "h100-sxm", &err), 0);
  cr_assert_eq(cfg_gpu_load(&h200, "h200", &err), 0);
  cr_assert_float_eq(price_lookup(&p, &h200), h200.price_per_hour, 0, "default: the GPU config's price");
  cr_assert_eq(price_parse(&p, "h100-sxm=2,h200=4.5", "--gpu-hour-price", &err), 0);
  cr_assert_float_eq(price_lookup(&p, &h100), 2, 0);
  cr_assert_float_eq(price_lookup(&p, &h200), 4.5, 0);
  price_spec q = {-1, 0, {{0}}, {0}};
  cr_assert_eq(price_parse(&q, "3", "--gpu-hour-price", &err), 0);
  cr_assert_float_eq(price_lookup(&q, &h100), 3, 0);
  const char *bad[] = {"0", "-1", "abc", "h100-sxm=", "=2", "h200=x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    price_spec r = {-1, 0, {{0}}, {0}};
    cr_assert_eq(price_parse(&r, bad[i], "--gpu-hour-price", &err), SIM_EINPUT, "%s", bad[i]);
    cr_assert(strstr(err.msg, "--gpu-hour-price"));
  }
}

Test(slo, parse) {
  slo_set s = {0};
  sim_err err;
  cr_assert_eq(slo_add(&s, "ttft_p99=2000", "--slo", &err), 0);
  cr_assert_eq(slo_add(&s, "tpot_p99.9=50", "--slo", &err), 0);
  cr_assert_eq(slo_add(&s, "e2el_mean=10000", "--slo", &err), 0);
  cr_assert_eq(slo_add(&s, "ttft_p99=1500", "--slo", &err), 0, "same key replaces");
  cr_assert_eq(s.n, 3);
  cr_assert_float_eq(s.it[0].limit_ms, 1500, 0);
  cr_assert_eq(s.it[1].metric, SLO_TPOT);
  cr_assert_float_eq(s.it[1].pct, 99.9, 1e-12);
  cr_assert_float_eq(slo_limit(&s, SLO_E2EL), 10000, 0);
  const char *bad[] = {"ttft_p99", "ttft_p99=", "ttft=5", "ttft_p0=5", "ttft_q99=5", "itl_p99=5", "=5", "ttft_p99=0"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_assert_eq(slo_add(&s, bad[i], "--slo", &err), SIM_EINPUT, "%s accepted", bad[i]);
    cr_assert(strstr(err.msg, "--slo"), "%s", err.msg);
  }
}

/* A small generated workload on Llama-3.1-8B, one H100. */
static void small_scenario(scenario *sc, uint64_t n, double rate) {
  scenario_init(sc);
  snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
  snprintf(sc->gpu, sizeof sc->gpu, "h100-sxm");
  sc->deploy.tp = 1;
  sc->deploy.max_model_len = 8192;
  sc->gen.num_prompts = n;
  sc->gen.request_rate = rate;
  sc->gen.input.len = 512;
  sc->gen.output.len = 64;
  sc->gen.input.range_ratio = sc->gen.output.range_ratio = 0.5;
}

Test(slo, unfinished_requests_count_as_missed) {
  scenario sc;
  small_scenario(&sc, 200, 50);
  slo_set s = {0};
  sim_err err;
  cr_assert_eq(slo_add(&s, "ttft_p99=100000", "--slo", &err), 0);
  cr_assert_eq(slo_add(&s, "e2el_p50=100000", "--slo", &err), 0);
  price_spec price = {-1, 0, {{0}}, {0}};
  sweep_row row;
  memset(&row, 0, sizeof row);
  sweep_eval(&sc, &s, &price, &row, NULL);
  cr_assert(row.feasible, "%s", row.reason);
  cr_assert(row.slo.all_ok, "a generous SLO is met when everything finishes");
  cr_assert_eq(row.slo.unfinished, 0);
  /* cut the run short: most requests never finish, so the p50 E2EL is infinite */
  sc.time_limit_s = 0.5;
  memset(&row, 0, sizeof row);
  sweep_eval(&sc, &s, &price, &row, NULL);
  cr_assert(row.feasible);
  cr_assert_gt(row.slo.unfinished, 100);
  cr_assert(isinf(row.slo.value_ms[1]), "p50 E2EL %g", row.slo.value_ms[1]);
  cr_assert(!row.slo.all_ok);
  cr_assert(isinf(row.slo.value_ms[0]), "requests never scheduled have an infinite TTFT");
  cr_assert_eq(row.slo.first_fail, 0);
}

Test(sweep, same_rows_for_any_number_of_jobs) {
  scenario base;
  small_scenario(&base, 120, 20);
  grid_init(&G);
  sim_err err;
  cr_assert_eq(grid_set_axis_list(&G, AX_TP, "1,2", "--tp", &err), 0);
  cr_assert_eq(grid_set_axis_list(&G, AX_MNS, "8,64", "--max-num-seqs", &err), 0);
  cr_assert_eq(grid_set_axis_list(&G, AX_RATE, "5,40", "--request-rate", &err), 0);
  cr_assert_eq(grid_set_axis_list(&G, AX_GPU, "h100-sxm,l40s", "--gpu", &err), 0);
  slo_set slo = {0};
  cr_assert_eq(slo_add(&slo, "ttft_p99=1000", "--slo", &err), 0);
  sweep_set a, b;
  cr_assert_eq(sweep_prepare(&a, &base, &G, &slo, &G.price, &err), 0, "%s", err.msg);
  cr_assert_eq(sweep_prepare(&b, &base, &G, &slo, &G.price, &err), 0, "%s", err.msg);
  cr_assert_eq(sweep_execute(&a, 1, NULL, NULL, &err), 0);
  cr_assert_eq(sweep_execute(&b, 3, NULL, NULL, &err), 0);
  cr_assert_eq(a.n, 16);
  size_t feasible = 0;
  for (size_t i = 0; i < a.n; i++) {
    cr_assert_eq(a.rows[i].index, i);
    cr_assert_eq(a.rows[i].feasible, b.rows[i].feasible);
    cr_assert_str_eq(a.rows[i].reason, b.rows[i].reason);
    cr_assert_eq(a.rows[i].sum.completed, b.rows[i].sum.completed);
    cr_assert(a.rows[i].sum.ttft_ms.p99 == b.rows[i].sum.ttft_ms.p99, "row %zu differs", i);
    cr_assert_eq(a.rows[i].pareto_user, b.rows[i].pareto_user);
    feasible += a.rows[i].feasible;
    if (a.rows[i].feasible) {
      cr_assert_float_eq(a.rows[i].tput_per_gpu, a.rows[i].sum.output_throughput / a.rows[i].gpus, 1e-9);
      double usd = a.rows[i].gpus * a.rows[i].price_per_gpu_hour;
      cr_assert_float_eq(a.rows[i].usd_per_m_output, usd / (a.rows[i].sum.output_throughput * 3600) * 1e6, 1e-9);
    }
  }
  /* 8B on one L40S fits, TP2 on L40S works over PCIe; all 16 should start */
  cr_assert_eq(feasible, 16);
  cr_assert_gt(a.n_pareto_user, 0);
  /* with SLOs, the frontiers hold only points that meet them (a miss is no trade-off to take) */
  size_t missed = 0;
  for (size_t i = 0; i < a.n; i++) {
    missed += !a.rows[i].slo.all_ok;
    if (a.rows[i].pareto_user || a.rows[i].pareto_ttft) cr_assert(a.rows[i].slo.all_ok, "row %zu misses the SLOs", i);
  }
  cr_assert_gt(missed, 0, "the grid has points that miss p99 TTFT 1 s (40 req/s on one L40S)");
  sweep_curve *cv;
  size_t nc = sweep_curves(&a, &cv);
  cr_assert_eq(nc, 8, "8 deployments under 2 loads each");
  for (size_t c = 0; c < nc; c++) {
    cr_assert_eq(cv[c].n, 2);
    cr_assert_leq(a.rows[cv[c].row[0]].offered_rate, a.rows[cv[c].row[1]].offered_rate);
  }
  sweep_curves_free(cv, nc);
  sweep_free(&a);
  sweep_free(&b);
  grid_free(&G);
}

Test(sweep, infeasible_points_are_rows_not_errors) {
  scenario base;
  scenario_init(&base);
  base.gen.num_prompts = 20;
  base.gen.request_rate = 5;
  grid_init(&G);
  sim_err err;
  cr_assert_eq(grid_set_axis_list(&G, AX_TP, "1,4", "--tp", &err), 0);
  slo_set slo = {0};
  sweep_set s;
  cr_assert_eq(sweep_prepare(&s, &base, &G, &slo, &G.price, &err), 0, "%s", err.msg);
  cr_assert_eq(sweep_execute(&s, 2, NULL, NULL, &err), 0);
  cr_assert(!s.rows[0].feasible, "70B BF16 on one H200 cannot start");
  cr_assert(strstr(s.rows[0].reason, "GiB"), "%s", s.rows[0].reason);
  cr_assert(s.rows[1].feasible, "%s", s.rows[1].reason);
  cr_assert_eq(s.n_feasible, 1);
  sweep_free(&s);
  /* an unknown GPU name is a bad spec, caught before running */
  cr_assert_eq(grid_set_axis_list(&G, AX_GPU, "h200,h300", "--gpu", &err), 0);
  cr_assert_eq(sweep_prepare(&s, &base, &G, &slo, &G.price, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "h300") && strstr(err.msg, "--gpu"), "%s", err.msg);
  grid_free(&G);
}
