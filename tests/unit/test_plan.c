/* test_plan.c: `plan`'s arithmetic against hand-computed values: the classic
 * 70B check (141.1 GB of FP16 weights: 2 x 80 GB GPUs at least; 50 tokens/s
 * for one sequence = 7.06 TB/s of weight reads, more than one H100's 3.35),
 * KV bytes per token, the largest batch, chunked prefill, the bounds, the
 * refusal with numbers, and the JSON. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <dirent.h>

#include "plan/plan.h"
#include "testutil.h"

static plan_result P;

static void analyze(const char *model, const char *gpu, uint32_t tp, const char *quant, const char *kv,
                    const plan_opts *o) {
  scenario sc;
  scenario_init(&sc);
  snprintf(sc.model, sizeof sc.model, "%s", model);
  snprintf(sc.gpu, sizeof sc.gpu, "%s", gpu);
  sc.deploy.tp = tp;
  if (quant) {
    cr_assert(cfg_parse_quantization(quant, DT_BF16, &sc.deploy.weight_dtype));
    sc.deploy.weight_dtype_set = strcmp(quant, "none") != 0;
  }
  if (kv) {
    cr_assert(dtype_parse(kv, &sc.deploy.kv_dtype));
    sc.deploy.kv_dtype_set = true;
  }
  sim_err err;
  plan_opts def = {0, 0, 0};
  cr_assert_eq(plan_analyze(&P, &sc, o ? o : &def, &err), 0, "%s", err.msg);
}

Test(plan, classic_70b_fp16_check) {
  scenario sc;
  scenario_init(&sc);
  snprintf(sc.gpu, sizeof sc.gpu, "h100-sxm");
  sc.deploy.tp = 1;
  sc.deploy.act_dtype = DT_FP16;
  sc.deploy.act_dtype_set = true;
  sim_err err;
  plan_opts o = {0, 0, 50};
  cr_assert_eq(plan_analyze(&P, &sc, &o, &err), 0, "%s", err.msg);
  /* 70,553,706,496 parameters x 2 bytes */
  cr_assert_float_eq(P.weights_total_bytes, 141107412992.0, 1.0);
  cr_assert_float_eq(P.weights_total_bytes / 1e9, 141.1, 0.05);
  /* 141.1 GB / 85.52 GB (81,559 MiB) = 1.65 -> 2 GPUs */
  cr_assert_eq(P.min_gpus_weights, 2);
  /* 141.1 GB x 50 /s = 7.06 TB/s > 3.35 TB/s -> 3 GPUs' bandwidth */
  cr_assert_float_eq(P.weight_read_Bps / 1e12, 7.0553706496, 1e-9);
  cr_assert_gt(P.weight_read_Bps, P.gpu.hbm_Bps);
  cr_assert_eq(P.min_gpus_bandwidth, 3);
  cr_assert_str_eq(P.gates[PLAN_GATE_BANDWIDTH].status, "fails");
  /* and one H100 cannot even start: refused with the numbers */
  cr_assert(!P.fits);
  cr_assert_str_eq(P.gates[PLAN_GATE_CAPACITY].status, "fails");
  char budget[32];
  snprintf(budget, sizeof budget, "%.1f GiB", P.mem.budget_bytes / (1024.0 * 1024 * 1024));
  cr_assert(strstr(P.refusal, "131.4 GiB") && strstr(P.refusal, budget), "%s", P.refusal);
  cr_assert_eq(P.max_batch, 0);
  /* a batch-1 decode cannot beat reading every weight once: 131.4 GiB / 3.35 TB/s = 42.1 ms */
  cr_assert_geq(P.decode1.ns / 1e6, 141107412992.0 / 3.35e12 * 1e3 * 0.999);
  cr_assert_eq(P.decode1.bound, BOUND_MEMORY);
}

Test(plan, kv_bytes_per_token_and_largest_batch) {
  plan_opts o = {2048, 1024, 50};
  analyze("llama-3.1-70b", "h200", 4, NULL, NULL, &o);
  cr_assert(P.fits, "%s", P.refusal);
  /* 2 (K, V) x 80 layers x (8 KV heads / TP4) x 128 x 2 bytes */
  cr_assert_float_eq(P.mem.kv_bytes_per_token, 81920, 0);
  cr_assert_eq(P.blocks_per_seq, 128); /* 2048 / 16 */
  cr_assert_eq(P.max_batch_memory, P.mem.kv_blocks / 128);
  cr_assert_eq(P.mem.kv_tokens, (uint64_t)P.mem.kv_blocks * 16);
  cr_assert_eq(P.max_batch, SIM_MIN(P.max_batch_memory, 1024u));
  cr_assert_str_eq(P.batch_limit, "memory capacity (KV cache)");
  /* the pool: budget minus the rest, in blocks of 16 x 81,920 bytes, one reserved */
  double kv = P.mem.budget_bytes - P.mem.weights_bytes - P.mem.activation_bytes - P.mem.cuda_graph_bytes -
              P.mem.runtime_bytes;
  cr_assert_float_eq(P.mem.kv_bytes, kv, 1.0);
  cr_assert_eq(P.mem.kv_blocks, (uint32_t)(floor(kv / (81920.0 * 16)) - 1));
  /* FP8 KV cache halves the bytes per token and about doubles the tokens */
  uint64_t bf16_tokens = P.mem.kv_tokens;
  analyze("llama-3.1-70b", "h200", 4, NULL, "fp8", &o);
  cr_assert_float_eq(P.mem.kv_bytes_per_token, 40960, 0);
  cr_assert_geq(P.mem.kv_tokens, 2 * bf16_tokens - 32);
  /* TP1 on Llama-3.1-8B: 2 x 32 x 8 x 128 x 2 = 131,072 bytes per token */
  analyze("llama-3.1-8b", "h100-sxm", 1, NULL, NULL, &o);
  cr_assert_float_eq(P.mem.kv_bytes_per_token, 131072, 0);
}

Test(plan, batch_capped_by_max_num_seqs) {
  scenario sc;
  scenario_init(&sc);
  sc.deploy.tp = 4;
  sc.deploy.max_num_seqs = 64;
  sim_err err;
  plan_opts o = {1024, 0, 0};
  cr_assert_eq(plan_analyze(&P, &sc, &o, &err), 0, "%s", err.msg);
  cr_assert_eq(P.max_batch, 64);
  cr_assert_str_eq(P.batch_limit, "max_num_seqs");
  cr_assert_eq(P.decode_max.batch, 64);
  cr_assert_gt(P.decode_max.ns, P.decode1.ns, "a larger batch takes longer per step");
  cr_assert_gt(P.decode_max.tokens_per_s, 10 * P.decode1.tokens_per_s, "but serves far more tokens/s");
}

Test(plan, quantization_shrinks_weights) {
  analyze("llama-3.1-70b", "h200", 4, NULL, NULL, NULL);
  double bf16 = P.weights_total_bytes;
  analyze("llama-3.1-70b", "h200", 4, "fp8", NULL, NULL);
  double fp8 = P.weights_total_bytes;
  analyze("llama-3.1-70b", "h200", 4, "int4", NULL, NULL);
  double int4 = P.weights_total_bytes;
  /* linear layers drop to 1 byte (fp8) and 0.5 + 2/128 bytes (int4); embeddings stay bf16 */
  double lin = P.model.params_per_layer_linear * P.model.layers;
  cr_assert_float_eq(bf16 - fp8, lin * 1.0, 1e3);
  cr_assert_float_eq(bf16 - int4, lin * (2.0 - 0.5 - 2.0 / 128), 1e3);
  cr_assert_eq(P.min_gpus_weights, 1);
}

Test(plan, prefill_is_chunked_and_compute_bound) {
  plan_opts o = {2048, 20000, 0};
  analyze("llama-3.1-8b", "h100-sxm", 1, NULL, NULL, &o);
  cr_assert_eq(P.prefill.chunks, 3, "20000 tokens in chunks of 8192");
  cr_assert_eq(P.prefill.bound, BOUND_COMPUTE);
  /* at least the FLOPs of the linear layers: 2 x params x tokens at the dense peak */
  double flops = 2.0 * P.model.params_per_layer_linear * P.model.layers * 20000;
  cr_assert_geq(P.prefill.ns, flops / P.gpu.flops[DT_BF16] * 1e9);
  cr_assert_float_eq(P.prefill.tokens_per_s, 20000 * 1e9 / P.prefill.ns, 1e-6);
  /* one chunk */
  plan_opts o2 = {2048, 1024, 0};
  analyze("llama-3.1-8b", "h100-sxm", 1, NULL, NULL, &o2);
  cr_assert_eq(P.prefill.chunks, 1);
}

Test(plan, bad_inputs_are_errors) {
  scenario sc;
  scenario_init(&sc);
  sim_err err;
  plan_opts o = {0, 0, 0};
  sc.deploy.tp = 3; /* does not divide 64 heads */
  cr_assert_eq(plan_analyze(&P, &sc, &o, &err), SIM_EINPUT);
  scenario_init(&sc);
  snprintf(sc.gpu, sizeof sc.gpu, "no-such-gpu");
  cr_assert_eq(plan_analyze(&P, &sc, &o, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "no-such-gpu"), "%s", err.msg);
  scenario_init(&sc);
  sc.deploy.tp = 4;
  sc.deploy.max_model_len = 1000;
  plan_opts big = {4096, 0, 0};
  cr_assert_eq(plan_analyze(&P, &sc, &big, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "max_model_len"), "%s", err.msg);
}

Test(plan, json_has_the_numbers) {
  analyze("llama-3.1-70b", "h200", 4, NULL, NULL, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sim_err err;
  cr_assert_eq(plan_write_json(&P, f, &err), 0);
  fclose(f);
  cJSON *root = cJSON_Parse(buf);
  cr_assert(root, "invalid JSON");
  const cJSON *cc = cJSON_GetObjectItemCaseSensitive(root, "classic_check");
  cr_assert_float_eq(cJSON_GetObjectItemCaseSensitive(cc, "weights_total_gb")->valuedouble, 141.107412992, 1e-6);
  cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "fits")));
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "batch");
  cr_assert_eq(cJSON_GetObjectItemCaseSensitive(b, "max_batch")->valueint, (int)P.max_batch);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "gates")), PLAN_GATES);
  cr_assert(cJSON_GetObjectItemCaseSensitive(root, "decode_max_batch"));
  cJSON_Delete(root);
  free(buf);
}

/* Every Hugging Face config of ../shared/models on every bundled GPU (TP8, the datasheet roofline: the memory
 * plan is what is checked): planned, or refused with the numbers (weights or KV pool against the budget), or
 * refused naming the architecture feature servesim does not model yet. Never a crash or a bare failure. */
Test(plan, every_shared_model_on_every_gpu_plans_or_refuses_with_a_reason, .timeout = 600) {
  const char *dir = tu_shared("models");
  if (!dir) cr_skip_test("../shared/models is absent");
  char root[512];
  cr_assert(strlen(dir) < sizeof root - 200, "%s: too long a path", dir);
  snprintf(root, sizeof root, "%s", dir);
  static const char *const gpus[] = {"h100-sxm", "h200", "b200", "b300", "gb200", "gb300", "a100-sxm-80gb", "l40s", "h20"};
  DIR *d = opendir(root);
  cr_assert(d != NULL);
  size_t models = 0, fits = 0, refused_numbers = 0, refused_feature = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json") || strstr(e->d_name, ".hf_quant_config.")) continue;
    models++;
    for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
      scenario sc;
      scenario_init(&sc);
      snprintf(sc.model, sizeof sc.model, "%s/%s", root, e->d_name);
      snprintf(sc.gpu, sizeof sc.gpu, "%s", gpus[g]);
      snprintf(sc.profile, sizeof sc.profile, "none");
      sc.deploy.tp = 8;
      sim_err err = {0, ""};
      plan_opts o = {0, 0, 0};
      memset(&P, 0, sizeof P);
      int rc = plan_analyze(&P, &sc, &o, &err);
      if (rc) {
        cr_assert(strstr(err.msg, e->d_name) && (strstr(err.msg, "not modelled yet") || strstr(err.msg, "not read yet")),
                  "%s on %s: %s", e->d_name, gpus[g], err.msg);
        refused_feature++;
        break; /* the model, not the GPU: the same on every GPU */
      }
      if (P.fits) {
        fits++;
        cr_assert(P.mem.kv_tokens > 0 && P.max_batch > 0, "%s on %s", e->d_name, gpus[g]);
      } else {
        cr_assert(strstr(P.refusal, "GiB") || strstr(P.refusal, "tokens"), "%s on %s: %s", e->d_name, gpus[g],
                  P.refusal);
        refused_numbers++;
      }
    }
  }
  closedir(d);
  cr_assert_gt(models, 0u);
  cr_assert_gt(fits, models, "%zu fits of %zu models", fits, models);
  cr_assert_gt(refused_numbers, 0u);
  cr_log_info("%zu models: %zu fit, %zu refused with numbers (model x GPU), %zu refused for a feature", models, fits,
              refused_numbers, refused_feature);
}
