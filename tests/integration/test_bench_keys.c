/* test_bench_keys.c: `--json` with --engine sglang carries sglang.bench_serving's result keys beside vLLM's
 * (its `result` dict in v0.5.9, docs/SGLANG.md section 6; `calculate_metrics` at sgl-project/sglang 0033168f),
 * each from the same run: E2E latency under SGLang's name equal to vLLM's e2el, input throughput = input tokens /
 * duration, concurrency = the completed requests' summed E2E latency / duration (here every request finishes, so
 * it equals the run's mean requests in the system), the re-tokenized output equal to the output (a simulation's
 * tokens are exact), the arguments of a generated workload; a vLLM run has none of them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  cr_assert(cJSON_IsNumber(v), "%s is not a number", k);
  return v->valuedouble;
}

Test(bench_keys, sglang_run_has_bench_serving_keys) {
  cr_assert_eq(tu_run_cli("run --quiet --engine sglang --num-prompts 60 --request-rate 6 --random-input-len 700 "
                          "--random-output-len 90 --random-range-ratio 0.2 --json -", out, sizeof out, err,
                          sizeof err), 0, "%s", err);
  cJSON *r = cJSON_Parse(out);
  cr_assert(r, "not JSON");
  const char *pairs[][2] = {{"mean_e2e_latency_ms", "mean_e2el_ms"}, {"median_e2e_latency_ms", "median_e2el_ms"},
                            {"std_e2e_latency_ms", "std_e2el_ms"}, {"p99_e2e_latency_ms", "p99_e2el_ms"},
                            {"p90_e2e_latency_ms", "p90_e2el_ms"}, {"total_throughput", "total_token_throughput"},
                            {"total_input_text_tokens", "total_input_tokens"},
                            {"total_output_tokens_retokenized", "total_output_tokens"}};
  for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++)
    cr_assert_eq(num(r, pairs[k][0]), num(r, pairs[k][1]), "%s", pairs[k][0]);
  double dur = num(r, "duration");
  cr_assert_float_eq(num(r, "input_throughput"), num(r, "total_input_tokens") / dur, 1e-6);
  cr_assert_eq(num(r, "completed"), 60);
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "servesim"), "queueing");
  double conc = num(r, "concurrency");
  cr_assert_float_eq(conc, num(r, "mean_e2el_ms") * 60 / 1000.0 / dur, 1e-6 * conc);
  cr_assert_float_eq(conc, num(q, "mean_requests_in_system"), 1e-6 * conc);
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "dataset_name")->valuestring, "random");
  cr_assert_eq(num(r, "random_input_len"), 700);
  cr_assert_eq(num(r, "random_output_len"), 90);
  cr_assert_float_eq(num(r, "random_range_ratio"), 0.2, 1e-12);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "accept_length")));
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r, "sharegpt_output_len")));
  cJSON_Delete(r);
  cr_assert_eq(tu_run_cli("run --quiet --engine vllm --num-prompts 20 --json -", out, sizeof out, err, sizeof err), 0,
               "%s", err);
  cr_assert_null(strstr(out, "e2e_latency"));
  cr_assert_null(strstr(out, "\"concurrency\""));
}
