/* test_capacity_fleet.c: capacity sizes fleets by simulation. One replica of
 * Llama-3.1-8B on an L40S sustains about 1.4 req/s of the bundled chat trace
 * at p99 TTFT <= 1 s and p99 TPOT <= 40 ms, so one replica's arithmetic asks
 * for 21 replicas at 30 req/s; behind a least_outstanding router the fleet
 * absorbs bursts one replica alone cannot, and fewer suffice. The answer
 * must be the smallest fleet that meets the SLOs: `servesim run` with that
 * many replicas meets them and with one replica fewer misses them. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  cr_assert(cJSON_IsNumber(v), "%s", k);
  return v->valuedouble;
}

/* p99 TTFT and TPOT of `run` with R replicas at 30 req/s behind the router capacity uses. */
static void run_fleet(unsigned R, double *ttft, double *tpot) {
  static char out[1 << 17], err[4096];
  char cmd[512];
  const char *j = tu_tmpfile(".json", "");
  snprintf(cmd, sizeof cmd,
           "run --model llama-3.1-8b --gpu l40s --tp 1 --replicas %u --router least_outstanding --request-rate 30 "
           "--json %s --force",
           R, j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *t = tu_slurp(j, NULL);
  cJSON *root = cJSON_Parse(t);
  free(t);
  cr_assert(root);
  *ttft = num(root, "p99_ttft_ms");
  *tpot = num(root, "p99_tpot_ms");
  cJSON_Delete(root);
}

Test(capacity_fleet, the_smallest_simulated_fleet_is_the_answer, .timeout = 300) {
  static char out[1 << 17], err[4096];
  const char *j = tu_tmpfile(".json", "");
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "capacity --model llama-3.1-8b --gpu l40s --tp 1 --slo ttft_p99=1000 --slo tpot_p99=40 --target-rate 30 "
           "--json %s --force",
           j);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *t = tu_slurp(j, NULL);
  cJSON *root = cJSON_Parse(t);
  free(t);
  cr_assert(root);
  const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "candidates"), 0);
  cr_assert(c);
  unsigned R = (unsigned)num(c, "replicas_needed"), est = (unsigned)num(c, "replicas_estimate");
  cr_assert_lt(R, est, "the fleet needs fewer replicas (%u) than one replica's rate says (%u)", R, est);
  cr_assert_gt(R, 1);
  /* the search simulated R (met) and R - 1 (missed) */
  bool met = false, missed = false;
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(c, "fleet_probes")) {
    unsigned r = (unsigned)num(f, "replicas");
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "meets_slo"));
    if (r == R) met = ok;
    if (r == R - 1) missed = !ok;
  }
  cr_assert(met && missed, "fleet probes at %u and %u", R, R - 1);
  cJSON_Delete(root);
  cr_assert(strstr(out, "One replica's rate alone would have asked for"), "%s", out);
  /* and `run` agrees: R replicas meet both SLOs, R - 1 miss one */
  double ttft, tpot;
  run_fleet(R, &ttft, &tpot);
  cr_assert(ttft <= 1000 && tpot <= 40, "%u replicas: p99 TTFT %g ms, p99 TPOT %g ms", R, ttft, tpot);
  run_fleet(R - 1, &ttft, &tpot);
  cr_assert(ttft > 1000 || tpot > 40, "%u replicas: p99 TTFT %g ms, p99 TPOT %g ms", R - 1, ttft, tpot);
}
