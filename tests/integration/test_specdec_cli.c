/* test_specdec_cli.c: speculative decoding through the commands (docs/SPECDEC.md): `run --speculative-config`
 * (the JSON's speculative_decoding section, byte-identical on a rerun, the acceptance drawn as the table says),
 * the refusals (exit 2 naming the field: a bad JSON, a k out of range, vLLM's missing batch-size cut-off, a scenario
 * file's bad speculative_config with its line), a scenario file's speculative_config object, `sweep` over
 * num_speculative_tokens, `plan`'s expected tokens per step, and a run without it showing nothing of it. */
#include <criterion/criterion.h>
#include <math.h>
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

#define SMALL "--quiet --model llama-3.1-8b --gpu h100 --tp 1 --num-prompts 80 --request-rate 4 " \
              "--random-input-len 512 --random-output-len 128 --force"

Test(specdec_cli, run_reports_acceptance_and_is_deterministic) {
  char js[256], js2[256], cmd[1024];
  snprintf(js, sizeof js, "/tmp/servesim_specdec_%d.json", getpid());
  snprintf(js2, sizeof js2, "/tmp/servesim_specdec_%d_b.json", getpid());
  tu_tmp_track(js);
  tu_tmp_track(js2);
  const char *spec = "--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 4, "
                     "\"dataset\": \"humaneval\"}'";
  snprintf(cmd, sizeof cmd, "run " SMALL " %s --json %s", spec, js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "run " SMALL " %s --json %s", spec, js2);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n, n2;
  char *text = tu_slurp(js, &n), *text2 = tu_slurp(js2, &n2);
  cr_assert(text && text2);
  cr_assert(n == n2 && !memcmp(text, text2, n), "same inputs and seed: byte-identical JSON");
  cJSON *root = cJSON_Parse(text);
  const cJSON *x = at(root, "servesim"), *sd = at(x, "speculative_decoding");
  cr_assert_str_eq(at(sd, "method")->valuestring, "eagle3");
  cr_assert(strstr(at(sd, "acceptance_source")->valuestring, "humaneval"));
  double expect = at(sd, "expected_tokens_per_step")->valuedouble, got = at(sd, "mean_acceptance_length")->valuedouble;
  cr_assert(expect > 1 && expect < 5);
  cr_assert(fabs(got - expect) < 0.05 * expect, "drawn %g, expected %g", got, expect);
  cr_assert_eq(cJSON_GetArraySize(at(sd, "accepted_per_position")), 4);
  cr_assert(at(at(at(x, "steps"), "time_by_op_s"), "spec_draft")->valuedouble > 0);
  cJSON_Delete(root);
  free(text);
  free(text2);
}

Test(specdec_cli, off_shows_nothing_of_it) {
  char js[256], cmd[1024];
  snprintf(js, sizeof js, "/tmp/servesim_specdec_off_%d.json", getpid());
  tu_tmp_track(js);
  snprintf(cmd, sizeof cmd, "run " SMALL " --json %s", js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *text = tu_slurp(js, NULL);
  cr_assert(text);
  cr_assert_null(strstr(text, "specul"));
  cr_assert_null(strstr(text, "spec_draft"));
  free(text);
}

Test(specdec_cli, refusals_name_the_field) {
  static const struct {
    const char *flags, *field;
  } bad[] = {
      {"--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 99}'", "num_speculative_tokens"},
      {"--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 2, \"disable_by_batch_size\": 4}'",
       "disable_by_batch_size"},
      {"--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 2, \"acceptance_rates\": [0.5]}'",
       "acceptance_rates"},
      {"--speculative-config '{\"method\": \"lookahead\"}'", "method"},
      {"--speculative-config 'eagle3'", "JSON object"},
      {"--num-speculative-tokens 3", "method"},
      {"--speculative-method mtp --num-speculative-tokens 1", "num_nextn_predict_layers"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "run " SMALL " %s", bad[i].flags);
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2, "%s: %s", bad[i].flags, err);
    cr_assert(strstr(err, bad[i].field), "%s: '%s' does not name %s", bad[i].flags, err, bad[i].field);
  }
}

Test(specdec_cli, scenario_file_takes_the_object) {
  const char *good = tu_tmpfile(".json",
                                "{\"model\": \"llama-3.1-8b\", \"gpu\": \"h100\", \"engine\": \"vllm\",\n"
                                " \"deployment\": {\"tensor_parallel_size\": 1,\n"
                                "   \"speculative_config\": {\"method\": \"eagle3\", \"num_speculative_tokens\": 2,\n"
                                "                          \"acceptance_length\": 2.5}},\n"
                                " \"workload\": {\"num_prompts\": 30, \"request_rate\": 2}}\n");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "run --scenario %s", good);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "Speculative decoding: eagle3, 2 draft tokens"), "%s", out);
  cr_assert(strstr(out, "expected 2.50"), "%s", out);
  const char *bad = tu_tmpfile(".json",
                               "{\"model\": \"llama-3.1-8b\", \"gpu\": \"h100\",\n"
                               " \"deployment\": {\n"
                               "   \"speculative_config\": {\"method\": \"eagle3\", \"num_speculative_tokens\": -1}}}\n");
  snprintf(cmd, sizeof cmd, "run --scenario %s", bad);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2, "%s", err);
  cr_assert(strstr(err, ":3:") && strstr(err, "speculative_config") && strstr(err, "num_speculative_tokens"), "%s",
            err);
}

Test(specdec_cli, sweep_and_plan) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "sweep --model llama-3.1-8b --gpu h100 --tp 1 --speculative-method eagle3 --num-speculative-tokens 0,2 "
           "--request-rate 2 --num-prompts 40 --random-input-len 256 --random-output-len 64");
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "k=0") && strstr(out, "k=2"), "%s", out);
  snprintf(cmd, sizeof cmd,
           "plan --model llama-3.1-70b --gpu h200 --tp 4 --speculative-config "
           "'{\"method\": \"eagle3\", \"num_speculative_tokens\": 3, \"acceptance_rates\": [0.8, 0.6, 0.4]}'");
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "2.80 expected tokens per step"), "%s", out);
  cr_assert(strstr(out, "verify, batch 1, context 2048"), "%s", out);
}
