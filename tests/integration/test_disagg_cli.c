/* test_disagg_cli.c: `servesim run --mode disagg` end to end: a run's figures and records (every request's KV
 * sent once, the pools in the JSON echo, byte-identical on a rerun), and the refusals (exit 2, naming the pool
 * and the numbers): a pool TP the model's heads do not take, a KV re-sharding between TPs that do not divide, a
 * pool too small for the weights, pipeline stages, an unknown mode, a pool setting on an aggregated run; conditional disaggregation (short prompts
 * prefilled on the decode worker). plan plans each pool as one of its workers
 * (capacity over disaggregated candidates: test_capacity_modes.c). */
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

Test(disagg_cli, run_sends_each_prompt_kv_once_and_echoes_the_pools) {
  char js[256], csv[256], js2[256], cmd[1024];
  snprintf(js, sizeof js, "/tmp/servesim_disagg_%d.json", getpid());
  snprintf(js2, sizeof js2, "/tmp/servesim_disagg_%d_b.json", getpid());
  snprintf(csv, sizeof csv, "/tmp/servesim_disagg_%d.csv", getpid());
  tu_tmp_track(js);
  tu_tmp_track(js2);
  tu_tmp_track(csv);
  const char *args = "run --quiet --model llama-3.1-8b --gpu h100 --tp 1 --mode disagg --prefill-workers 2 "
                     "--prefill-tp 1 --decode-workers 1 --decode-tp 2 --decode-max-num-seqs 16 --num-prompts 120 "
                     "--request-rate 20 --random-input-len 2000 --random-output-len 64 --force";
  snprintf(cmd, sizeof cmd, "%s --json %s --csv %s", args, js, csv);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "%s --json %s", args, js2);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n, n2;
  char *text = tu_slurp(js, &n), *text2 = tu_slurp(js2, &n2);
  cr_assert(text && text2);
  cr_assert(n == n2 && !memcmp(text, text2, n), "same inputs: byte-identical JSON");
  cJSON *root = cJSON_Parse(text);
  cr_assert(root);
  cr_assert_eq(at(root, "completed")->valuedouble, 120);
  const cJSON *x = at(root, "servesim"), *cfg = at(x, "configuration");
  cr_assert_str_eq(at(cfg, "mode")->valuestring, "disagg");
  cr_assert_eq(at(cfg, "prefill_workers")->valuedouble, 2);
  cr_assert_eq(at(cfg, "decode_tp")->valuedouble, 2);
  cr_assert_eq(at(cfg, "decode_max_num_seqs")->valuedouble, 16);
  cr_assert_eq(at(cfg, "gpus_total")->valuedouble, 4, "2 x TP1 + 1 x TP2");
  const cJSON *t = at(x, "kv_transfer");
  cr_assert_eq(at(t, "transfers")->valuedouble, 120, "one transfer per request");
  /* Llama-3.1-8B BF16: 32 layers x 8 KV heads x 128 x (K, V) x 2 bytes = 131072 bytes per token, 2000 each */
  cr_assert_eq(at(t, "bytes")->valuedouble, 120.0 * 2000 * 131072);
  cr_assert_str_eq(at(t, "link")->valuestring, "nvlink", "4 GPUs: one node");
  cr_assert(at(t, "mean_ms")->valuedouble > 0);
  at(x, "decode_memory_plan");
  cJSON_Delete(root);
  free(text);
  free(text2);
  /* the records: each request prefilled on worker 0 or 1 and decoded on worker 2, its KV in one transfer */
  char *rows = tu_slurp(csv, &n);
  cr_assert(rows);
  cr_assert(strstr(rows, ",prefill_worker,kv_transfer_bytes,kv_transfer_ms\n"), "the disagg columns");
  size_t lines = 0;
  for (char *l = strchr(rows, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
    unsigned id, rep, pw;
    unsigned long long bytes;
    cr_assert_eq(sscanf(l + 1, "%u,%u,", &id, &rep), 2);
    const char *tail = l + 1;
    for (int k = 0; k < 17; k++) tail = strchr(tail, ',') + 1; /* past queue_ms, frontend_ms, prefill_ms */
    cr_assert_eq(sscanf(tail, "%u,%llu,", &pw, &bytes), 2, "request %u", id);
    cr_assert(pw <= 1 && rep == 2, "request %u: prefill worker %u, decode worker %u", id, pw, rep);
    cr_assert_eq(bytes, 2000ull * 131072, "request %u", id);
    lines++;
  }
  cr_assert_eq(lines, 120);
  free(rows);
}

Test(disagg_cli, bad_pools_exit_2_with_the_numbers) {
  const char *dir = tu_tmpdir();
  char model[1024], cmd[2048];
  /* 48 heads, 8 KV heads: TP 16 and 24 both fit, but 24 is no multiple of 16 */
  snprintf(model, sizeof model, "%s/heads48.json", dir);
  cr_assert(tu_write_table(model,
                           "{\"model_type\": \"llama\", \"hidden_size\": 6144, \"intermediate_size\": 16384, "
                           "\"num_hidden_layers\": 8, \"num_attention_heads\": 48, \"num_key_value_heads\": 8, "
                           "\"vocab_size\": 32000, \"max_position_embeddings\": 8192, \"torch_dtype\": "
                           "\"bfloat16\"}",
                           false));
  snprintf(cmd, sizeof cmd, "run --quiet --model %s --gpu h100 --mode disagg --prefill-tp 16 --decode-tp 24 "
           "--num-prompts 4", model);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "prefill_tp 16 and decode_tp 24") && strstr(err, "24 % 16 = 8"), "%s", err);

  cr_assert_eq(tu_run_cli("run --quiet --model llama-3.1-70b --mode disagg --decode-tp 6 --num-prompts 4", out,
                          sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "decode pool") && strstr(err, "tensor_parallel_size 6"), "%s", err);

  cr_assert_eq(tu_run_cli("run --quiet --model llama-3.1-70b --gpu l40s --mode disagg --prefill-tp 1 --decode-tp 8 "
                          "--num-prompts 4", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "prefill pool (TP1)") && strstr(err, "exceed"), "%s", err);

  cr_assert_eq(tu_run_cli("run --quiet --mode disagg --pp 2 --num-prompts 4", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "pipeline_parallel_size 2"), "%s", err);

  /* plan: a decode pool whose weights do not fit is named (exit 2, after both plans are printed) */
  cr_assert_eq(tu_run_cli("plan --model llama-3.1-70b --gpu l40s --mode disagg --prefill-tp 8 --decode-tp 1", out,
                          sizeof out, err, sizeof err), 2);
  cr_assert(strstr(out, "== prefill pool") && strstr(out, "== decode pool"), "%s", out);
  cr_assert(strstr(err, "cannot start: the decode pool"), "%s", err);

  /* a pool setting on an aggregated run would be ignored: refused, naming it */
  cr_assert_eq(tu_run_cli("run --quiet --decode-max-num-seqs 16 --num-prompts 4", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "decode_max_num_seqs 16 (--decode-max-num-seqs)") && strstr(err, "add --mode disagg"), "%s",
            err);

  cr_assert_eq(tu_run_cli("run --quiet --mode split --num-prompts 4", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "unknown value 'split' (agg, disagg)"), "%s", err);
}

/* plan --mode disagg: each pool as one of its workers, its own TP and batch knobs; the JSON holds both. */
Test(disagg_cli, plan_shows_both_pools) {
  char js[256], cmd[1024];
  snprintf(js, sizeof js, "/tmp/servesim_disagg_plan_%d.json", getpid());
  tu_tmp_track(js);
  snprintf(cmd, sizeof cmd, "plan --model llama-3.1-70b --gpu h200 --mode disagg --prefill-workers 2 --prefill-tp 2 "
           "--decode-workers 1 --decode-tp 4 --decode-max-num-seqs 256 --json %s --force", js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "== prefill pool: 2 workers of TP2") && strstr(out, "== decode pool: 1 worker of TP4"), "%s",
            out);
  size_t n;
  char *text = tu_slurp(js, &n);
  cJSON *x = cJSON_Parse(text);
  cr_assert(x, "plan JSON parses");
  cr_assert_str_eq(at(x, "mode")->valuestring, "disagg");
  cr_assert_eq(at(x, "prefill_workers")->valueint, 2);
  const cJSON *p = at(x, "prefill"), *d = at(x, "decode");
  cr_assert_eq(at(p, "tensor_parallel_size")->valueint, 2);
  cr_assert_eq(at(d, "tensor_parallel_size")->valueint, 4);
  cr_assert_eq(at(d, "max_num_seqs")->valueint, 256);
  cr_assert_eq(at(p, "max_num_seqs")->valueint, 1024, "the prefill pool keeps the deployment's");
  cJSON_Delete(x);
  free(text);
}

/* Conditional disaggregation (--max-local-prefill-length N): a prompt with at most N tokens outside the chosen
 * decode worker's prefix cache prefills there, with no prefill worker and no KV transfer; TensorRT-LLM's rule also
 * wants a prefix hit there; SGLang's PD mode has no such path (exit 2). */
Test(disagg_cli, conditional_disagg_prefills_short_prompts_on_the_decode_worker) {
  char js[512], csv[512], cmd[2048];
  const char *dir = tu_tmpdir(); /* removed at exit */
  snprintf(js, sizeof js, "%s/run.json", dir);
  snprintf(csv, sizeof csv, "%s/run.csv", dir);
  const char *args = "run --quiet --model llama-3.1-8b --gpu h100 --tp 1 --mode disagg --prefill-workers 1 "
                     "--decode-workers 1 --num-prompts 60 --request-rate 10 --random-input-len 600 "
                     "--random-output-len 32 --force";
  for (int k = 0; k < 2; k++) { /* 1000 >= 600 uncached tokens: all local; 500: none */
    snprintf(cmd, sizeof cmd, "%s --max-local-prefill-length %d --json %s --csv %s", args, k ? 500 : 1000, js, csv);
    cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    size_t n;
    char *text = tu_slurp(js, &n);
    cJSON *root = cJSON_Parse(text);
    cr_assert(root);
    cr_assert_eq(at(root, "completed")->valuedouble, 60);
    const cJSON *x = at(root, "servesim"), *t = at(x, "kv_transfer");
    cr_assert_eq(at(at(x, "configuration"), "max_local_prefill_length")->valuedouble, k ? 500 : 1000);
    cr_assert_eq(at(t, "local_prefills")->valuedouble, k ? 0 : 60);
    cr_assert_eq(at(t, "transfers")->valuedouble, k ? 60 : 0);
    cJSON_Delete(root);
    free(text);
    /* the records: prefilled on the decode worker (engine core 1) itself, no transfer bytes */
    char *rows = tu_slurp(csv, &n);
    cr_assert(rows);
    size_t lines = 0;
    for (char *l = strchr(rows, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
      unsigned id, rep, pw;
      cr_assert_eq(sscanf(l + 1, "%u,%u,", &id, &rep), 2);
      const char *tail = l + 1;
      for (int c = 0; c < 17; c++) tail = strchr(tail, ',') + 1;
      cr_assert_eq(sscanf(tail, "%u,", &pw), 1, "request %u", id);
      cr_assert_eq(rep, 1, "request %u decoded on worker %u", id, rep);
      cr_assert_eq(pw, k ? 0u : 1u, "request %u prefilled on core %u", id, pw);
      if (!k) cr_assert(!strncmp(tail, "1,,", 3), "request %u: no transfer: %.20s", id, tail);
      lines++;
    }
    cr_assert_eq(lines, 60);
    free(rows);
  }

  /* TensorRT-LLM: only with a prefix hit on the decode worker. The trace's requests share blocks: the first has
     none cached anywhere (sent to the prefill worker), the two after it hit what its KV left on the decode worker */
  snprintf(cmd, sizeof cmd, "run --quiet --model llama-3.1-8b --gpu h100 --tp 1 --engine trtllm "
           "--enable-prefix-caching --mode disagg --prefill-workers 1 --decode-workers 1 --trace '%s' "
           "--max-local-prefill-length 2000 --json %s --force", tu_src("tests/data/traces/mooncake_small.jsonl"), js);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  size_t n;
  char *text = tu_slurp(js, &n);
  cJSON *root = cJSON_Parse(text);
  cr_assert(root);
  const cJSON *t = at(at(root, "servesim"), "kv_transfer");
  cr_assert_eq(at(t, "local_prefills")->valuedouble, 2);
  cr_assert_eq(at(t, "transfers")->valuedouble, 1);
  cJSON_Delete(root);
  free(text);

  cr_assert_eq(tu_run_cli("run --quiet --engine sglang --mode disagg --num-prompts 4 --max-local-prefill-length 100",
                          out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "max_local_prefill_length 100") && strstr(err, "SGLang"), "%s", err);
}
