/* test_capacity_modes.c: `servesim capacity` over aggregated and disaggregated candidates of one workload
 * (sim/plan/capacity_modes.c): aggregated points that differ only by pool settings are one candidate, a
 * disaggregated candidate's GPUs are its xPyD groups', its fleet is sized with the pools scaled (a run with
 * --replicas R of an xPyD group equals the one with R times the workers), the summary compares the cheapest of
 * each mode in numbers, a pool that cannot start is named, and pool settings without a disaggregated candidate
 * are refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

static const cJSON *at(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  cr_assert(v, "missing %s", k);
  return v;
}

static double num(const cJSON *o, const char *k) { return at(o, k)->valuedouble; }

static cJSON *capacity_json(const char *args, int want_rc) {
  static char js[256], cmd[2048];
  snprintf(js, sizeof js, "/tmp/servesim_capmodes_%d.json", getpid());
  tu_tmp_track(js);
  snprintf(cmd, sizeof cmd, "capacity %s --json %s --force", args, js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), want_rc, "%s", err);
  size_t n;
  char *text = tu_slurp(js, &n);
  cJSON *root = cJSON_Parse(text);
  cr_assert(root, "capacity JSON does not parse");
  free(text);
  return root;
}

#define WORKLOAD "--model llama-3.1-8b --gpu h100 --tp 1 --num-prompts 400 --random-input-len 2000 " \
                 "--random-output-len 200 --slo ttft_p99=1500 --slo tpot_p99=30 --target-rate 30"

Test(capacity_modes, agg_and_disagg_candidates_compared_in_numbers) {
  cJSON *root = capacity_json(WORKLOAD " --mode agg,disagg --prefill-workers 1,2 --decode-workers 1", 0);
  const cJSON *cands = at(root, "candidates");
  /* 1 aggregated (its two points differ only by --prefill-workers) + 2 disaggregated */
  cr_assert_eq(cJSON_GetArraySize(cands), 3);
  int n_agg = 0, n_dis = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cands) {
    const char *label = at(c, "label")->valuestring;
    const cJSON *cfg = at(c, "config");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(cfg, "mode"); /* echoed for --mode disagg only */
    bool dis = mode && !strcmp(mode->valuestring, "disagg");
    n_agg += !dis, n_dis += dis;
    if (!dis) cr_assert(!strstr(label, " P1") && !strstr(label, " P2"), "aggregated label with pools: %s", label);
    cr_assert(cJSON_IsTrue(at(c, "feasible")), "%s: %s", label, cJSON_Print(c));
    double R = num(c, "replicas_needed"), gpus = num(c, "gpus_needed");
    double unit = dis ? num(cfg, "prefill_workers") * num(cfg, "prefill_tp") + num(cfg, "decode_workers") *
                                                                               num(cfg, "decode_tp")
                      : num(cfg, "tensor_parallel_size");
    cr_assert_eq(gpus, R * unit, "%s: %g GPUs for %g replicas of %g", label, gpus, R, unit);
    cr_assert_str_eq(at(c, "verification")->valuestring, "passed", "%s", label);
    /* the smallest fleet that passed: its probe says so, and one replica fewer missed (or it is one) */
    const cJSON *f, *pass = NULL, *fewer = NULL;
    cJSON_ArrayForEach(f, at(c, "fleet_probes")) {
      if (num(f, "replicas") == R && cJSON_IsTrue(at(f, "meets_slo"))) pass = f;
      if (num(f, "replicas") == R - 1) fewer = f;
    }
    cr_assert(pass, "%s: no passing fleet of %g", label, R);
    if (R > 1) cr_assert(fewer && cJSON_IsFalse(at(fewer, "meets_slo")), "%s", label);
  }
  cr_assert_eq(n_agg, 1);
  cr_assert_eq(n_dis, 2);
  const char *sum = at(root, "summary")->valuestring;
  cr_assert(strstr(sum, "Aggregated or disaggregated at 30 req/s: aggregated: h100 tp1 mode:agg, "), "%s", sum);
  cr_assert(strstr(sum, "; disaggregated: h100 tp1 mode:disagg P"), "%s", sum);
  cJSON_Delete(root);
}

/* R xPyD groups are the pools R times over: a run with --replicas 2 of 1P1D equals the 2P2D run. */
Test(capacity_modes, replicas_of_a_group_are_the_pools_scaled) {
  char a[256], b[256], cmd[1024];
  snprintf(a, sizeof a, "/tmp/servesim_capmodes_r_%d.json", getpid());
  snprintf(b, sizeof b, "/tmp/servesim_capmodes_w_%d.json", getpid());
  tu_tmp_track(a);
  tu_tmp_track(b);
  const char *args = "run --quiet --model llama-3.1-8b --gpu h100 --tp 1 --mode disagg --num-prompts 200 "
                     "--request-rate 30 --random-input-len 1500 --random-output-len 100 --force";
  snprintf(cmd, sizeof cmd, "%s --replicas 2 --json %s", args, a);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "%s --prefill-workers 2 --decode-workers 2 --json %s", args, b);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t na, nb;
  char *ta = tu_slurp(a, &na), *tb = tu_slurp(b, &nb);
  cJSON *ja = cJSON_Parse(ta), *jb = cJSON_Parse(tb);
  const cJSON *ca = at(at(ja, "servesim"), "configuration"), *cb = at(at(jb, "servesim"), "configuration");
  cr_assert_eq(num(ca, "prefill_workers"), 2);
  cr_assert_eq(num(ca, "decode_workers"), 2);
  cr_assert_eq(num(cb, "prefill_workers"), 2);
  cr_assert_eq(num(ca, "replicas"), num(cb, "replicas"));
  /* every figure the benchmark reports is the same */
  const char *keys[] = {"mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "output_throughput", "completed"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
    cr_assert_eq(num(ja, keys[k]), num(jb, keys[k]), "%s", keys[k]);
  cJSON_Delete(ja);
  cJSON_Delete(jb);
  free(ta);
  free(tb);
}

Test(capacity_modes, a_pool_that_cannot_start_is_named_and_lone_pool_settings_refused) {
  /* Llama-3.1-70B's BF16 weights do not fit one L40S: the decode pool of TP1 cannot start, TP8 can */
  cJSON *root = capacity_json("--model llama-3.1-70b --gpu l40s --tp 8 --mode disagg --decode-tp 1,8 "
                              "--num-prompts 50 --random-input-len 500 --random-output-len 50 --slo ttft_p99=5000 "
                              "--target-rate 1", 0);
  const cJSON *cands = at(root, "candidates");
  cr_assert_eq(cJSON_GetArraySize(cands), 2);
  const cJSON *c0 = cJSON_GetArrayItem(cands, 0), *c1 = cJSON_GetArrayItem(cands, 1);
  cr_assert(cJSON_IsFalse(at(c0, "feasible")));
  const char *why = at(c0, "reason")->valuestring;
  cr_assert(strstr(why, "decode pool (TP1): ") && strstr(why, "exceed"), "%s", why);
  cr_assert(cJSON_IsTrue(at(c1, "feasible")), "%s", cJSON_Print(c1));
  cr_assert_eq(num(c1, "gpus_needed"), 16); /* 1P1D of TP8 each */
  cJSON_Delete(root);
  /* pool settings with no disaggregated candidate: nothing they could shape */
  cr_assert_eq(tu_run_cli("capacity --model llama-3.1-8b --gpu h100 --tp 1 --prefill-workers 1,2 --num-prompts 50 "
                          "--slo ttft_p99=5000 --target-rate 1", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "pool settings shape disaggregated candidates only"), "%s", err);
}
