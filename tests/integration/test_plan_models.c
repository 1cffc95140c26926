/* test_plan_models.c: `servesim plan` on every Hugging Face config of ../shared/models and every bundled GPU
 * file (roofline costs, --profile none, to keep the 88 x 9 runs short). Each run either plans (exit 0) or
 * refuses with exit 2 and a reason a user can act on: the numbers that do not fit ("cannot start: ... GiB" or
 * "... tokens"), or the architecture key servesim does not model yet, named with the file. Never a crash or
 * another exit status. The set grows with the directory; what is asserted of each file does not depend on
 * which files are there. One named fixture pins the hybrid path: Qwen3.5-27B (Gated DeltaNet layers) plans on
 * an H200 with its linear-attention states in the memory plan. Skips without ../shared. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted *.json names of dir (without the .hf_quant_config.json companions); returns the count. */
static size_t json_names(const char *dir, char ***out) {
  DIR *d = opendir(dir);
  cr_assert(d, "%s", dir);
  size_t n = 0, cap = 16;
  char **v = malloc(cap * sizeof *v);
  for (struct dirent *e; (e = readdir(d));) {
    if (!ends_with(e->d_name, ".json") || ends_with(e->d_name, ".hf_quant_config.json")) continue;
    if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(v, n, sizeof *v, cmp_str);
  *out = v;
  return n;
}

static bool actionable_refusal(const char *err, const char *model_path) {
  if (strstr(err, "cannot start:") && (strstr(err, "GiB") || strstr(err, "tokens"))) return true;
  return strstr(err, model_path) && (strstr(err, "not modelled yet") || strstr(err, "not read yet"));
}

/* path <- models/name.json; true when that file exists. */
static bool shared_model(const char *models, const char *name, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s.json", models, name);
  FILE *fp = fopen(path, "r");
  if (fp) fclose(fp);
  return fp != NULL;
}

/* The parameter count `plan` prints, "(X B parameters)", in billions; asserts it is within tol of published. */
static void assert_params_b(const char *out, const char *name, double published_b, double tol) {
  const char *pp = strstr(out, " B parameters)");
  cr_assert(pp, "%s", out);
  while (pp > out && pp[-1] != '(') pp--;
  double b = strtod(pp, NULL);
  cr_assert(fabs(b - published_b) < tol * published_b, "%s: %.2f B, published %.1f B", name, b, published_b);
}

/* Runs `fmt` (a run command with one %s for the model's path) and asserts it exits 0 having served n requests. */
static void assert_serves(const char *fmt, const char *path, unsigned n, char *out, size_t cap) {
  char args[1600], want[64];
  static char err[1 << 14];
  snprintf(args, sizeof args, fmt, path);
  cr_assert_eq(tu_run_cli(args, out, cap, err, sizeof err), 0, "%s: %s", args, err);
  snprintf(want, sizeof want, "Successful requests:%21s%u\n", "", n);
  cr_assert(strstr(out, want), "%s", out);
}

Test(plan_models, every_shared_model_plans_or_refuses_with_reason, .timeout = 900) {
  const char *models = tu_shared("models");
  if (!models) cr_skip_test("../shared/models absent");
  char mdir[512];
  snprintf(mdir, sizeof mdir, "%s", models);
  char **m, **g;
  size_t nm = json_names(mdir, &m), ng = json_names(tu_src("configs/gpus"), &g);
  cr_assert(nm > 0 && ng > 0);
  static char out[1 << 16], err[1 << 14];
  size_t planned = 0, refused = 0;
  for (size_t i = 0; i < nm; i++)
    for (size_t k = 0; k < ng; k++) {
      char path[1024], gpu[128], args[1400];
      snprintf(path, sizeof path, "%s/%s", mdir, m[i]);
      snprintf(gpu, sizeof gpu, "%.*s", (int)(strlen(g[k]) - 5), g[k]);
      snprintf(args, sizeof args, "plan --model '%s' --gpu %s --profile none", path, gpu);
      int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
      cr_assert(rc == 0 || rc == 2, "%s: exit %d\n%s", args, rc, err);
      if (rc == 0) {
        planned++;
        cr_assert(strstr(out, "Memory per GPU"), "%s: no memory plan\n%s", args, out);
      } else {
        refused++;
        cr_assert(actionable_refusal(err, path), "%s: a refusal without numbers or a named key:\n%s", args, err);
      }
    }
  cr_assert(planned > 0);
  cr_log_info("%zu plans, %zu refusals over %zu models x %zu GPUs", planned, refused, nm, ng);
  for (size_t i = 0; i < nm; i++) free(m[i]);
  for (size_t k = 0; k < ng; k++) free(g[k]);
  free(m), free(g);
}

Test(plan_models, qwen35_hybrid_plans_with_states) {
  const char *f = tu_shared("models/Qwen--Qwen3.5-27B.json");
  if (!f) cr_skip_test("../shared/models/Qwen--Qwen3.5-27B.json absent");
  char args[1024];
  static char out[1 << 16], err[1 << 14];
  snprintf(args, sizeof args, "plan --model '%s' --gpu h200 --tp 2 --profile none", f);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "linear-attention states (1024 x"), "%s", out);
  cr_assert(strstr(err, "48 Gated DeltaNet layers"), "%s", err);
}

/* Nemotron-H-56B (Mamba-2, MLP and attention blocks): plans on 4 H100s with 64 sequences' states (per GPU 54
 * Mamba-2 layers x (64 heads x 64 x 256 x 2 B + 3 x 5120 x 2 B) = 109.6 MiB each) and a KV cache of its 10
 * attention layers only (10 x 2 x 2 KV heads x 128 x 2 B = 10,240 B a token), and `servesim run` serves it. */
Test(plan_models, nemotron_h_plans_and_runs) {
  const char *f = tu_shared("models/nvidia--Nemotron-H-56B-Base-8K.json");
  if (!f) cr_skip_test("../shared/models/nvidia--Nemotron-H-56B-Base-8K.json absent");
  char path[1024], args[1400];
  snprintf(path, sizeof path, "%s", f);
  static char out[1 << 16], err[1 << 14];
  snprintf(args, sizeof args, "plan --model '%s' --gpu h100-sxm --tp 4 --max-num-seqs 64 --profile none", path);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "56.32 B parameters"), "%s", out);
  cr_assert(strstr(out, "linear-attention states (64 x 109.6 MiB)"), "%s", out);
  cr_assert(strstr(out, "KV cache per token                              10240 bytes"), "%s", out);
  cr_assert(strstr(err, "54 Mamba-2 layers"), "%s", err);
  assert_serves("run --model '%s' --gpu h100-sxm --tp 4 --max-num-seqs 64 --profile none --num-prompts 40 "
                "--request-rate 4 --random-input-len 2048 --random-output-len 64",
                path, 40, out, sizeof out);
}

/* Every Nemotron-3 config (Mamba-2, attention and MoE blocks; Super and Ultra with a latent MoE; Ultra without
 * num_hidden_layers) plans on 8 B200s with 16 sequences of 16k tokens, with its mixture-of-experts line; the
 * parameter counts are within 1% of the published ones: Nano 31.6 B total (NVIDIA's model card, 3.2 B active,
 * 3.6 B with embeddings), Super 120 B (Nemotron 3 Super technical report: "120 billion (active 12 billion)"),
 * Ultra 550 B (its name, A55B). MTP layers are not counted (servesim does not model them). A Nano run serves. */
Test(plan_models, nemotron3_moe_plans_and_runs) {
  const char *models = tu_shared("models");
  if (!models) cr_skip_test("../shared/models absent");
  static const struct {
    const char *name;
    double published_b;
  } n3[] = {
      {"nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6},     {"nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", 31.6},
      {"nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120},    {"nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", 120},
      {"nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550},   {"nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8", 550},
      {"nvidia--NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4", 550},  {"nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", 31.6},
  };
  static char out[1 << 16], err[1 << 14];
  char path[1024], args[1400];
  size_t ran = 0;
  for (size_t i = 0; i < sizeof n3 / sizeof n3[0]; i++) {
    if (!shared_model(models, n3[i].name, path, sizeof path)) continue;
    ran++;
    snprintf(args, sizeof args,
             "plan --model '%s' --gpu b200 --tp 8 --max-num-seqs 16 --max-model-len 16384 --profile none", path);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
    cr_assert(strstr(out, "Memory per GPU") && strstr(out, "a mixture of experts: a token uses"), "%s", out);
    assert_params_b(out, n3[i].name, n3[i].published_b, 0.01);
  }
  if (!ran) cr_skip_test("no Nemotron-3 config in ../shared/models");
  snprintf(path, sizeof path, "%s/nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json", models);
  assert_serves("run --model '%s' --gpu h100-sxm --tp 2 --max-num-seqs 64 --profile none --num-prompts 40 "
                "--request-rate 4 --random-input-len 2048 --random-output-len 64",
                path, 40, out, sizeof out);
  cr_assert(strstr(out, "ungated relu2 experts (up, down: 2 matrices each)"), "%s", out);
}

/* Per-layer lists (MiMo-V2-Flash, MiniMax-M3): moe_layer_freq as one 0/1 entry per layer, MiMo's
 * hybrid_layer_pattern (1 = sliding window, 0 = full) and MiniMax's dense_intermediate_size for its dense layers.
 * Parameter counts within 1% of the published ones: MiMo-V2-Flash 309 B (SGLang's day-0 blog, 2025-12-15:
 * "309B total parameters and 15B activated"), MiniMax-M3 about 428 B (its model card; that figure holds the
 * vision encoder and MTP modules servesim does not count, so servesim's 426 B is below it). MiMo's KV cache per
 * token per GPU on TP8 holds only its 9 full-attention layers (the 39 sliding-window layers keep 128 tokens):
 * 9 layers x 2 (K, V) x 1 KV head per GPU (4 heads over 8 ranks, replicated) x 192 x 2 B = 6,912 B. MiMo serves. */
Test(plan_models, per_layer_lists_plan) {
  const char *models = tu_shared("models");
  if (!models) cr_skip_test("../shared/models absent");
  static const struct {
    const char *name, *moe_line;
    double published_b;
  } v[] = {
      {"XiaomiMiMo--MiMo-V2-Flash", "uses 8 of 256 routed experts in 47 of 48 layers", 309},
      {"MiniMaxAI--MiniMax-M3", "uses 4 of 128 routed experts in 57 of 60 layers", 428},
  };
  static char out[1 << 16], err[1 << 14];
  char path[1024], args[1400];
  size_t ran = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    if (!shared_model(models, v[i].name, path, sizeof path)) continue;
    ran++;
    snprintf(args, sizeof args, "plan --model '%s' --gpu b200 --tp 8 --profile none", path);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
    cr_assert(strstr(out, v[i].moe_line), "%s", out);
    assert_params_b(out, v[i].name, v[i].published_b, 0.01);
    if (i == 0) {
      cr_assert(strstr(out, "KV cache per token                               6912 bytes"), "%s", out);
      cr_assert(strstr(err, "v_head_dim 128"), "the narrower values are named: %s", err);
    } else {
      cr_assert(strstr(err, "sparse_attention_config"), "the sparse attention is named: %s", err);
    }
  }
  if (!ran) cr_skip_test("neither MiMo-V2-Flash nor MiniMax-M3 in ../shared/models");
  snprintf(path, sizeof path, "%s/XiaomiMiMo--MiMo-V2-Flash.json", models);
  assert_serves("run --model '%s' --gpu h200 --tp 8 --profile none --num-prompts 20 --request-rate 2 "
                "--random-input-len 2048 --random-output-len 64 --interval 0",
                path, 20, out, sizeof out);
}

/* Llama-3.3-Nemotron-Super-49B (DeciLM blocks, block_configs): 49 of its 80 layers have attention (8 query heads
 * per KV head: 8 KV heads) and 31 none; the MLP widths come from ffn_mult by DeciLM's rule (int(2 x mult x 8192 /
 * 3) rounded up to 256: 5.25 -> 28,672, 2.625 -> 14,336, ...). Parameters 49.87 B (the model card: "approximately
 * 49B", reduced from Llama-3.3-70B). KV cache per token per GPU on TP2: 49 layers x 2 (K, V) x 4 KV heads x 128 x
 * 2 B = 100,352 B. It serves. */
Test(plan_models, decilm_blocks_plan_and_run) {
  const char *f = tu_shared("models/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json");
  if (!f) cr_skip_test("../shared/models/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json absent");
  char path[1024], args[1400];
  snprintf(path, sizeof path, "%s", f);
  static char out[1 << 16], err[1 << 14];
  snprintf(args, sizeof args, "plan --model '%s' --gpu h100-sxm --tp 2 --profile none", path);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "(49.87 B parameters)"), "%s", out);
  cr_assert(strstr(out, "KV cache per token                             100352 bytes"), "%s", out);
  assert_serves("run --model '%s' --gpu h100-sxm --tp 2 --profile none --num-prompts 30 --request-rate 3 "
                "--random-input-len 1024 --random-output-len 64 --interval 0",
                path, 30, out, sizeof out);
}

/* Gemma 4: the MoE block (26B-A4B: 128 experts top-8 beside a dense MLP, a shared expert of intermediate_size)
 * and the full layers' own heads (global_head_dim 512; with attention_k_eq_v, num_global_key_value_heads and no
 * v_proj). 26B-A4B: 25.23 B parameters, 3.8 B a token (published: 25.2 B total, 3.8 B active); KV cache per token
 * per GPU on TP2 holds its 5 full layers only (the 25 sliding ones keep 1,024 tokens): 5 x 2 (K, V) x 1 KV head per
 * GPU (2 over 2 ranks) x 512 x 2 B = 10,240 B. 31B: 10 full layers x 2 x 2 heads x 512 x 2 B = 40,960 B. */
Test(plan_models, gemma4_plans_and_runs) {
  const char *models = tu_shared("models");
  if (!models) cr_skip_test("../shared/models absent");
  static const struct {
    const char *name, *kv;
  } v[] = {
      {"google--gemma-4-26B-A4B", "KV cache per token                              10240 bytes"},
      {"nvidia--Gemma-4-31B-IT-NVFP4", "KV cache per token                              40960 bytes"},
  };
  static char out[1 << 16], err[1 << 14];
  char path[1024], args[1400];
  size_t ran = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    if (!shared_model(models, v[i].name, path, sizeof path)) continue;
    ran++;
    snprintf(args, sizeof args, "plan --model '%s' --gpu b200 --tp 2 --max-num-seqs 64 --profile none", path);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s: %s", args, err);
    cr_assert(strstr(out, v[i].kv), "%s", out);
    cr_assert(strstr(err, "global_head_dim 512"), "the kernels' shapes are named: %s", err);
    if (i == 0) {
      cr_assert(strstr(out, "(25.23 B parameters)"), "%s", out);
      cr_assert(strstr(out, "uses 8 of 128 routed experts in 30 of 30 layers, so it reads 7.6 GB"), "%s", out);
    }
  }
  if (!ran) cr_skip_test("no Gemma 4 config in ../shared/models");
  snprintf(path, sizeof path, "%s/google--gemma-4-26B-A4B.json", models);
  assert_serves("run --model '%s' --gpu h100-sxm --tp 1 --max-num-seqs 64 --max-model-len 16384 --profile none "
                "--num-prompts 30 --request-rate 3 --random-input-len 1024 --random-output-len 64 --interval 0",
                path, 30, out, sizeof out);
}

/* Kimi-K3 (text_config.linear_attn_config: 69 Kimi Delta Attention layers read as Gated DeltaNet ones, 24 MLA
 * layers with an output gate; 896 experts top-16 spelled num_experts_per_token, 2 shared, a latent MoE at
 * routed_expert_hidden_size 3584). Parameters within 1% of the published 2.8 T (NVIDIA NeMo AutoModel's Kimi K3
 * page: "2.8T total / 104B activated"; by hand: 92 MoE layers x 896 experts x 3 x 3584 x 3072 = 2,720 B routed,
 * the rest attention, shared experts and embeddings). Its 1.42 TB of MXFP4 weights do not fit 8 B200s at
 * gpu_memory_utilization 0.92 (refused with the numbers); TP8 x PP2 plans, the plan describing stage 1 (layers
 * 48-93: 13 MLA layers, 33 KDA). KV per token: 13 x (kv_lora_rank 512 + rope 64) x 2 B = 14,976 B (MLA's latent
 * is whole on every rank). KDA state per sequence and layer with TP8: 12 heads x 128 x 128 x 2 B (bf16, the
 * model's dtype) = 393,216 B, plus the convolution (4 - 1) x 3 x 12 x 128 x 2 B = 27,648 B: 420,864 B x 33 =
 * 13.2 MiB. A run serves 20 requests. */
Test(plan_models, kimi_k3_plans_and_runs) {
  const char *f = tu_shared("models/moonshotai--Kimi-K3.json");
  if (!f) cr_skip_test("../shared/models/moonshotai--Kimi-K3.json absent");
  char path[1024], args[1400];
  snprintf(path, sizeof path, "%s", f);
  static char out[1 << 16], err[1 << 14];
  snprintf(args, sizeof args, "plan --model '%s' --gpu b200 --tp 8 --profile none", path);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2, "%s", out);
  cr_assert(strstr(err, "cannot start:") && strstr(err, "GiB per GPU exceed"), "%s", err);
  snprintf(args, sizeof args, "plan --model '%s' --gpu b200 --tp 8 --pp 2 --profile none", path);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  assert_params_b(out, "Kimi-K3", 2800, 0.01);
  cr_assert(strstr(err, "69 Kimi Delta Attention layers") && strstr(err, "attn_res_block_size"), "%s", err);
  cr_assert(strstr(out, "KV cache per token                              14976 bytes"), "%s", out);
  cr_assert(strstr(out, "linear-attention states (1024 x 13.2 MiB)"), "%s", out);
  cr_assert(strstr(out, "a token uses 16 of 896 routed experts in 92 of 93 layers"), "%s", out);
  assert_serves("run --model '%s' --gpu b200 --tp 8 --pp 2 --max-num-seqs 64 --max-model-len 32768 --profile none "
                "--num-prompts 20 --request-rate 2 --random-input-len 2048 --random-output-len 64",
                path, 20, out, sizeof out);
}

/* DeepSeek-V4 (compress_ratios: CSA layers of ratio 4 with an indexer, HCA of ratio 128, every layer a 128-token
 * window; one shared KV head of 512). Parameters against the published figures (the DeepSeek-V4 technical report,
 * arXiv 2606.19348: V4-Flash 284 B, V4-Pro 1.6 T, a figure of two digits, so within 2.5%; the MTP layer not
 * counted). KV bytes per token by hand (BF16 cache, TP8: the shared KV vector is whole on every rank):
 * Flash 21 CSA x (512 + 128 index key) x 2 B / 4 + 20 HCA x 512 x 2 B / 128 = 6,720 + 160 = 6,880 B (its 2
 * ratio-0 layers hold only their window); Pro 30 CSA x 1,280 / 4 + 31 HCA x 1,024 / 128 = 9,600 + 248 = 9,848 B,
 * so a 1,048,576-token sequence holds 9.62 GiB, the report's figure for V4-Pro at 1M tokens in BF16. The
 * deepseek-ai and nvidia files hold FP4 experts (taken as FP4 weights) and fit 8 B200s; sgl-project's Pro in FP8
 * does not (refused with the numbers). A Flash run serves 20 requests. */
Test(plan_models, deepseek_v4_plans_and_runs) {
  const char *models = tu_shared("models");
  if (!models) cr_skip_test("../shared/models absent");
  static const struct {
    const char *name;
    double published_b, tol;
    const char *kv;
    bool fits;
  } v4[] = {
      {"deepseek-ai--DeepSeek-V4-Flash", 284, 0.01, "6880 bytes", true},
      {"nvidia--DeepSeek-V4-Flash-NVFP4", 284, 0.01, "6880 bytes", true},
      {"sgl-project--DeepSeek-V4-Flash-FP8", 284, 0.01, "6880 bytes", true},
      {"deepseek-ai--DeepSeek-V4-Pro", 1600, 0.025, "9848 bytes", true},
      {"nvidia--DeepSeek-V4-Pro-NVFP4", 1600, 0.025, "9848 bytes", true},
      {"sgl-project--DeepSeek-V4-Pro-FP8", 1600, 0.025, "9848 bytes", false},
  };
  static char out[1 << 16], err[1 << 14];
  char path[1024], args[1400];
  size_t ran = 0;
  for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++) {
    if (!shared_model(models, v4[i].name, path, sizeof path)) continue;
    ran++;
    snprintf(args, sizeof args, "plan --model '%s' --gpu b200 --tp 8 --profile none", path);
    int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, v4[i].fits ? 0 : 2, "%s: %s", args, err);
    if (!v4[i].fits) cr_assert(strstr(err, "cannot start:") && strstr(err, "GiB per GPU exceed"), "%s", err);
    cr_assert(strstr(err, "compress_ratios: DeepSeek-V4's compressed attention"), "%s", err);
    assert_params_b(out, v4[i].name, v4[i].published_b, v4[i].tol);
    char kv[96];
    snprintf(kv, sizeof kv, "KV cache per token                               %s", v4[i].kv);
    cr_assert(strstr(out, kv), "%s: %s", v4[i].name, out);
    /* every layer's window of 128 tokens for 1024 sequences, in whole blocks plus one: Flash 43 x 1024 x 144 x
       1,024 B = 6.04 GiB */
    if (i == 0) cr_assert(strstr(out, "sliding windows (max_num_seqs sequences)          6.0 GiB"), "%s", out);
  }
  if (!ran) cr_skip_test("no DeepSeek-V4 config in ../shared/models");
  cr_assert(fabs(9848.0 * 1048576 / (1024.0 * 1024 * 1024) - 9.62) < 0.01); /* the report's 9.62 GiB */
  snprintf(path, sizeof path, "%s/deepseek-ai--DeepSeek-V4-Flash.json", models);
  assert_serves("run --model '%s' --gpu b200 --tp 8 --max-num-seqs 64 --max-model-len 32768 --profile none "
                "--num-prompts 20 --request-rate 2 --random-input-len 2048 --random-output-len 64",
                path, 20, out, sizeof out);
}
