/* test_autoscale_cli.c: `servesim run --autoscale` end to end: a traffic step scales the fleet up (the text
 * block, servesim.autoscale in the JSON, the time series' replica columns, all byte-identical across runs),
 * a fixed fleet (fixed=N) keeps its size and costs N x GPUs x hours, the scenario key, and the errors (bad spec,
 * sweep/capacity, combinations not modelled) with exit 2. Without --autoscale nothing changes (the time series
 * keeps its columns; result_checksums holds the rest). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char out[1 << 16], err[8192];

#define STEP "run --num-prompts 3000 --request-rate 2 --random-input-len 1000 --random-output-len 200 " \
             "--traffic-step 300:6 --seed 3 "

/* A path in the test's own temporary directory (removed at exit). */
static const char *tmp(const char *name) {
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];
  snprintf(b, 512, "%s/%s", tu_tmpdir(), name);
  return b;
}


Test(autoscale_cli, traffic_step_scales_up_and_reports) {
  const char *j1 = tmp("a1.json"), *j2 = tmp("a2.json"), *ts = tmp("a.csv"), *html = tmp("a.html");
  char args[1024];
  snprintf(args, sizeof args, STEP "--autoscale metric=num_requests_waiting,target=4,min=1,max=6,pod_start=10 "
           "--goodput ttft:2000 --json %s --timeseries %s --report %s --force", j1, ts, html);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Autoscaling: metric=num_requests_waiting,target=4,min=1,max=6"), "%s", out);
  cr_assert(strstr(out, "cold start") && strstr(out, "pod start 10.0 s"), "%s", out);
  cr_assert(strstr(out, "hours missing the SLO"), "%s", out);
  size_t n;
  char *a = tu_slurp(j1, &n);
  cr_assert(a && strstr(a, "\"autoscale\":"), "no servesim.autoscale");
  cr_assert_gt(tu_json_num(a, "starts"), 0, "the step started replicas");
  double peak = tu_json_num(a, "peak_replicas_holding_gpus");
  cr_assert(peak > 1 && peak <= 6, "peak %g", peak);
  double gh = tu_json_num(a, "gpu_hours"), usd = tu_json_num(a, "cost_usd"), price = tu_json_num(a, "usd_per_gpu_hour");
  cr_assert(gh > 0 && fabs(usd - gh * price) < 1e-6 * usd + 1e-9, "cost %g = %g GPU-h x %g", usd, gh, price);
  cr_assert_eq(tu_json_num(a, "rejected"), 0, "nothing lost");
  char *t = tu_slurp(ts, &n);
  cr_assert(t && strstr(t, ",replicas_ready,replicas_starting,replicas_draining\n"), "time-series header");
  cr_assert(strstr(t, ",1,1,0\n") || strstr(t, ",1,2,0\n") || strstr(t, ",1,3,0\n") || strstr(t, ",1,4,0\n") ||
                strstr(t, ",1,5,0\n"),
            "a row with replicas starting");
  char *h = tu_slurp(html, &n);
  cr_assert(h && strstr(h, "Replicas (autoscaled)") && strstr(h, "starting (cold start)"), "the HTML timeline");
  free(h);
  /* the same inputs, the same bytes */
  snprintf(args, sizeof args, STEP "--autoscale metric=num_requests_waiting,target=4,min=1,max=6,pod_start=10 "
           "--goodput ttft:2000 --json %s --force -q", j2);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *b = tu_slurp(j2, &n);
  cr_assert_str_eq(a, b);
  free(a), free(b), free(t);
}

/* mode=planner: Dynamo's SLA planner on servesim's own capacity of one replica (runner/planner_cap.h): the step
 * to 6x makes it start replicas; the capacities it searched are in the text and the JSON; same bytes twice. */
Test(autoscale_cli, planner_scales_on_its_own_capacity) {
  const char *j1 = tmp("p1.json"), *j2 = tmp("p2.json");
  char args[1024];
  snprintf(args, sizeof args, STEP "--autoscale mode=planner,interval=60,min=1,max=6,pod_start=10 "
           "--goodput ttft:2000 --json %s --force", j1);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Autoscaling: mode=planner,ttft=0.5,itl=0.05,predictor=constant,min=1,max=6,interval=60 "
                        "(NVIDIA Dynamo's SLA planner"), "%s", out);
  cr_assert(strstr(out, "one replica's capacity at the planner's targets ("), "%s", out);
  size_t n;
  char *a = tu_slurp(j1, &n);
  cr_assert(a && strstr(a, "\"planner_capacity\":"), "no planner_capacity");
  double cap = tu_json_num(a, "requests_per_s");
  cr_assert(cap > 0.1 && cap < 1000, "capacity %g req/s", cap);
  cr_assert_gt(tu_json_num(a, "starts"), 0, "the step started replicas");
  cr_assert_eq(tu_json_num(a, "rejected"), 0, "nothing lost");
  snprintf(args, sizeof args, STEP "--autoscale mode=planner,interval=60,min=1,max=6,pod_start=10 "
           "--goodput ttft:2000 --json %s --force -q", j2);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *b = tu_slurp(j2, &n);
  cr_assert_str_eq(a, b);
  free(a), free(b);
}

Test(autoscale_cli, fixed_fleet_costs_its_size) {
  const char *j = tmp("fixed.json");
  char args[1024];
  snprintf(args, sizeof args, STEP "--autoscale fixed=3 --json %s --force -q", j);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n;
  char *a = tu_slurp(j, &n);
  cr_assert_eq(tu_json_num(a, "starts"), 0);
  cr_assert_eq(tu_json_num(a, "drains"), 0);
  cr_assert_eq(tu_json_num(a, "peak_replicas_holding_gpus"), 3);
  /* 3 replicas x 4 GPUs for the whole run (to its last event: the benchmark duration here) */
  double held = tu_json_num(a, "replica_hours_held"), dur = tu_json_num(a, "duration");
  cr_assert(fabs(held - 3 * dur / 3600) < 1e-3 * held, "held %g h over %g s", held, dur);
  cr_assert(fabs(tu_json_num(a, "gpu_hours") - 4 * held) < 1e-9 + 1e-9 * held);
  free(a);
}

/* The cold start term by term (configs/coldstart.json) and an instance's price per GPU-hour. */
Test(autoscale_cli, cold_start_terms_and_instance_price) {
  const char *j = tmp("price.json");
  char args[1024];
  snprintf(args, sizeof args, "run --num-prompts 200 --request-rate 4 --autoscale target=4,max=2,load_from=nvme-gen5,"
           "instance=aws-p5e.48xlarge --json %s --force -q", j);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n;
  char *a = tu_slurp(j, &n);
  double pod = tu_json_num(a, "pod_start"), load = tu_json_num(a, "weights_load"), warm = tu_json_num(a, "warmup");
  cr_assert_float_eq(pod, 30, 1e-9);
  cr_assert_float_eq(warm, 42.8, 1e-9);
  /* Llama-3.1-70B BF16 over 4 GPUs: the replica's weights (4 x its per-GPU bytes) at 13 GB/s */
  double gib = tu_json_num(a, "weights_gib");
  cr_assert(gib > 30 && gib < 35, "per-GPU weights %g GiB", gib);
  cr_assert_float_eq(load, 4 * gib * 1073741824.0 / 13e9, 1e-6 * load);
  const char *cs = strstr(a, "\"cold_start_s\"");
  cr_assert(cs);
  cr_assert_float_eq(tu_json_num(cs, "total"), pod + load + warm, 1e-6);
  cr_assert_float_eq(tu_json_num(a, "usd_per_gpu_hour"), 107.0 / 8, 1e-9, "the p5e.48xlarge's price / 8 GPUs");
  free(a);
}

Test(autoscale_cli, without_autoscale_the_time_series_keeps_its_columns) {
  const char *ts = tmp("plain.csv");
  char args[512];
  snprintf(args, sizeof args, "run --num-prompts 50 --timeseries %s --force -q", ts);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n;
  char *t = tu_slurp(ts, &n);
  cr_assert(!strstr(t, "replicas_"), "a plain run's time series changed");
  free(t);
}

Test(autoscale_cli, scenario_key) {
  const char *sc = tu_tmpfile(".json", "{\"name\": \"as\", \"deployment\": {\"tensor_parallel_size\": 4}, \"workload\": {\"num_prompts\": 200, \"request_rate\": 4},\n"
                                       " \"autoscale\": \"metric=running,target=20,max=3\"}\n");
  char args[512];
  snprintf(args, sizeof args, "run --scenario %s", sc);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Autoscaling: metric=num_requests_running,target=20,min=1,max=3"), "%s", out);
  snprintf(args, sizeof args, "serve --scenario %s", sc); /* refused before it listens */
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "`servesim serve` runs a fixed fleet"), "%s", err);
  const char *bad = tu_tmpfile(".json", "{\"name\": \"as\",\n \"autoscale\": \"metric=running,max=3\"}\n");
  snprintf(args, sizeof args, "run --scenario %s", bad);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, ":2: autoscale: target=X is required"), "%s", err);
}

Test(autoscale_cli, errors_exit_2_naming_the_problem) {
  struct {
    const char *args, *msg;
  } cases[] = {
      {"run --num-prompts 10 --autoscale target=4", "--autoscale: max=N is required"},
      {"run --num-prompts 10 --autoscale target=4,max=2,metric=qps", "unknown metric 'qps'"},
      {"run --num-prompts 10 --autoscale target=4,max=2,load_from=floppy", "load_from=floppy: unknown weight source"},
      {"run --num-prompts 10 --autoscale target=4,max=2,instance=nope", "nope"},
      {"run --num-prompts 10 --autoscale target=4,max=2 --fail-replica 0@1", "not modelled"},
      {"sweep --num-prompts 10 --tp 2,4 --autoscale target=4,max=2", "`servesim run` only"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_assert_eq(tu_run_cli(cases[i].args, out, sizeof out, err, sizeof err), 2, "%s: %s", cases[i].args, err);
    cr_assert(strstr(err, cases[i].msg), "%s: %s", cases[i].args, err);
  }
}
