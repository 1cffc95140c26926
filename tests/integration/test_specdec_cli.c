/* test_specdec_cli.c: speculative decoding through the commands (docs/SPECDEC.md): `run --speculative-config`
 * (the JSON's speculative_decoding section, byte-identical on a rerun, the acceptance drawn as the table says),
 * the refusals (exit 2 naming the field: a bad JSON, a k out of range, vLLM's missing batch-size cut-off, a scenario
 * file's bad speculative_config with its line), a scenario file's speculative_config object, `sweep` over
 * num_speculative_tokens, `plan`'s expected tokens per step, and a run without it showing nothing of it;
 * draft_vocab_size and the draft head in `plan`'s memory and the run's JSON; one published measurement per source
 * of configs/specdec/published.csv as docs/ACCURACY.md reports it (scripts/specdec_published.sh). */
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
      {"--speculative-config '{\"method\": \"eagle\", \"num_speculative_tokens\": 2, \"draft_vocab_size\": 32000}'",
       "draft_vocab_size"},
      {"--speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 2, \"draft_vocab_size\": -1}'",
       "draft_vocab_size"},
      {"--speculative-config '{\"method\": \"draft_model\", \"num_speculative_tokens\": 2, \"acceptance_length\": 2}'",
       "speculative_config.model"},
      {"--speculative-config '{\"method\": \"draft_model\", \"model\": \"llama-2-7b\", \"num_speculative_tokens\": 2, "
       "\"acceptance_length\": 2}'", "vocabulary"},
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

/* The draft head in the memory plan: `plan` names its weights, the run's JSON carries them in the memory section,
   and the KV a token grows by one layer of Llama-3.1-8B's (32 layers: 131072 -> 135168 bytes). */
Test(specdec_cli, draft_head_in_memory) {
  char js[256], cmd[1024];
  snprintf(cmd, sizeof cmd,
           "plan --model llama-3.1-8b --gpu h100 --tp 1 --speculative-config "
           "'{\"method\": \"eagle3\", \"num_speculative_tokens\": 3, \"acceptance_length\": 2.5, "
           "\"draft_vocab_size\": 32000}'");
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "of which the speculative draft head"), "%s", out);
  cr_assert(strstr(out, "135168 bytes"), "%s", out);
  snprintf(js, sizeof js, "/tmp/servesim_specdec_mem_%d.json", getpid());
  tu_tmp_track(js);
  snprintf(cmd, sizeof cmd, "run " SMALL " --json %s --speculative-config '{\"method\": \"eagle3\", "
           "\"num_speculative_tokens\": 3, \"acceptance_length\": 2.5, \"draft_vocab_size\": 32000}'", js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  char *text = tu_slurp(js, NULL);
  cr_assert(text);
  cr_assert(strstr(text, "\"draft_head_weights_gib\""), "no draft head in the JSON");
  cr_assert(strstr(text, "draft_vocab_size\\\":32000"), "the flag's text carries the draft vocabulary");
  free(text);
}

/* method draft_model: Llama-3.1-8B drafting 3 tokens for Llama-3.1-70B on 4 x H100 at a light load: plan names the
   draft's weights and its 32 layers' KV; the run reports the method and spends time in the draft; with a mean
   acceptance length of 2.5 its TPOT is lower than the plain run's. */
Test(specdec_cli, draft_model_runs) {
  const char *spec = "--speculative-config '{\"method\": \"draft_model\", \"model\": \"llama-3.1-8b\", "
                     "\"num_speculative_tokens\": 3, \"acceptance_length\": 2.5}'";
  char cmd[1024], js[256];
  snprintf(cmd, sizeof cmd, "plan --model llama-3.1-70b --gpu h100 --tp 4 %s", spec);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "of which the llama-3.1-8b") && strstr(out, "its 32 attention layer(s)' KV"), "%s", out);
  double tpot[2];
  for (int i = 0; i < 2; i++) {
    snprintf(js, sizeof js, "/tmp/servesim_specdec_dm_%d_%d.json", getpid(), i);
    tu_tmp_track(js);
    snprintf(cmd, sizeof cmd, "run --quiet --model llama-3.1-70b --gpu h100 --tp 4 --num-prompts 40 --request-rate 0.5 "
             "--random-input-len 512 --random-output-len 128 --interval 0 --force --json %s %s", js, i ? spec : "");
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    char *text = tu_slurp(js, NULL);
    cr_assert(text);
    cJSON *root = cJSON_Parse(text);
    const cJSON *x = at(root, "servesim");
    tpot[i] = tu_json_num(text, "mean_tpot_ms");
    if (i) {
      cr_assert_str_eq(at(at(x, "speculative_decoding"), "method")->valuestring, "draft_model");
      cr_assert(at(at(at(x, "steps"), "time_by_op_s"), "spec_draft")->valuedouble > 0);
    }
    cJSON_Delete(root);
    free(text);
  }
  cr_assert(tpot[1] < 0.8 * tpot[0], "TPOT %g ms with the draft, %g without", tpot[1], tpot[0]);
}

/* docs/ACCURACY.md "Speculative decoding": the first EAGLE-1 row of vLLM issue #20780 (Llama-3.1-8B-Instruct, H100,
   MT-bench, concurrency 1, k = 2, measured acceptance length 2.10): measured TPOT 7.07 ms without speculation and
   4.37 ms with it. servesim predicts the baseline within 5% and the speculative TPOT within 15% (both below:
   docs/ACCURACY.md names what the speculative step lacks). A guard on that statement, not a target. */
Test(specdec_cli, published_row_as_documented) {
  const char *base = "run --quiet --model llama-3.1-8b --gpu h100 --tp 1 --engine vllm@0.9.2 --num-prompts 80 "
                     "--max-concurrency 1 --random-input-len 76 --random-output-len 256";
  char js[2][256], cmd[1024];
  double tpot[2];
  for (int i = 0; i < 2; i++) {
    snprintf(js[i], sizeof js[i], "/tmp/servesim_specdec_pub_%d_%d.json", getpid(), i);
    tu_tmp_track(js[i]);
    snprintf(cmd, sizeof cmd, "%s --json %s%s", base, js[i],
             i ? " --speculative-config '{\"method\": \"eagle\", \"num_speculative_tokens\": 2, "
                 "\"acceptance_length\": 2.10}'" : "");
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    char *text = tu_slurp(js[i], NULL);
    cJSON *root = cJSON_Parse(text);
    tpot[i] = at(root, "mean_tpot_ms")->valuedouble;
    cJSON_Delete(root);
    free(text);
  }
  cr_assert(fabs(tpot[0] / 7.07 - 1) < 0.05, "baseline TPOT %.2f ms, measured 7.07", tpot[0]);
  cr_assert(fabs(tpot[1] / 4.37 - 1) < 0.15, "EAGLE k=2 TPOT %.2f ms, measured 4.37", tpot[1]);
}
