/* test_intervals_cli.c: `servesim run --interval` end to end (docs/UNCERTAINTY.md): the interval of each
 * headline figure contains the point when the residuals are centred, widens with a wider stratum, is absent
 * with --interval 0, and bad values or files exit 2 naming the problem. The residual files are written here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

static const char *RUN = "run --model llama-3.1-8b --gpu h100-sxm --num-prompts 60 --request-rate 8";

/* A residual file whose merged key of everything (all three dimensions any) has TTFT, TPOT, E2E and throughput residuals spread +-w. */
static const char *resid_file(double w) {
  static char text[4096];
  char q[512];
  size_t k = 0;
  static const double z[11] = {-2.33, -1.96, -1.64, -1.28, -0.67, 0, 0.67, 1.28, 1.64, 1.96, 2.33};
  for (int i = 0; i < 11; i++) k += (size_t)snprintf(q + k, sizeof q - k, "%s%g", i ? ", " : "", w * z[i]);
  snprintf(text, sizeof text,
           "{\"min_points\": 20, \"min_models\": 3,\n"
           " \"quantile_levels\": [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99],\n"
           " \"strata\": {\"*/*/*\": {\"ttft\": {\"n\": 50, \"q\": [%s]}, \"tpot\": {\"n\": 50, \"q\": [%s]},\n"
           "  \"e2e\": {\"n\": 50, \"q\": [%s]}, \"throughput\": {\"n\": 50, \"q\": [%s]}}}}\n",
           q, q, q, q);
  return tu_tmpfile(".json", text);
}

/* intervals.<fig>.{point, lo, hi} of a run JSON file; lo/hi NAN when null. */
static void fig(const char *path, const char *key, double *point, double *lo, double *hi) {
  char *text = tu_slurp(path, NULL);
  cr_assert(text, "%s not written", path);
  cJSON *root = cJSON_Parse(text);
  free(text);
  cr_assert(root);
  const cJSON *iv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "servesim"), "intervals");
  cr_assert(iv, "no servesim.intervals");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(iv, key);
  cr_assert(f, "no intervals.%s", key);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "point"), *l = cJSON_GetObjectItemCaseSensitive(f, "lo"),
              *h = cJSON_GetObjectItemCaseSensitive(f, "hi");
  *point = p->valuedouble;
  *lo = cJSON_IsNumber(l) ? l->valuedouble : NAN;
  *hi = cJSON_IsNumber(h) ? h->valuedouble : NAN;
  cJSON_Delete(root);
}

Test(intervals_cli, contain_the_point_and_widen_with_the_stratum) {
  char args[1024], ja[256], jb[256];
  snprintf(ja, sizeof ja, "%s/a.json", tu_tmpdir());
  snprintf(jb, sizeof jb, "%s/b.json", tu_tmpdir());
  snprintf(args, sizeof args, "%s --residuals %s --json %s", RUN, resid_file(0.05), ja);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Mean TTFT (ms):") && strstr(out, "[80%: "), "the interval beside the figure: %s", out);
  cr_assert(strstr(out, "P99 TPOT (ms):") && strstr(out, "no validation data"), "%s", out);
  snprintf(args, sizeof args, "%s --residuals %s --json %s", RUN, resid_file(0.5), jb);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  const char *keys[] = {"mean_ttft_ms", "mean_tpot_ms", "mean_e2el_ms", "output_throughput"};
  for (int i = 0; i < 4; i++) {
    double p, lo, hi, p2, lo2, hi2;
    fig(ja, keys[i], &p, &lo, &hi);
    fig(jb, keys[i], &p2, &lo2, &hi2);
    cr_assert(lo <= p && p <= hi, "%s: %g outside [%g, %g]", keys[i], p, lo, hi);
    cr_assert_eq(p, p2, "the same run");
    cr_assert(lo2 < lo && hi2 > hi, "%s: the wider stratum's [%g, %g] must contain [%g, %g]", keys[i], lo2, hi2, lo, hi);
  }
  double p, lo, hi;
  fig(ja, "p99_tpot_ms", &p, &lo, &hi);
  cr_assert(isnan(lo) && isnan(hi), "no residuals for p99 TPOT: no interval");
}

Test(intervals_cli, off_with_zero_and_default_on_the_bundled_file) {
  char args[1024], ja[256];
  snprintf(ja, sizeof ja, "%s/off.json", tu_tmpdir());
  snprintf(args, sizeof args, "%s --interval 0 --json %s", RUN, ja);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(!strstr(out, "[80%") && !strstr(out, "Intervals ("), "%s", out);
  char *text = tu_slurp(ja, NULL);
  cr_assert(text && !strstr(text, "\"intervals\""));
  free(text);
  snprintf(args, sizeof args, "%s --interval-seeds 1", RUN);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Intervals (80%)") && strstr(out, "stratum ") && strstr(out, "1 more seeds"), "%s", out);
}

/* Above RUNNER_IV_SEED_MAX_REQUESTS (20,000) requests a run gets no extra seeds (their spread of a mean is a
 * fraction of a percent there; each would cost a whole run), and says so; at 20,000 it still gets them. */
Test(intervals_cli, large_runs_get_no_extra_seeds) {
  const char *n[2] = {"20000", "20001"};
  for (int i = 0; i < 2; i++) {
    char args[512];
    snprintf(args, sizeof args, "run --model llama-3.1-8b --gpu h100-sxm --num-prompts %s --request-rate 50 "
             "--random-input-len 64 --random-output-len 8 --interval-seeds 1", n[i]);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "Intervals (80%)"), "%s", out);
    if (i) cr_assert(strstr(out, "workload part: none (20001 requests"), "%s", out);
    else cr_assert(strstr(out, "the run and 1 more seeds"), "%s", out);
  }
}

/* A workload no seed changes (fixed lengths, every request sent at once) runs no extra seeds, and says so: its
 * intervals are those of --interval-seeds 0 (a spread of zero, which the extra runs, identical to the run, would
 * have given). With lengths that vary, the seeds run. With speculative decoding the seed also draws the
 * acceptances, so the seeds run even on fixed requests. */
Test(intervals_cli, a_workload_no_seed_changes_runs_no_extra_seeds) {
  char args[1024], ja[512], jb[512];
  snprintf(ja, sizeof ja, "%s/seedless.json", tu_tmpdir());
  snprintf(jb, sizeof jb, "%s/seeds0.json", tu_tmpdir());
  const char *fixed = "run --model llama-3.1-8b --gpu h100-sxm --num-prompts 8 --random-input-len 256 "
                      "--random-output-len 16";
  snprintf(args, sizeof args, "%s --json %s", fixed, ja);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "workload part: none (another seed generates the same requests"), "%s", out);
  snprintf(args, sizeof args, "%s --interval-seeds 0 --json %s", fixed, jb);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  static const char *figs[] = {"mean_ttft_ms", "mean_tpot_ms", "output_throughput"};
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    double pa, la, ha, pb, lb, hb;
    fig(ja, figs[i], &pa, &la, &ha);
    fig(jb, figs[i], &pb, &lb, &hb);
    cr_assert(pa == pb && la == lb && ha == hb, "%s: %g [%g, %g] vs %g [%g, %g]", figs[i], pa, la, ha, pb, lb, hb);
  }
  snprintf(args, sizeof args, "%s --random-range-ratio 0.5 --interval-seeds 1", fixed);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "the run and 1 more seeds"), "%s", out);
  snprintf(args, sizeof args,
           "%s --interval-seeds 1 --speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2, "
           "\"acceptance_length\": 1.8}'",
           fixed);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "the run and 1 more seeds"), "%s", out);
}

Test(intervals_cli, bad_values_exit_2) {
  const char *bad[] = {"-0.1", "1", "0.99", "nan", "abc"};
  char args[1024];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(args, sizeof args, "%s --interval %s", RUN, bad[i]);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2, "--interval %s", bad[i]);
    cr_assert(strstr(err, "--interval"), "%s", err);
  }
  snprintf(args, sizeof args, "%s --interval-seeds 99", RUN);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  const char *broken = tu_tmpfile(".json", "{\"min_points\": 20,\n \"strata\": {}}\n");
  snprintf(args, sizeof args, "%s --residuals %s", RUN, broken);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, broken) && strstr(err, "quantile_levels"), "%s", err);
}
