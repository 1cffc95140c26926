/* test_plan_intervals_cli.c: intervals in `sweep` and `capacity`, and `capacity --confidence P`, end to end
 * (docs/UNCERTAINTY.md). The residual files are written here: `version` strata (h100-sxm with its vLLM tables of
 * another version) nearly sure, everything else (h20, whose profile is scaled from another GPU's tables) wide and
 * shifted up, so the confident answer must agree with the point estimate on h100-sxm and buy more on h20. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

/* The quantiles shift + w z at the 11 stored levels, as a JSON array body. */
static void qtext(char *q, size_t n, double shift, double w) {
  static const double z[11] = {-2.33, -1.96, -1.64, -1.28, -0.67, 0, 0.67, 1.28, 1.64, 1.96, 2.33};
  size_t k = 0;
  for (int i = 0; i < 11; i++) k += (size_t)snprintf(q + k, n - k, "%s%g", i ? ", " : "", shift + w * z[i]);
}

/* version/open/ *: spread +-sure around 0; * / * / *: spread 0.3 around +shift (every metric alike). */
static const char *resid_file(double sure, double shift) {
  static char text[8192];
  char a[512], b[512];
  qtext(a, sizeof a, 0, sure);
  qtext(b, sizeof b, shift, 0.3);
  snprintf(text, sizeof text,
           "{\"min_points\": 20, \"min_models\": 3,\n"
           " \"quantile_levels\": [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99],\n"
           " \"strata\": {\n"
           "  \"version/open/*\": {\"ttft\": {\"n\": 50, \"q\": [%s]}, \"tpot\": {\"n\": 50, \"q\": [%s]},\n"
           "   \"e2e\": {\"n\": 50, \"q\": [%s]}, \"throughput\": {\"n\": 50, \"q\": [%s]}},\n"
           "  \"*/*/*\": {\"ttft\": {\"n\": 50, \"q\": [%s]}, \"tpot\": {\"n\": 50, \"q\": [%s]},\n"
           "   \"e2e\": {\"n\": 50, \"q\": [%s]}, \"throughput\": {\"n\": 50, \"q\": [%s]}}}}\n",
           a, a, a, a, b, b, b, b);
  return tu_tmpfile(".json", text);
}

static cJSON *load(const char *path) {
  char *text = tu_slurp(path, NULL);
  cr_assert(text, "%s not written", path);
  cJSON *root = cJSON_Parse(text);
  free(text);
  cr_assert(root, "%s: not JSON", path);
  return root;
}

static const cJSON *at(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  cr_assert(v, "no key %s", k);
  return v;
}

Test(plan_intervals_cli, sweep_rows_and_summary_carry_intervals) {
  char args[1024], js[256];
  snprintf(js, sizeof js, "%s/sweep.json", tu_tmpdir());
  snprintf(args, sizeof args,
           "sweep --model llama-3.1-8b --gpu h100-sxm,h20 --tp 1 --request-rate 2,6 --num-prompts 60 --residuals %s "
           "--json %s",
           resid_file(0.02, 0.5), js);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "80% of tok/s/GPU"), "the interval column: %s", out);
  cr_assert(strstr(out, "tokens/s per GPU [80%: "), "the summary's headline with its interval: %s", out);
  cJSON *root = load(js);
  int n = 0;
  for (const cJSON *r = at(root, "results")->child; r; r = r->next, n++) {
    const cJSON *iv = at(r, "intervals");
    const char *strat = at(iv, "stratum")->valuestring;
    const char *gpu = at(at(r, "config"), "gpu")->valuestring;
    cr_assert_str_eq(strat, !strcmp(gpu, "h20") ? "scaled/open/dense" : "version/open/dense", "%s", gpu);
    const cJSON *f = at(at(iv, "figures"), "mean_ttft_ms");
    double p = at(f, "point")->valuedouble, lo = at(f, "lo")->valuedouble, hi = at(f, "hi")->valuedouble;
    cr_assert_float_eq(p, at(at(at(r, "metrics"), "ttft_ms"), "mean")->valuedouble, 1e-9 * p);
    if (!strcmp(gpu, "h20")) cr_assert(lo > p && hi / p > exp(0.5 + 0.3 * 1.2), "shifted up: [%g, %g] of %g", lo, hi, p);
    else cr_assert(lo <= p && p <= hi && hi / lo < exp(0.1), "nearly sure: [%g, %g] of %g", lo, hi, p);
    cr_assert(cJSON_IsNull(at(at(at(iv, "figures"), "p99_tpot_ms"), "lo")), "no residuals for p99 TPOT");
  }
  cr_assert_eq(n, 4);
  cJSON_Delete(root);
  /* --interval 0: none */
  snprintf(js, sizeof js, "%s/sweep0.json", tu_tmpdir());
  snprintf(args, sizeof args, "sweep --model llama-3.1-8b --gpu h100-sxm --tp 1 --request-rate 2 --num-prompts 30 "
           "--interval 0 --json %s", js);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(!strstr(out, "80%"), "%s", out);
  root = load(js);
  cr_assert(!cJSON_GetObjectItemCaseSensitive(at(root, "results")->child, "intervals"));
  cJSON_Delete(root);
}

/* capacity on one GPU type, with and without --confidence 0.9: the recommendation's replicas and the point
 * estimate's quoted in the JSON. */
static void capacity_pair(const char *gpu, const char *resid, unsigned *plain, unsigned *conf, unsigned *quoted,
                          char *text, size_t n) {
  char args[1024], js[256];
  const char *base = "capacity --model llama-3.1-8b --tp 1 --num-prompts 100 --slo ttft_p99=1000 --slo tpot_p99=30 "
                     "--target-rate 30";
  for (int k = 0; k < 2; k++) {
    snprintf(js, sizeof js, "%s/cap_%s_%d.json", tu_tmpdir(), gpu, k);
    snprintf(args, sizeof args, "%s --gpu %s --residuals %s --json %s%s", base, gpu, resid, js,
             k ? " --confidence 0.9" : "");
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
    cJSON *root = load(js);
    unsigned r = (unsigned)at(at(root, "recommendation"), "replicas")->valuedouble;
    cr_assert(cJSON_IsNumber(at(at(at(root, "recommendation"), "verified_intervals"), "ttft_p99")->child),
              "the verified values' intervals");
    if (!k) {
      *plain = r;
      cr_assert(cJSON_IsNull(at(root, "confidence")));
    } else {
      *conf = r;
      *quoted = (unsigned)at(at(at(root, "confidence"), "point_estimate_recommendation"), "replicas")->valuedouble;
      size_t len = strnlen(out, n - 1);
      memcpy(text, out, len);
      text[len] = 0;
    }
    cJSON_Delete(root);
  }
}

Test(plan_intervals_cli, confidence_differs_where_unsure_and_agrees_where_sure) {
  const char *resid = resid_file(0.01, 0.5);
  unsigned plain, conf, quoted;
  char text[1 << 14];
  capacity_pair("h100-sxm", resid, &plain, &conf, &quoted, text, sizeof text);
  cr_assert_eq(conf, plain, "sure (version/open/*, +-1%%): the same answer, %u vs %u replicas", conf, plain);
  cr_assert_eq(quoted, plain, "the point estimate quoted is the plain search's");
  cr_assert(strstr(text, "The point estimate alone buys the same"), "%s", text);
  cr_assert(strstr(text, "version/open/dense"), "the stratum named: %s", text);
  capacity_pair("h20", resid, &plain, &conf, &quoted, text, sizeof text);
  cr_assert_gt(conf, plain, "scaled (*/*/*, shifted up x1.6 and wide): more replicas, %u vs %u", conf, plain);
  cr_assert_eq(quoted, plain, "the point estimate quoted is the plain search's");
  cr_assert(strstr(text, "The point estimate alone would have bought"), "%s", text);
  cr_assert(strstr(text, "scaled/open/dense"), "the stratum named: %s", text);
}

Test(plan_intervals_cli, bad_values_exit_2_naming_the_flag) {
  const char *base = "capacity --model llama-3.1-8b --gpu h100-sxm --tp 1 --num-prompts 30 --slo ttft_p99=1000 "
                     "--target-rate 5";
  char args[1024];
  snprintf(args, sizeof args, "%s --confidence 1.5", base);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--confidence"), "%s", err);
  snprintf(args, sizeof args, "%s --interval 2", base);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--interval"), "%s", err);
  snprintf(args, sizeof args, "%s --confidence 0.9 --shard 1/2 --part %s/p1", base, tu_tmpdir());
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--confidence") && strstr(err, "--shard"), "%s", err);
  snprintf(args, sizeof args, "sweep --model llama-3.1-8b --gpu h100-sxm --num-prompts 30 --residuals %s/none.json",
           tu_tmpdir());
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "none.json"), "names the file: %s", err);
}

Test(plan_intervals_cli, run_reports_show_the_intervals) {
  char args[1024], md[256], html[256];
  snprintf(md, sizeof md, "%s/run.md", tu_tmpdir());
  snprintf(html, sizeof html, "%s/run.html", tu_tmpdir());
  snprintf(args, sizeof args, "run --model llama-3.1-8b --gpu h100-sxm --num-prompts 40 --request-rate 4 "
           "--interval-seeds 0 --residuals %s --report-md %s --report %s -q", resid_file(0.05, 0.5), md, html);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *m = tu_slurp(md, NULL), *h = tu_slurp(html, NULL);
  cr_assert(m && h);
  cr_assert(strstr(m, "| mean TTFT (ms) |") && strstr(m, "version/open/* (50 points)"), "%s", m);
  cr_assert(strstr(m, "stratum version/open/dense"), "%s", m);
  cr_assert(strstr(h, "version/open/* (50 points)") && strstr(h, "no validation data"), "the HTML table");
  free(m);
  free(h);
}
