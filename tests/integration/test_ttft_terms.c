/* test_ttft_terms.c: every request's TTFT told term by term ([fidelity]: "a TTFT decomposition for every request,
 * in the CSV, the JSON summary and the report"): frontend_ms (sent -> the scheduler's queue) + queue_ms (queue ->
 * first scheduled) + prefill_ms (first scheduled -> first token) = ttft_ms, for each finished request of the
 * per-request CSV, under each engine, aggregated and disaggregated; the JSON's means add up the same way; the
 * engine's frontend latency is the frontend term where nothing else delays a request on its way in. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 16], err[1 << 16];

/* Column index of name in the CSV header line h, or -1. */
static int column(const char *h, const char *name) {
  int k = 0;
  size_t n = strlen(name);
  for (const char *p = h; *p && *p != '\n'; k++) {
    if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\n')) return k;
    p = strchr(p, ',');
    if (!p) break;
    p++;
  }
  return -1;
}

/* Field k of line l as a number (NAN when empty). */
static double field(const char *l, int k) {
  for (int i = 0; i < k; i++) l = strchr(l, ',') + 1;
  return *l == ',' || *l == '\n' ? NAN : strtod(l, NULL);
}

/* Runs `run ARGS --csv --json`, checks every finished row and the JSON means; returns the rows checked. */
static int check_run(const char *args, double frontend_ms) {
  const char *dir = tu_tmpdir();
  char csv[1024], js[1024], cmd[4096];
  snprintf(csv, sizeof csv, "%s/r.csv", dir);
  snprintf(js, sizeof js, "%s/r.json", dir);
  snprintf(cmd, sizeof cmd, "run --quiet %s --csv %s --json %s", args, csv, js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
  char *text = tu_slurp(csv, NULL);
  cr_assert(text);
  int c_status = column(text, "status"), c_ttft = column(text, "ttft_ms"), c_q = column(text, "queue_ms");
  int c_f = column(text, "frontend_ms"), c_p = column(text, "prefill_ms");
  cr_assert(c_status >= 0 && c_ttft >= 0 && c_q >= 0 && c_f == c_q + 1 && c_p == c_q + 2, "%s: the header", args);
  int rows = 0, queued = 0;
  for (char *l = strchr(text, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
    const char *st = l + 1;
    for (int i = 0; i < c_status; i++) st = strchr(st, ',') + 1;
    if (strncmp(st, "finished,", 9)) continue;
    double t = field(l + 1, c_ttft), q = field(l + 1, c_q), f = field(l + 1, c_f), p = field(l + 1, c_p);
    cr_assert(q >= 0 && f >= 0 && p > 0, "%s: row %d: terms %g %g %g", args, rows, f, q, p);
    cr_assert_float_eq(f + q + p, t, 1e-5, "%s: row %d: %g + %g + %g != TTFT %g", args, rows, f, q, p, t);
    if (frontend_ms >= 0) cr_assert_float_eq(f, frontend_ms, 1e-6, "%s: row %d: frontend %g", args, rows, f);
    queued += q > 0;
    rows++;
  }
  cr_assert_gt(rows, 0, "%s", args);
  cr_assert_gt(queued, 0, "%s: the load must make some request wait for the test to mean something", args);
  free(text);
  text = tu_slurp(js, NULL);
  cJSON *root = cJSON_Parse(text);
  cr_assert(root);
  const cJSON *qj = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "servesim"), "queueing");
  cr_assert(qj, "%s: servesim.queueing", args);
  double mf = cJSON_GetObjectItem(qj, "mean_frontend_ms")->valuedouble;
  double mq = cJSON_GetObjectItem(qj, "mean_queue_ms")->valuedouble;
  double mp = cJSON_GetObjectItem(qj, "mean_prefill_to_first_token_ms")->valuedouble;
  cr_assert(cJSON_GetObjectItem(qj, "p99_prefill_to_first_token_ms"), "%s", args);
  double mt = cJSON_GetObjectItem(root, "mean_ttft_ms")->valuedouble;
  cr_assert_float_eq(mf + mq + mp, mt, 1e-6 * mt, "%s: means %g + %g + %g != %g", args, mf, mq, mp, mt);
  cJSON_Delete(root);
  free(text);
  return rows;
}

Test(ttft_terms, add_up_to_ttft_under_every_engine) {
  /* 60 req/s of 2,000-token prompts on one H100, a 512-token budget: prompts wait and prefill in chunks */
  const char *load = "--model llama-3.1-8b --gpu h100-sxm --num-prompts 300 --request-rate 60 "
                     "--random-input-len 2000 --random-output-len 64 --max-num-batched-tokens 512";
  char args[1024];
  snprintf(args, sizeof args, "%s --engine vllm@0.25.0", load);
  check_run(args, 4.192); /* vllm.json frontend_latency_us */
  snprintf(args, sizeof args, "%s --engine sglang", load);
  check_run(args, -1);
  snprintf(args, sizeof args, "%s --engine trtllm", load);
  check_run(args, -1);
}

Test(ttft_terms, add_up_to_ttft_disaggregated) {
  check_run("--model llama-3.1-8b --gpu h100-sxm --num-prompts 200 --request-rate 40 --random-input-len 2000 "
            "--random-output-len 64 --mode disagg --prefill-workers 1 --decode-workers 1",
            -1);
}

Test(ttft_terms, in_the_text_summary) {
  cr_assert_eq(tu_run_cli("run --model llama-3.1-8b --num-prompts 50 --request-rate 20", out, sizeof out, err,
                          sizeof err),
               0, "%s", err);
  cr_assert(strstr(out, "TTFT term by term (mean / p99, ms): frontend 4.19 / 4.19, queue "), "%s", out);
}
