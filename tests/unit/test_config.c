/* test_config.c: bundled configs load by name, parameter counts match the
 * published model sizes, strict parsing names the file and field, name
 * resolution (path, name, $SERVESIM_DATA_DIR), and cfg_resolve's defaults and
 * checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/cfg.h"
#include "config/cfg_arch.h"
#include "config/cfg_hf.h"
#include "core/embed.h"
#include "testutil.h"

#define MIB 1048576.0

static void assert_msg_has(const sim_err *e, const char *needle) {
  cr_assert(strstr(e->msg, needle) != NULL, "expected '%s' in error message: %s", needle, e->msg);
}

/* A complete, valid GPU file; tests derive broken variants from it. */
static const char *gpu_json =
    "{\n"
    "  \"name\": \"testgpu\",\n"
    "  \"full_name\": \"Test GPU\",\n"
    "  \"memory_mib\": 1024,\n"
    "  \"hbm_bandwidth_gb_s\": 1000,\n"
    "  \"dense_tflops\": {\"bf16\": 100, \"fp16\": 100, \"fp8\": 200},\n"
    "  \"interconnect\": \"pcie\",\n"
    "  \"interconnect_bandwidth_gb_s\": 32,\n"
    "  \"allreduce_base_latency_us\": 5,\n"
    "  \"sm_count\": 10,\n"
    "  \"l2_mib\": 8,\n"
    "  \"source\": \"unit test\"\n"
    "}\n";

/* Returns gpu_json with the first occurrence of `from` replaced by `to`. */
static char *gpu_variant(const char *from, const char *to) {
  static char buf[4096];
  const char *p = strstr(gpu_json, from);
  cr_assert(p, "test bug: '%s' not in gpu_json", from);
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - gpu_json), gpu_json, to, p + strlen(from));
  return buf;
}

static int gpu_parse_err(const char *json, sim_err *e) {
  gpu_cfg g;
  return cfg_gpu_parse(&g, json, "t.json", e);
}

/* ---- bundled configs ------------------------------------------------------- */

Test(config, every_bundled_config_loads_by_name) {
  static const struct {
    const char *prefix;
    cfg_kind kind;
  } kinds[] = {{"configs/models/", CFG_MODEL}, {"configs/gpus/", CFG_GPU}, {"configs/engines/", CFG_ENGINE}};
  int counts[3] = {0, 0, 0};
  for (const sim_embedded_file *f = sim_embedded_files; f->path; f++) {
    for (int k = 0; k < 3; k++) {
      size_t pl = strlen(kinds[k].prefix);
      if (strncmp(f->path, kinds[k].prefix, pl)) continue;
      char name[128];
      snprintf(name, sizeof name, "%.*s", (int)(strlen(f->path) - pl - 5), f->path + pl);
      sim_err e = {0};
      int rc;
      if (kinds[k].kind == CFG_MODEL) {
        model_cfg m;
        rc = cfg_model_load(&m, name, &e);
        if (!rc) {
          cr_assert_str_eq(m.name, name);
          cr_assert(m.params_total > 1e9);
          char want[256];
          snprintf(want, sizeof want, "<embedded> %s", f->path);
          cr_assert_str_eq(m.path, want);
        }
      } else if (kinds[k].kind == CFG_GPU) {
        gpu_cfg g;
        rc = cfg_gpu_load(&g, name, &e);
        if (!rc) {
          cr_assert_str_eq(g.name, name, "gpu file %s names itself %s", f->path, g.name);
          cr_assert(g.mem_bytes > 40e9 && g.hbm_Bps > 0 && g.link_Bps > 0 && g.sm_count > 0 && g.l2_bytes > 0);
          cr_assert(g.flops[DT_BF16] > 0 && g.flops[DT_FP16] > 0 && g.flops[DT_INT4] == 0);
          cr_assert(g.price_per_hour > 0 && strlen(g.source) > 20);
        }
      } else {
        engine_cfg en;
        rc = cfg_engine_load(&en, name, &e);
        if (!rc) cr_assert_str_eq(en.name, name);
      }
      cr_assert_eq(rc, SIM_OK, "%s: %s", f->path, e.msg);
      counts[k]++;
    }
  }
  cr_assert_geq(counts[0], 4);
  cr_assert_geq(counts[1], 9);
  cr_assert_geq(counts[2], 2);
}

/* Blackwell Ultra and the NVL72 racks (datasheet figures as AIConfigurator's system files give them): an
 * NVL72 rack is one NVLink domain of 72 GPUs, so a TP16 replica stays on NVLink there and spans two nodes of
 * an HGX system; AIConfigurator's system labels resolve to them. */
Test(config, blackwell_ultra_and_nvl72_gpus) {
  static const struct {
    const char *name, *label;
    double mem_mib, tb_s, bf16, fp8, fp4;
    uint32_t per_node;
  } t[] = {{"b300", "NVIDIA B300 SXM6 AC", 275040, 7.75, 2250, 4500, 14000, 8},
           {"gb200", "NVIDIA GB200", 189471, 8.0, 2500, 5000, 10000, 72},
           {"gb300", "NVIDIA GB300", 284208, 8.0, 2500, 5000, 15000, 72}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    gpu_cfg g;
    sim_err e = {0};
    cr_assert_eq(cfg_gpu_load(&g, t[i].name, &e), SIM_OK, "%s", e.msg);
    cr_assert_float_eq(g.mem_bytes, t[i].mem_mib * 1048576.0, 1.0, "%s", t[i].name);
    cr_assert_float_eq(g.hbm_Bps, t[i].tb_s * 1e12, 1e3, "%s", t[i].name);
    cr_assert_float_eq(g.flops[DT_BF16], t[i].bf16 * 1e12, 1e3, "%s", t[i].name);
    cr_assert_float_eq(g.flops[DT_FP8], t[i].fp8 * 1e12, 1e3, "%s", t[i].name);
    cr_assert_float_eq(g.flops[DT_FP4], t[i].fp4 * 1e12, 1e3, "%s", t[i].name);
    cr_assert_eq(g.gpus_per_node, t[i].per_node, "%s", t[i].name);
    cr_assert(cfg_gpu_has_alias(&g, t[i].label), "%s answers to %s", t[i].name, t[i].label);
  }
}

Test(config, list_is_sorted_and_complete) {
  char buf[512];
  cfg_list(CFG_GPU, buf, sizeof buf);
  cr_assert_str_eq(buf, "a100-pcie-80gb, a100-sxm-80gb, b200, b300, gb200, gb300, h100-sxm, h20, h200, l40s");
  cfg_list(CFG_ENGINE, buf, sizeof buf);
  cr_assert_str_eq(buf, "sglang, trtllm, vllm");
  cfg_list(CFG_MODEL, buf, sizeof buf);
  cr_assert_str_eq(buf, "codellama-34b, llama-2-70b, llama-2-7b, llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, qwen2.5-72b");
  char small[12];
  cfg_list(CFG_GPU, small, sizeof small);
  cr_assert(strlen(small) < sizeof small);
  cr_assert(strstr(small, "...") != NULL, "truncated list should end with ...: %s", small);
}

/* ---- models ------------------------------------------------------------------ */

Test(config, llama31_70b_architecture_and_params) {
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-70b", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.arch, "llama");
  cr_assert_eq(m.hidden, 8192);
  cr_assert_eq(m.intermediate, 28672);
  cr_assert_eq(m.layers, 80);
  cr_assert_eq(m.q_heads, 64);
  cr_assert_eq(m.kv_heads, 8);
  cr_assert_eq(m.head_dim, 128); /* derived: no head_dim key in the file */
  cr_assert_eq(m.vocab, 128256);
  cr_assert_eq(m.max_pos, 131072);
  cr_assert_not(m.tied_embeddings);
  cr_assert_not(m.qkv_bias);
  cr_assert_eq(m.native_dtype, DT_BF16);
  cr_assert_float_eq(m.params_per_layer_linear, 855638016.0, 0.5);
  cr_assert_float_eq(m.params_embedding, 1050673152.0, 0.5);
  cr_assert_float_eq(m.params_lm_head, 1050673152.0, 0.5);
  cr_assert(fabs(m.params_total / 70.55e9 - 1) < 0.005, "params_total %.0f", m.params_total);
  cr_assert_float_eq(m.params_total, 70553706496.0, 0.5); /* HF's safetensors total for Llama-3.1-70B */
}

Test(config, other_model_params) {
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-8b", &e), SIM_OK, "%s", e.msg);
  cr_assert(fabs(m.params_total / 8.03e9 - 1) < 0.005, "llama-3.1-8b params_total %.0f", m.params_total);
  cr_assert_float_eq(m.params_total, 8030261248.0, 0.5);

  cr_assert_eq(cfg_model_load(&m, "llama-2-70b", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.vocab, 32000);
  cr_assert_eq(m.max_pos, 4096);
  cr_assert_eq(m.native_dtype, DT_FP16);
  cr_assert(fabs(m.params_total / 68.98e9 - 1) < 0.005, "llama-2-70b params_total %.0f", m.params_total);

  /* the open-loop validation models (shared/validation/openloop): MHA and GQA, fp16 and bf16 */
  cr_assert_eq(cfg_model_load(&m, "llama-2-7b", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.kv_heads, 32, "Llama-2-7B has no GQA");
  cr_assert_eq(m.native_dtype, DT_FP16);
  cr_assert_float_eq(m.params_total, 6738415616.0, 0.5);
  cr_assert_eq(cfg_model_load(&m, "codellama-34b", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.kv_heads, 8);
  cr_assert_eq(m.max_pos, 16384);
  cr_assert_eq(m.native_dtype, DT_BF16);
  cr_assert_float_eq(m.params_total, 33743970304.0, 0.5);

  cr_assert_eq(cfg_model_load(&m, "qwen2.5-72b", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.arch, "qwen2");
  cr_assert(m.qkv_bias, "qwen2 implies q/k/v biases");
  cr_assert_eq(m.intermediate, 29568);
  cr_assert_eq(m.vocab, 152064);
  cr_assert_eq(m.max_pos, 32768);
  cr_assert(fabs(m.params_total / 72.71e9 - 1) < 0.005, "qwen2.5-72b params_total %.0f", m.params_total);
}

Test(config, hf_defaults_tied_embeddings_and_ignored_keys) {
  const char *j = "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"intermediate_size\": 8192,"
                  " \"num_hidden_layers\": 16, \"num_attention_heads\": 32, \"vocab_size\": 1000,"
                  " \"max_position_embeddings\": 2048, \"tie_word_embeddings\": true,"
                  " \"rope_scaling\": {\"type\": \"x\"}, \"some_future_key\": [1, 2]}";
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, j, "/x/tiny-model/config.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.name, "tiny-model");
  cr_assert_eq(m.kv_heads, 32, "kv heads default to q heads");
  cr_assert_eq(m.head_dim, 64);
  cr_assert_eq(m.params_lm_head, 0.0);
  cr_assert_eq(m.native_dtype, DT_BF16, "no torch_dtype: bf16");
  double lin = 2048.0 * (32 + 64) * 64 + 32 * 64 * 2048.0 + 3 * 2048.0 * 8192;
  cr_assert_float_eq(m.params_total, 16 * (lin + 2 * 2048) + 1000 * 2048.0 + 2048, 0.5);
}

Test(config, hf_text_config_and_dtype_key) {
  const char *j = "{\"model_type\": \"wrapper\", \"text_config\": {\"model_type\": \"llama\", \"hidden_size\": 1024,"
                  " \"intermediate_size\": 4096, \"num_hidden_layers\": 2, \"num_attention_heads\": 8,"
                  " \"num_key_value_heads\": 2, \"head_dim\": 256, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 512, \"dtype\": \"float16\"}}";
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, j, "w.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.name, "w");
  cr_assert_eq(m.head_dim, 256, "explicit head_dim wins over hidden/heads");
  cr_assert_eq(m.kv_heads, 2);
  cr_assert_eq(m.native_dtype, DT_FP16);
}

Test(config, hf_errors_name_the_field) {
  model_cfg m;
  sim_err e = {0};
  const char *missing = "{\"model_type\": \"llama\", \"intermediate_size\": 1, \"num_hidden_layers\": 1,"
                        " \"num_attention_heads\": 1, \"vocab_size\": 1, \"max_position_embeddings\": 1}";
  cr_assert_eq(cfg_model_parse(&m, missing, "m.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "m.json");
  assert_msg_has(&e, "hidden_size");
  assert_msg_has(&e, "missing");

  const char *wrong = "{\"model_type\": \"llama\",\n \"hidden_size\": \"8192\", \"intermediate_size\": 1,"
                      " \"num_hidden_layers\": 1, \"num_attention_heads\": 1, \"vocab_size\": 1,"
                      " \"max_position_embeddings\": 1}";
  cr_assert_eq(cfg_model_parse(&m, wrong, "m.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "m.json:2: hidden_size: expected an integer, got a string");

  const char *moe = "{\"model_type\": \"mixtral\", \"num_local_experts\": 8, \"hidden_size\": 4096, "
                    "\"intermediate_size\": 14336, \"num_hidden_layers\": 32, \"num_attention_heads\": 32, "
                    "\"vocab_size\": 32000, \"max_position_embeddings\": 32768}";
  cr_assert_eq(cfg_model_parse(&m, moe, "m.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "num_experts_per_tok: missing required key");

  cr_assert_eq(cfg_model_parse(&m, "{\"model_type\": ", "bad.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "bad.json:1:");
  assert_msg_has(&e, "invalid JSON");
}

/* Mixture-of-experts configs as Hugging Face writes them: Mixtral (every layer
 * MoE, intermediate_size is the expert's), Qwen3-MoE (moe_intermediate_size,
 * decoder_sparse_step, mlp_only_layers), DeepSeek-style first dense layers and
 * shared experts, Llama-4 (interleaved MoE layers with a shared expert, dense
 * layers of intermediate_size_mlp); the parameter count of Mixtral-8x7B is
 * its published 46.7 B. Attention servesim does not model is refused by name. */
Test(config, mixture_of_experts_models) {
  model_cfg m;
  sim_err e = {0, ""};
  const char *mixtral = "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                        "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                        "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                        "\"max_position_embeddings\": 32768, \"sliding_window\": null}";
  cr_assert_eq(cfg_model_parse(&m, mixtral, "mixtral.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.experts, 8);
  cr_assert_eq(m.experts_per_tok, 2);
  cr_assert_eq(m.expert_inter, 14336);
  cr_assert_eq(m.moe_layers, 32);
  cr_assert_eq(m.shared_inter, 0);
  /* 32 x (attention 4096 x 6144 + 4096 x 4096 + 8 x 3 x 4096 x 14336 + router 4096 x 8 + norms 2 x 4096)
   * + embedding and LM head 2 x 32000 x 4096 + final norm 4096 = 46,702,792,704 */
  cr_assert_float_eq(m.params_total, 46702792704.0, 0.5);
  const char *qwen = "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 4096, \"intermediate_size\": 12288, "
                     "\"moe_intermediate_size\": 1536, \"num_hidden_layers\": 8, \"num_attention_heads\": 64, "
                     "\"num_key_value_heads\": 4, \"head_dim\": 128, \"num_experts\": 128, \"num_experts_per_tok\": 8, "
                     "\"decoder_sparse_step\": 2, \"mlp_only_layers\": [3], \"vocab_size\": 151936, "
                     "\"max_position_embeddings\": 40960, \"quantization_config\": {\"quant_method\": \"fp8\", "
                     "\"weight_block_size\": [128, 128]}}";
  cr_assert_eq(cfg_model_parse(&m, qwen, "q.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.expert_inter, 1536);
  cr_assert_eq(m.intermediate, 12288, "the dense layers' MLP");
  /* (i + 1) % 2 == 0: layers 1, 3, 5, 7; 3 is listed dense */
  cr_assert(cfg_model_is_moe_layer(&m, 1) && !cfg_model_is_moe_layer(&m, 2) && !cfg_model_is_moe_layer(&m, 3));
  cr_assert_eq(m.moe_layers, 3);
  cr_assert(m.fp8_block);
  /* a layer index too large for any model (found by fuzz_config: it overflowed the cast), or not whole */
  const char *bad_idx[] = {"[2e113]", "[1.5]", "[-1]", "[\"3\"]"};
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad_idx); i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 1024, \"intermediate_size\": 64, "
             "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
             "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"mlp_only_layers\": %s}", bad_idx[i]);
    cr_assert_eq(cfg_model_parse(&m, buf, "bad.json", &e), SIM_EINPUT, "%s", bad_idx[i]);
    assert_msg_has(&e, "mlp_only_layers");
  }
  const char *ds = "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 2048, \"intermediate_size\": 10944, "
                   "\"moe_intermediate_size\": 1408, \"num_hidden_layers\": 27, \"num_attention_heads\": 16, "
                   "\"n_routed_experts\": 64, \"num_experts_per_tok\": 6, \"n_shared_experts\": 2, "
                   "\"first_k_dense_replace\": 1, \"moe_layer_freq\": 1, \"vocab_size\": 102400, "
                   "\"max_position_embeddings\": 163840}";
  cr_assert_eq(cfg_model_parse(&m, ds, "ds.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.moe_layers, 26, "the first layer is dense");
  cr_assert_eq(m.shared_inter, 2 * 1408);
  const char *l4 = "{\"model_type\": \"llama4_text\", \"hidden_size\": 5120, \"intermediate_size\": 8192, "
                   "\"intermediate_size_mlp\": 16384, \"num_hidden_layers\": 48, \"num_attention_heads\": 40, "
                   "\"num_key_value_heads\": 8, \"head_dim\": 128, \"num_local_experts\": 128, "
                   "\"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": 2, \"vocab_size\": 202048, "
                   "\"max_position_embeddings\": 1048576}";
  cr_assert_eq(cfg_model_parse(&m, l4, "l4.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.moe_layers, 24);
  cr_assert_eq(m.intermediate, 16384);
  cr_assert_eq(m.expert_inter, 8192);
  cr_assert_eq(m.shared_inter, 8192, "Llama-4: one shared expert per MoE block");
  const char *mla = "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"intermediate_size\": 18432, "
                    "\"num_hidden_layers\": 61, \"num_attention_heads\": 128, \"kv_lora_rank\": 512, "
                    "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, \"vocab_size\": 129280, "
                    "\"max_position_embeddings\": 163840}";
  cr_assert_eq(cfg_model_parse(&m, mla, "v3.json", &e), SIM_EINPUT, "MLA needs its head sizes");
  assert_msg_has(&e, "qk_nope_head_dim: missing required key");
  /* DeepSeek-V3/R1 as published: 671 B parameters; MLA: one 512 + 64 latent per token and layer */
  const char *v3 = "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"intermediate_size\": 18432, "
                   "\"moe_intermediate_size\": 2048, \"num_hidden_layers\": 61, \"num_attention_heads\": 128, "
                   "\"num_key_value_heads\": 128, \"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "
                   "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, "
                   "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, \"n_shared_experts\": 1, "
                   "\"first_k_dense_replace\": 3, \"moe_layer_freq\": 1, \"vocab_size\": 129280, "
                   "\"max_position_embeddings\": 163840, \"tie_word_embeddings\": false}";
  cr_assert_eq(cfg_model_parse(&m, v3, "v3.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(m.mla);
  cr_assert_eq(m.head_dim, 192);
  cr_assert_eq(m.moe_layers, 58);
  cr_assert(m.params_total > 670.5e9 && m.params_total < 671.5e9, "%.4g parameters", m.params_total);
  const char *swa = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 2880, \"intermediate_size\": 2880, "
                    "\"num_hidden_layers\": 2, \"num_attention_heads\": 64, \"num_local_experts\": 128, "
                    "\"num_experts_per_tok\": 4, \"layer_types\": [\"sliding_attention\", \"full_attention\"], "
                    "\"vocab_size\": 201088, \"max_position_embeddings\": 131072}";
  cr_assert_eq(cfg_model_parse(&m, swa, "oss.json", &e), SIM_EINPUT, "a window layer needs its window");
  assert_msg_has(&e, "sliding_window: missing required key");
  /* gpt-oss: every other layer sliding (window 128), MXFP4 experts with the attention left unquantized: the
     checkpoint's quantization is the default weight dtype (4-bit, weight-only) */
  const char *oss = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 2880, \"intermediate_size\": 2880, "
                    "\"num_hidden_layers\": 4, \"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 64, "
                    "\"num_local_experts\": 128, \"num_experts_per_tok\": 4, \"sliding_window\": 128, "
                    "\"layer_types\": [\"sliding_attention\", \"full_attention\", \"sliding_attention\", "
                    "\"full_attention\"], \"vocab_size\": 201088, \"max_position_embeddings\": 131072, "
                    "\"quantization_config\": {\"quant_method\": \"mxfp4\", \"modules_to_not_convert\": "
                    "[\"model.layers.*.self_attn\", \"lm_head\"]}}";
  cr_assert_eq(cfg_model_parse(&m, oss, "oss.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.sliding_layers, 2);
  cr_assert_eq(m.sliding_window, 128);
  cr_assert_eq(cfg_model_sliding_layers_in(&m, 0, 2), 1);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_INT4 && m.mxfp4 && m.attn_unquantized);
  /* NVFP4 checkpoints as vLLM reads them: ModelOpt (quant_algo NVFP4) and llm-compressor's nvfp4 packing */
  const char *nv[] = {"{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\"}",
                      "{\"quant_method\": \"modelopt_fp4\"}",
                      "{\"quant_method\": \"compressed-tensors\", \"format\": \"nvfp4-pack-quantized\"}"};
  for (int i = 0; i < 3; i++) {
    char js[1024];
    snprintf(js, sizeof js, "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
             "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100, "
             "\"max_position_embeddings\": 128, \"quantization_config\": %s}", nv[i]);
    cr_assert_eq(cfg_model_parse(&m, js, "nv.json", &e), SIM_OK, "%s", e.msg);
    cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP4, "%s", nv[i]);
  }
  /* llm-compressor (compressed-tensors) checkpoints by their first config group's weights, as vLLM picks the
     scheme: RedHatAI's FP8-dynamic (float 8 bits), Kimi-K2.5's INT4 experts (int 4 bits, pack-quantized), W8A8
     INT8, MXFP4; ModelOpt's export without quant_method (quant_algo FP8); a scheme servesim has no dtype for
     keeps the torch_dtype */
  static const struct {
    const char *qc;
    bool quant;
    sim_dtype w;
  } ct[] = {{"{\"quant_method\": \"compressed-tensors\", \"format\": \"float-quantized\", \"config_groups\": "
             "{\"group_0\": {\"targets\": [\"Linear\"], \"weights\": {\"num_bits\": 8, \"type\": \"float\", "
             "\"strategy\": \"channel\"}, \"input_activations\": {\"num_bits\": 8, \"type\": \"float\", "
             "\"dynamic\": true}}}}",
             true, DT_FP8},
            {"{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", \"config_groups\": "
             "{\"group_0\": {\"weights\": {\"num_bits\": 4, \"type\": \"int\", \"group_size\": 32}}}}",
             true, DT_INT4},
            {"{\"quant_method\": \"compressed-tensors\", \"format\": \"int-quantized\", \"config_groups\": "
             "{\"group_0\": {\"weights\": {\"num_bits\": 8, \"type\": \"int\"}}}}",
             true, DT_INT8},
            {"{\"quant_method\": \"compressed-tensors\", \"format\": \"mxfp4-pack-quantized\"}", true, DT_INT4},
            {"{\"quant_algo\": \"FP8\", \"config_groups\": {}}", true, DT_FP8},
            {"{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": {\"weights\": "
             "{\"num_bits\": 2, \"type\": \"int\"}}}}",
             false, DT_BF16}};
  for (size_t i = 0; i < sizeof ct / sizeof ct[0]; i++) {
    char js[2048];
    snprintf(js, sizeof js, "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
             "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100, "
             "\"max_position_embeddings\": 128, \"torch_dtype\": \"bfloat16\", \"quantization_config\": %s}", ct[i].qc);
    cr_assert_eq(cfg_model_parse(&m, js, "ct.json", &e), SIM_OK, "%s", e.msg);
    cr_assert_eq(m.ckpt_quant, ct[i].quant, "%s", ct[i].qc);
    if (ct[i].quant) cr_assert_eq(m.ckpt_wdtype, ct[i].w, "%s: %s", ct[i].qc, dtype_name(m.ckpt_wdtype));
    cr_assert_eq(strstr(m.unmodelled, "quantization_config (quant_method") != NULL, !ct[i].quant,
                 "a format not read is warned about, never silently BF16: %s -> '%s'", ct[i].qc, m.unmodelled);
    cr_assert_eq(m.native_dtype, DT_BF16);
  }
  const char *topk = "{\"model_type\": \"mixtral\", \"hidden_size\": 64, \"intermediate_size\": 64, "
                     "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_local_experts\": 4, "
                     "\"num_experts_per_tok\": 8, \"vocab_size\": 100, \"max_position_embeddings\": 128}";
  cr_assert_eq(cfg_model_parse(&m, topk, "k.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "num_experts_per_tok: 8 exceeds num_local_experts 4");
}

Test(config, unknown_model_name_lists_known_names) {
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_load(&m, "llama-9-1t", &e), SIM_EINPUT);
  assert_msg_has(&e, "unknown model 'llama-9-1t'");
  assert_msg_has(&e, "llama-3.1-70b");
  assert_msg_has(&e, "qwen2.5-72b");
  gpu_cfg g;
  cr_assert_eq(cfg_gpu_load(&g, "h300", &e), SIM_EINPUT);
  assert_msg_has(&e, "h100-sxm");
  assert_msg_has(&e, "l40s");
}

/* ---- GPUs ------------------------------------------------------------------- */

Test(config, gpu_figures_converted_to_si_units) {
  gpu_cfg g;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h100-sxm", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(g.mem_bytes, 81559 * MIB, 0.5);
  cr_assert_float_eq(g.hbm_Bps, 3.35e12, 1);
  cr_assert_float_eq(g.flops[DT_BF16], 989e12, 1);
  cr_assert_float_eq(g.flops[DT_FP8], 1979e12, 1);
  cr_assert_eq(g.link, LINK_NVLINK);
  cr_assert_float_eq(g.link_Bps, 450e9, 1);
  cr_assert_eq(g.sm_count, 132);
  cr_assert_float_eq(g.l2_bytes, 50 * MIB, 0.5);
  cr_assert_eq(cfg_gpu_load(&g, "h200", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(g.mem_bytes, 143771 * MIB, 0.5);
  cr_assert_eq(cfg_gpu_load(&g, "a100-sxm-80gb", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(g.flops[DT_FP8], 0.0, "A100 has no FP8 tensor cores");
  cr_assert_float_eq(g.flops[DT_INT8], 624e12, 1);
  cr_assert_eq(cfg_gpu_load(&g, "l40s", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(g.link, LINK_PCIE);

  cr_assert_eq(cfg_gpu_parse(&g, gpu_json, "t.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(g.flops[DT_INT8], 0.0, "absent int8 = unsupported");
  cr_assert_eq(g.price_per_hour, 0.0, "absent price = unknown");
  cr_assert_float_eq(g.link_latency_ns, 5000.0, 1e-9);
  /* node facts: absent = an 8-GPU node with a 400 Gb/s NIC per GPU and 5 us hops */
  cr_assert_eq(g.gpus_per_node, 8);
  cr_assert_float_eq(g.net_Bps, 50e9, 1);
  cr_assert_float_eq(g.net_latency_ns, 5e3, 1e-9);
  cr_assert_eq(cfg_gpu_parse(&g,
                             gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"gpus_per_node\": 4, \"network_bandwidth_gb_s\": "
                                                         "25, \"network_latency_us\": 8"),
                             "t.json", &e),
               SIM_OK, "%s", e.msg);
  cr_assert_eq(g.gpus_per_node, 4);
  cr_assert_float_eq(g.net_Bps, 25e9, 1);
  cr_assert_float_eq(g.net_latency_ns, 8e3, 1e-9);
  cr_assert_eq(cfg_gpu_load(&g, "a100-sxm-80gb", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(g.net_Bps, 25e9, 1, "DGX A100: one 200 Gb/s HDR NIC per GPU");
}

Test(config, gpu_strict_errors) {
  sim_err e = {0};
  cr_assert_eq(gpu_parse_err(gpu_variant("\"sm_count\"", "\"sm_cnt\""), &e), SIM_EINPUT);
  assert_msg_has(&e, "t.json:10: sm_cnt: unknown key");
  assert_msg_has(&e, "sm_count"); /* the list of known keys */

  cr_assert_eq(gpu_parse_err(gpu_variant("\"memory_mib\": 1024", "\"memory_mib\": \"1024\""), &e), SIM_EINPUT);
  assert_msg_has(&e, "t.json:4: memory_mib: expected a number, got a string");

  cr_assert_eq(gpu_parse_err(gpu_variant("  \"sm_count\": 10,\n", ""), &e), SIM_EINPUT);
  assert_msg_has(&e, "t.json: sm_count: missing required key");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"hbm_bandwidth_gb_s\": 1000", "\"hbm_bandwidth_gb_s\": -1"), &e),
               SIM_EINPUT);
  assert_msg_has(&e, "hbm_bandwidth_gb_s: must be in (0, 100000], got -1");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 0"), &e), SIM_EINPUT);
  assert_msg_has(&e, "l2_mib: must be in (0, 100000], got 0");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"gpus_per_node\": 0"), &e), SIM_EINPUT);
  assert_msg_has(&e, "gpus_per_node: must be in (0, 100000], got 0");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"network_bandwidth_gb_s\": -5"), &e),
               SIM_EINPUT);
  assert_msg_has(&e, "network_bandwidth_gb_s: must be in (0, 100000], got -5");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"fp8\": 200", "\"fp6\": 200"), &e), SIM_EINPUT);
  assert_msg_has(&e, "dense_tflops.fp6: unknown key");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"bf16\": 100, ", ""), &e), SIM_EINPUT);
  assert_msg_has(&e, "dense_tflops.bf16: missing required key");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"pcie\"", "\"infiniband\""), &e), SIM_EINPUT);
  assert_msg_has(&e, "interconnect: expected \"nvlink\" or \"pcie\"");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"sm_count\": 10", "\"sm_count\": 10.5"), &e), SIM_EINPUT);
  assert_msg_has(&e, "sm_count: expected an integer");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"l2_mib\": 9"), &e), SIM_EINPUT);
  assert_msg_has(&e, "l2_mib: given twice");

  cr_assert_eq(gpu_parse_err(gpu_variant("\"Test GPU\"", "\"\""), &e), SIM_EINPUT);
  assert_msg_has(&e, "full_name: must not be empty");

  cr_assert_eq(gpu_parse_err("[1, 2]", &e), SIM_EINPUT);
  assert_msg_has(&e, "expected a JSON object");
  cr_assert_eq(gpu_parse_err("{\"name\": \"x\"} trailing", &e), SIM_EINPUT);
  assert_msg_has(&e, "invalid JSON");
}

Test(config, gpu_aliases) {
  sim_err e = {0};
  gpu_cfg g;
  cr_assert_eq(cfg_gpu_load(&g, "h100-sxm", &e), SIM_OK, "%s", e.msg);
  cr_assert(cfg_gpu_has_alias(&g, "h100_sxm") && cfg_gpu_has_alias(&g, "NVIDIA H100 80GB HBM3"));
  cr_assert(cfg_gpu_has_alias(&g, "H100-SXM") && cfg_gpu_has_alias(&g, "nvidia h100 80gb hbm3"), "any case");
  cr_assert(!cfg_gpu_has_alias(&g, "h200_sxm"));
  static const struct {
    const char *gpu, *alias;
  } want[] = {{"h200", "NVIDIA H200"},    {"b200", "b200_sxm"}, {"a100-sxm-80gb", "NVIDIA A100-SXM4-80GB"},
              {"l40s", "NVIDIA L40S"},    {"l40s", "l40s"},     {"a100-sxm-80gb", "a100_sxm"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_assert_eq(cfg_gpu_load(&g, want[i].gpu, &e), SIM_OK, "%s", e.msg);
    cr_assert(cfg_gpu_has_alias(&g, want[i].alias), "%s: %s", want[i].gpu, want[i].alias);
  }
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"aliases\": [\"a\", \"b\"]"), &e), SIM_OK,
               "%s", e.msg);
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"aliases\": \"a\""), &e), SIM_EINPUT);
  assert_msg_has(&e, "aliases: expected an array of strings");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"aliases\": [\"a\", 3]"), &e), SIM_EINPUT);
  assert_msg_has(&e, "aliases[1]: expected a non-empty string");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8", "\"l2_mib\": 8, \"aliases\": [\"a\", \"a\"]"), &e),
               SIM_EINPUT);
  assert_msg_has(&e, "aliases[1]: \"a\" given twice");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"l2_mib\": 8",
                                         "\"l2_mib\": 8, \"aliases\": [\"1\", \"2\", \"3\", \"4\", \"5\", \"6\", "
                                         "\"7\", \"8\", \"9\"]"),
                             &e),
               SIM_EINPUT);
  assert_msg_has(&e, "aliases[8]: at most 8 aliases");
}

/* ---- engines ------------------------------------------------------------------ */

Test(config, engine_profiles) {
  engine_cfg v, t;
  sim_err e = {0};
  cr_assert_eq(cfg_engine_load(&v, "vllm", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(v.max_num_seqs, 1024);
  cr_assert_eq(v.max_num_batched_tokens, 8192);
  cr_assert_eq(v.block_size, 16);
  cr_assert_float_eq(v.gpu_memory_utilization, 0.92, 1e-12);
  cr_assert(v.enable_prefix_caching && v.enable_chunked_prefill && v.async_scheduling);
  cr_assert_eq(v.admission, ADMIT_ON_DEMAND);
  cr_assert_eq(v.cuda_graph_max_batch, 512);
  cr_assert_float_eq(v.step_overhead_ns, 530.3e3, 1e-6); /* fitted by servesim validate --fit */
  cr_assert_float_eq(v.runtime_overhead_bytes, 1214 * MIB, 0.5);
  cr_assert_str_eq(v.version, "0.25.0");
  cr_assert_eq(cfg_engine_load(&t, "trtllm", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(t.version, "1.3.0rc20");
  cr_assert_eq(t.admission, ADMIT_RESERVE_FULL);
  cr_assert_not(t.enable_prefix_caching);
  cr_assert_eq(t.max_num_batched_tokens, 8192);
  /* TensorRT-LLM serves FP8 from calibrated checkpoints (static input scales); vLLM's tables stay as measured */
  cr_assert(t.fp8_static_act_scale && !v.fp8_static_act_scale);
  /* the output path as a stage of its own: SGLang's (scripts/fit_sglang_stream.sh), in the others' per-seq term */
  engine_cfg s;
  cr_assert_eq(cfg_engine_load(&s, "sglang", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(s.stream_per_seq_ns, 43e3, 1e-6);
  cr_assert(v.stream_per_seq_ns == 0 && t.stream_per_seq_ns == 0);
}

/* Replaces the first `from` in the vllm profile by `to` and parses it. */
static int engine_variant(const char *from, const char *to, sim_err *e) {
  char path[256];
  sim_err fe = {0};
  cr_assert_eq(cfg_find(CFG_ENGINE, "vllm", path, sizeof path, &fe), SIM_OK, "%s", fe.msg);
  const sim_embedded_file *f = sim_embed_find(path);
  cr_assert(f);
  const char *p = strstr(f->data, from);
  cr_assert(p, "test bug: '%s' not in vllm.json", from);
  static char buf[8192];
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - f->data), f->data, to, p + strlen(from));
  engine_cfg en;
  return cfg_engine_parse(&en, buf, "vllm-test.json", e);
}

Test(config, engine_strict_errors) {
  sim_err e = {0};
  /* a negative stage time */
  cr_assert_eq(engine_variant("\"per_seq_overhead_us\"", "\"stream_per_seq_us\": -1, \"per_seq_overhead_us\"", &e),
               SIM_EINPUT);
  cr_assert(strstr(e.msg, "stream_per_seq_us"), "%s", e.msg);
  cr_assert_eq(engine_variant("\"block_size\": 16", "\"block_size\": 24", &e), SIM_EINPUT);
  assert_msg_has(&e, "vllm-test.json:");
  assert_msg_has(&e, "block_size: must be one of 8, 16, 32, 64, 128, got 24");
  cr_assert_eq(engine_variant("\"version\": \"0.25.0\"", "\"version\": 14", &e), SIM_EINPUT);
  assert_msg_has(&e, "version: expected a string");
  cr_assert_eq(engine_variant("\"version\": \"0.25.0\",", "", &e), SIM_OK, "version is optional: %s", e.msg);
  cr_assert_eq(engine_variant("\"on_demand\"", "\"lazy\"", &e), SIM_EINPUT);
  assert_msg_has(&e, "admission: expected \"on_demand\", \"reserve_full\" or \"token_ratio\"");
  cr_assert_eq(engine_variant("\"gpu_memory_utilization\": 0.92", "\"gpu_memory_utilization\": 1.2", &e), SIM_EINPUT);
  assert_msg_has(&e, "gpu_memory_utilization: must be in (0, 1]");
  cr_assert_eq(engine_variant("\"enable_prefix_caching\": true", "\"enable_prefix_caching\": 1", &e), SIM_EINPUT);
  assert_msg_has(&e, "enable_prefix_caching: expected a boolean");
  /* the optional FP8 key: a boolean, refused with the file and the key otherwise; absent means false */
  cr_assert_eq(engine_variant("\"activation_scale\": 1.0", "\"activation_scale\": 1.0, \"fp8_static_activation_scale\": \"yes\"", &e),
               SIM_EINPUT);
  assert_msg_has(&e, "vllm-test.json:");
  assert_msg_has(&e, "fp8_static_activation_scale: expected a boolean");
  cr_assert_eq(engine_variant("\"activation_scale\": 1.0", "\"activation_scale\": 1.0, \"fp8_static_activation_scale\": true", &e),
               SIM_OK, "%s", e.msg);
  cr_assert_eq(engine_variant("\"kernel_floor_us\": 2.5", "\"kernel_floor_us\": -2", &e), SIM_EINPUT);
  assert_msg_has(&e, "kernel_floor_us: must be in [0, 1e+06], got -2");
  cr_assert_eq(engine_variant("\"step_overhead_us\": 530.3", "\"step_overhead_us\": -1", &e), SIM_EINPUT);
  assert_msg_has(&e, "step_overhead_us: must be in [0, 1e+06], got -1");
  cr_assert_eq(engine_variant("\"max_num_seqs\"", "\"max_seqs\"", &e), SIM_EINPUT);
  assert_msg_has(&e, "max_seqs: unknown key");
  cr_assert_eq(engine_variant("  \"cuda_graph_mib\": 768,\n", "", &e), SIM_EINPUT);
  assert_msg_has(&e, "cuda_graph_mib: missing required key");
  cr_assert_eq(engine_variant("\"step_overhead_us\": 530.3", "\"step_overhead_us\": 0", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(engine_variant("\"frontend_latency_us\": 4192", "\"frontend_latency_us\": 1e30", &e), SIM_EINPUT);
  assert_msg_has(&e, "frontend_latency_us: must be in [0, 3.6e+09], got 1e+30");
  cr_assert_eq(engine_variant("\"frontend_latency_us\": 4192", "\"frontend_latency_us\": -2", &e), SIM_EINPUT);
  assert_msg_has(&e, "frontend_latency_us: must be in [0, 3.6e+09], got -2");
  cr_assert_eq(engine_variant("  \"frontend_latency_us\": 4192,\n", "", &e), SIM_OK, "optional: %s", e.msg);
}

/* Every number of a GPU, engine or instance file has a ceiling (cfg_parse.c's kspec tables) and every integer of
 * a config.json one (cfg_layers.c's hf_ceiling): a typo or a forged file is refused as it is read, with the key
 * and its line, instead of running ([hardening] item 5: step_overhead_us 1e300 ran and printed a 300-digit
 * percentage; item 3: a model of 2^32-1 layers was refused only after 44 s). */
Test(config, every_number_has_a_ceiling) {
  sim_err e = {0};
  cr_assert_eq(engine_variant("\"step_overhead_us\": 530.3", "\"step_overhead_us\": 1e300", &e), SIM_EINPUT);
  assert_msg_has(&e, "vllm-test.json:");
  assert_msg_has(&e, "step_overhead_us: must be in [0, 1e+06], got 1e+300");
  cr_assert_eq(engine_variant("\"step_overhead_us\": 530.3", "\"step_overhead_us\": 1e6", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(engine_variant("\"max_num_seqs\": 1024", "\"max_num_seqs\": 1000001", &e), SIM_EINPUT);
  assert_msg_has(&e, "max_num_seqs: must be in (0, 1e+06]");
  cr_assert_eq(gpu_parse_err(gpu_variant("\"memory_mib\": 1024", "\"memory_mib\": 3e9"), &e), SIM_EINPUT);
  assert_msg_has(&e, "t.json:4: memory_mib: must be in (0, 1.67772e+07], got 3e+09");
  model_cfg m;
  char js[512];
  const char *fmt = "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128,\n"
                    " \"num_hidden_layers\": %s, \"num_attention_heads\": 8, \"vocab_size\": 100,"
                    " \"max_position_embeddings\": 1024}";
  snprintf(js, sizeof js, fmt, "4294967295");
  cr_assert_eq(cfg_model_parse(&m, js, "m.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "m.json:2: num_hidden_layers: must be in (0, 4096], got 4.29497e+09");
  snprintf(js, sizeof js, fmt, "4096");
  cr_assert_eq(cfg_model_parse(&m, js, "m.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.layers, 4096);
  cr_assert_float_eq(cfg_hf_ceiling("vocab_size"), 16777216, 0);
  cr_assert_float_eq(cfg_hf_ceiling("rope_theta_not_listed"), 1e9, 0);
}

/* ---- finding ---------------------------------------------------------------- */

Test(config, find_path_vs_name) {
  char p[1024];
  sim_err e = {0};
  cr_assert_eq(cfg_find(CFG_GPU, "h200", p, sizeof p, &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(p, "configs/gpus/h200.json");
  cr_assert_eq(cfg_find(CFG_GPU, "H200.json", p, sizeof p, &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(p, "configs/gpus/h200.json");

  const char *tmp = tu_tmpfile(".json", gpu_json);
  cr_assert(tmp);
  cr_assert_eq(cfg_find(CFG_GPU, tmp, p, sizeof p, &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(p, tmp);
  gpu_cfg g;
  cr_assert_eq(cfg_gpu_load(&g, tmp, &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(g.name, "testgpu");

  cr_assert_eq(cfg_find(CFG_GPU, "/nonexistent/dir/x.json", p, sizeof p, &e), SIM_EINPUT);
  assert_msg_has(&e, "/nonexistent/dir/x.json");

  /* a real file with a bad key: the error names that file */
  const char *bad = tu_tmpfile(".json", "{\"name\": \"x\", \"bogus\": 1}");
  cr_assert_eq(cfg_gpu_load(&g, bad, &e), SIM_EINPUT);
  assert_msg_has(&e, bad);
  assert_msg_has(&e, "bogus: unknown key");
  unlink(tmp);
  unlink(bad);

  /* an HF checkout directory */
  char dir[] = "/tmp/servesim_model_XXXXXX";
  cr_assert(mkdtemp(dir));
  tu_tmp_track(dir);
  char cfgp[256];
  snprintf(cfgp, sizeof cfgp, "%s/config.json", dir);
  FILE *f = fopen(cfgp, "w");
  cr_assert(f);
  fputs("{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 2,"
        " \"num_attention_heads\": 4, \"vocab_size\": 10, \"max_position_embeddings\": 128}",
        f);
  fclose(f);
  model_cfg m;
  cr_assert_eq(cfg_model_load(&m, dir, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.hidden, 64);
  cr_assert_str_eq(m.path, cfgp);
  cr_assert_str_eq(m.name, strrchr(dir, '/') + 1);
  unlink(cfgp);
  rmdir(dir);
}

Test(config, data_dir_overrides_embedded) {
  char dir[] = "/tmp/servesim_data_XXXXXX";
  cr_assert(mkdtemp(dir));
  tu_tmp_track(dir);
  char p[512];
  snprintf(p, sizeof p, "%s/configs", dir);
  cr_assert_eq(mkdir(p, 0755), 0);
  snprintf(p, sizeof p, "%s/configs/gpus", dir);
  cr_assert_eq(mkdir(p, 0755), 0);
  char h200[512], mine[512];
  snprintf(h200, sizeof h200, "%s/configs/gpus/h200.json", dir);
  snprintf(mine, sizeof mine, "%s/configs/gpus/mygpu.json", dir);
  FILE *f = fopen(h200, "w");
  cr_assert(f);
  fputs(gpu_variant("\"memory_mib\": 1024", "\"memory_mib\": 777"), f);
  fclose(f);
  f = fopen(mine, "w");
  cr_assert(f);
  fputs(gpu_json, f);
  fclose(f);

  cr_assert_eq(setenv("SERVESIM_DATA_DIR", dir, 1), 0);
  gpu_cfg g;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h200", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(g.mem_bytes, 777 * MIB, 0.5, "the data dir's h200.json wins");
  char out[1024];
  cr_assert_eq(cfg_find(CFG_GPU, "mygpu", out, sizeof out, &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(out, mine);
  cr_assert_eq(cfg_gpu_load(&g, "h100-sxm", &e), SIM_OK, "embedded still served: %s", e.msg);
  char list[512];
  cfg_list(CFG_GPU, list, sizeof list);
  cr_assert_str_eq(list, "a100-pcie-80gb, a100-sxm-80gb, b200, b300, gb200, gb300, h100-sxm, h20, h200, l40s, mygpu");

  unsetenv("SERVESIM_DATA_DIR");
  cr_assert_eq(cfg_gpu_load(&g, "h200", &e), SIM_OK, "%s", e.msg);
  cr_assert_float_eq(g.mem_bytes, 143771 * MIB, 0.5);
  cr_assert_eq(cfg_find(CFG_GPU, "mygpu", out, sizeof out, &e), SIM_EINPUT);
  unlink(h200);
  unlink(mine);
  rmdir(p);
  snprintf(p, sizeof p, "%s/configs", dir);
  rmdir(p);
  rmdir(dir);
}

/* ---- deployment ------------------------------------------------------------- */

typedef struct fixture {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
} fixture;

static void load_fixture(fixture *f, const char *model, const char *gpu, const char *engine) {
  sim_err e = {0};
  cr_assert_eq(cfg_model_load(&f->m, model, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cfg_gpu_load(&f->g, gpu, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cfg_engine_load(&f->e, engine, &e), SIM_OK, "%s", e.msg);
  deploy_init(&f->d);
}

Test(config, resolve_fills_defaults) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "h200", "vllm");
  sim_err e = {0};
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.tp, 1);
  cr_assert_eq(f.d.replicas, 1);
  cr_assert_eq(f.d.act_dtype, DT_BF16);
  cr_assert_eq(f.d.weight_dtype, DT_BF16);
  cr_assert_eq(f.d.kv_dtype, DT_BF16);
  cr_assert_eq(f.d.max_num_seqs, 1024);
  cr_assert_eq(f.d.max_num_batched_tokens, 8192);
  cr_assert_eq(f.d.block_size, 16);
  cr_assert_eq(f.d.max_model_len, 131072);
  cr_assert_float_eq(f.d.gpu_memory_utilization, 0.92, 1e-12);
  cr_assert_eq(f.d.enable_prefix_caching, 1);
  cr_assert_eq(f.d.enable_chunked_prefill, 1);
  deploy_cfg once = f.d;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert(!memcmp(&once, &f.d, sizeof once), "resolve is idempotent");

  /* llama-2 is natively fp16: activations follow */
  load_fixture(&f, "llama-2-70b", "a100-sxm-80gb", "trtllm");
  f.d.tp = 4;
  f.d.kv_dtype = DT_FP8;
  f.d.kv_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.act_dtype, DT_FP16);
  cr_assert_eq(f.d.weight_dtype, DT_FP16);
  cr_assert_eq(f.d.kv_dtype, DT_FP8, "fp8 KV is allowed even without FP8 tensor cores");
  cr_assert_eq(f.d.max_num_seqs, 2048);
  cr_assert_eq(f.d.block_size, 32);
  cr_assert_eq(f.d.enable_prefix_caching, 0);
}

Test(config, resolve_tp_checks) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "h100-sxm", "vllm");
  sim_err e = {0};
  f.d.tp = 3;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "tensor_parallel_size 3 does not divide num_attention_heads 64 of llama-3.1-70b");
  f.d.tp = 16; /* multiple of 8 KV heads: KV heads are replicated */
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  f.d.tp = 128;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "tensor_parallel_size 128 is out of range");

  /* kv_heads 6 with 12 q heads: tp 4 divides 12 but neither divides 6 nor is a multiple of it */
  f.m.q_heads = 12;
  f.m.kv_heads = 6;
  f.d.tp = 4;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "num_key_value_heads 6");
}

/* Pipeline parallelism: at most CFG_MAX_PP stages and one layer per stage;
 * vLLM turns async scheduling off with PP (config/vllm.py: "Async scheduling
 * is not yet supported with pipeline_parallel_size > 1 and will be
 * disabled") and refuses an explicit request for it (engine/arg_utils.py). */
/* --enable-expert-parallel: only for a mixture of experts whose experts the TP ranks divide; the layout
 * names it. */
Test(config, resolve_expert_parallel_checks) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "h100-sxm", "vllm");
  sim_err e = {0};
  f.d.tp = 4, f.d.expert_parallel = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "enable_expert_parallel: llama-3.1-70b has no experts");
  f.m.experts = 6, f.m.experts_per_tok = 2;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "data_parallel_size x tensor_parallel_size = 4 does not divide the 6 experts");
  f.m.experts = 8;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  char buf[96];
  deploy_layout_text(&f.d, buf, sizeof buf);
  cr_assert_str_eq(buf, "TP4 (EP4)");
}

Test(config, resolve_pp_checks) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "h100-sxm", "vllm");
  sim_err e = {0};
  deploy_cfg d0 = f.d;
  f.d.tp = 4, f.d.pp = 2;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.async_scheduling, 0, "PP turns the engine's async scheduling off");
  cr_assert_eq(deploy_gpus(&f.d), 8);
  f.d = d0;
  f.d.pp = 2, f.d.async_scheduling = 1;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "async_scheduling is not supported with pipeline_parallel_size 2 > 1");
  f.d = d0;
  f.d.pp = 17;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "pipeline_parallel_size 17 is out of range 1..16");
  f.d = d0;
  f.m.layers = 4, f.d.pp = 8;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "pipeline_parallel_size 8 exceeds num_hidden_layers 4");
  f.m.layers = 80;
  f.d = d0;
  f.d.pp = 1;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.async_scheduling, f.e.async_scheduling ? 1 : 0, "without PP the engine's default stays");
  char buf[96];
  deploy_layout_text(&f.d, buf, sizeof buf);
  cr_assert_str_eq(buf, "TP1");
  f.d.tp = 8, f.d.pp = 2, f.d.gpus_per_node = 8;
  deploy_layout_text(&f.d, buf, sizeof buf);
  cr_assert_str_eq(buf, "TP8 x PP2 over 2 nodes of 8");
}

Test(config, resolve_dtype_checks) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "a100-sxm-80gb", "trtllm"); /* vLLM runs it weight-only (test below) */
  sim_err e = {0};
  sim_dtype w;
  cr_assert(cfg_parse_quantization("fp8", DT_BF16, &w));
  f.d.weight_dtype = w;
  f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "quantization fp8");
  assert_msg_has(&e, "a100-sxm-80gb");

  deploy_init(&f.d);
  cr_assert(cfg_parse_quantization("awq", DT_BF16, &w));
  cr_assert_eq(w, DT_INT4);
  f.d.weight_dtype = w;
  f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "int4 works everywhere: %s", e.msg);

  deploy_init(&f.d);
  f.d.weight_dtype = DT_INT8;
  f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "A100 has INT8 tensor cores: %s", e.msg);

  deploy_init(&f.d); /* NVFP4: weight-only where no FP4 tensor cores exist */
  cr_assert(cfg_parse_quantization("nvfp4", DT_BF16, &w));
  cr_assert_eq(w, DT_FP4);
  cr_assert(cfg_parse_quantization("modelopt_fp4", DT_BF16, &w) && w == DT_FP4);
  f.d.weight_dtype = w;
  f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "nvfp4 runs weight-only on an A100: %s", e.msg);

  deploy_init(&f.d);
  f.d.act_dtype = DT_FP8;
  f.d.act_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "dtype fp8 is not supported");

  deploy_init(&f.d);
  f.d.kv_dtype = DT_INT4;
  f.d.kv_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "kv_cache_dtype int4");

  load_fixture(&f, "llama-3.1-70b", "h200", "vllm");
  f.d.weight_dtype = DT_FP8;
  f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.act_dtype, DT_BF16);
}

Test(config, resolve_scheduler_checks) {
  fixture f;
  load_fixture(&f, "llama-3.1-70b", "h200", "vllm");
  sim_err e = {0};
  f.d.block_size = 24;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "block_size 24 is not one of 8, 16, 32, 64, 128");

  deploy_init(&f.d);
  f.d.max_model_len = 200000;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "max_model_len 200000 exceeds max_position_embeddings 131072 of llama-3.1-70b");

  deploy_init(&f.d);
  f.d.gpu_memory_utilization = 0;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "gpu_memory_utilization");

  /* chunked prefill off: an explicit budget must hold max_model_len ... */
  deploy_init(&f.d);
  f.d.enable_chunked_prefill = 0;
  f.d.max_model_len = 16384;
  f.d.max_num_batched_tokens = 8192;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "max_num_batched_tokens 8192 is smaller than max_model_len 16384");
  /* ... and the default budget grows to it (vLLM's rule) */
  deploy_init(&f.d);
  f.d.enable_chunked_prefill = 0;
  f.d.max_model_len = 16384;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.max_num_batched_tokens, 16384);
  /* with chunking on a small budget is fine */
  deploy_init(&f.d);
  f.d.max_num_batched_tokens = 512;
  f.d.enable_prefix_caching = 0;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(f.d.max_num_batched_tokens, 512);
  cr_assert_eq(f.d.enable_prefix_caching, 0, "an explicit 0 is kept");
}

/* ---- names -------------------------------------------------------------------- */

Test(config, quantization_names) {
  sim_dtype w;
  cr_assert(cfg_parse_quantization("none", DT_FP16, &w));
  cr_assert_eq(w, DT_FP16);
  cr_assert(cfg_parse_quantization("FP8", DT_BF16, &w));
  cr_assert_eq(w, DT_FP8);
  cr_assert(cfg_parse_quantization("int8", DT_BF16, &w));
  cr_assert_eq(w, DT_INT8);
  cr_assert(cfg_parse_quantization("gptq", DT_BF16, &w));
  cr_assert_eq(w, DT_INT4);
  cr_assert(cfg_parse_quantization("int4", DT_BF16, &w));
  cr_assert_eq(w, DT_INT4);
  w = DT_BF16;
  cr_assert_not(cfg_parse_quantization("fp6", DT_BF16, &w));
  cr_assert_not(cfg_parse_quantization("", DT_BF16, &w));
  cr_assert_not(cfg_parse_quantization(NULL, DT_BF16, &w));
  cr_assert_eq(w, DT_BF16, "a failed parse leaves the output alone");
}

Test(config, route_policy_names) {
  route_policy r;
  for (int i = ROUTE_ROUND_ROBIN; i <= ROUTE_LEAST_KV; i++) {
    cr_assert(route_policy_parse(route_policy_name((route_policy)i), &r));
    cr_assert_eq((int)r, i);
  }
  cr_assert(route_policy_parse("rr", &r));
  cr_assert_eq(r, ROUTE_ROUND_ROBIN);
  cr_assert(route_policy_parse("lor", &r));
  cr_assert_eq(r, ROUTE_LEAST_OUTSTANDING);
  cr_assert(route_policy_parse("least-kv", &r));
  cr_assert_eq(r, ROUTE_LEAST_KV);
  cr_assert_not(route_policy_parse("random", &r));
  cr_assert_str_eq(route_policy_name(ROUTE_LEAST_OUTSTANDING), "least_outstanding");
}

/* FP8 weights on a GPU without FP8 tensor cores: vLLM serves them weight-only (FP8 Marlin, W8A16), TensorRT-LLM
 * does not (refused with the alternatives); INT8 W8A8 still needs int8 tensor cores; on a GPU with FP8 tensor
 * cores FP8 is W8A8, not weight-only. */
Test(config, fp8_without_fp8_tensor_cores_is_weight_only_in_vllm) {
  fixture f;
  sim_err e = {0};
  load_fixture(&f, "llama-3.1-70b", "a100-sxm-80gb", "vllm");
  f.d.weight_dtype = DT_FP8, f.d.weight_dtype_set = true, f.d.tp = 4;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert(deploy_fp8_weight_only(&f.d, &f.g));
  load_fixture(&f, "llama-3.1-70b", "a100-sxm-80gb", "trtllm");
  f.d.weight_dtype = DT_FP8, f.d.weight_dtype_set = true, f.d.tp = 4;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_EINPUT);
  assert_msg_has(&e, "quantization fp8 needs fp8 tensor cores, which a100-sxm-80gb");
  assert_msg_has(&e, "use int8, int4");
  load_fixture(&f, "llama-3.1-70b", "h200", "vllm");
  f.d.weight_dtype = DT_FP8, f.d.weight_dtype_set = true;
  cr_assert_eq(cfg_resolve(&f.d, &f.m, &f.g, &f.e, &e), SIM_OK, "%s", e.msg);
  cr_assert_not(deploy_fp8_weight_only(&f.d, &f.g));
}

/* Architecture features servesim does not model: refused naming the key and the feature where the memory plan
 * would be wrong (linear-attention layers of a kind other than Gated DeltaNet or Kimi Delta Attention), DeepSeek sparse attention without MLA; Python's Infinity in a config.json is read, not a parse error. */
Test(config, unmodelled_architecture_features_are_named) {
  const char *base = "\"model_type\": \"x\", \"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 4, "
                     "\"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 128";
  static const struct {
    const char *extra, *key, *says;
  } refused[] = {
      {"\"layer_types\": [\"linear_attention\", \"linear_attention\", \"linear_attention\", \"full_attention\"]",
       "layer_types", "3 linear-attention layers without Gated DeltaNet's linear_* keys"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    char js[1024];
    snprintf(js, sizeof js, "{%s, %s}", base, refused[i].extra);
    model_cfg m;
    sim_err e = {0};
    cr_assert_eq(cfg_model_parse(&m, js, "arch.json", &e), SIM_EINPUT, "%s", refused[i].extra);
    cr_assert(strstr(e.msg, "arch.json:") && strstr(e.msg, refused[i].key) && strstr(e.msg, refused[i].says) &&
                  (strstr(e.msg, "not modelled yet") || strstr(e.msg, "not read yet")),
              "%s", e.msg);
  }
  /* the same under text_config (multimodal wrappers) */
  char js[1024];
  snprintf(js, sizeof js, "{\"text_config\": {%s, \"layer_types\": [\"linear_attention\", \"full_attention\"]}}", base);
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, js, "mm.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "linear-attention layers without Gated DeltaNet") && strstr(e.msg, "not modelled yet"), "%s",
            e.msg);
  /* DeepSeek sparse attention needs MLA (test_hybrid.c: dsa_*) */
  snprintf(js, sizeof js, "{%s, \"index_topk\": 2048}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "dsa.json", &e), SIM_EINPUT, "%s", e.msg);
  cr_assert(strstr(e.msg, "index_topk") && strstr(e.msg, "without multi-head latent attention"), "%s", e.msg);
  snprintf(js, sizeof js, "{%s}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "plain.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.unmodelled, "");
  /* Python's json tokens, outside strings only; the line of a later error is still right */
  snprintf(js, sizeof js,
           "{%s,\n \"time_step_limit\": [0.0, Infinity],\n \"note\": \"Infinity and NaN\",\n \"x\": -Infinity}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "py.json", &e), SIM_OK, "%s", e.msg);
  snprintf(js, sizeof js, "{%s,\n \"t\": [NaN, Infinity],\n \"num_key_value_heads\": 3}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "py.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "py.json:3: num_key_value_heads"), "%s", e.msg);
}

/* Names a user brings: a Hugging Face id a bundled file declares among its aliases finds that file; a quantized
 * checkpoint's id is refused naming --quantization (the bundled file is the architecture only); a mistyped
 * name gets the closest known one; a TP size that does not fit lists those that do. */
Test(config, names_users_bring) {
  model_cfg m;
  gpu_cfg g;
  sim_err err;
  cr_assert_eq(cfg_model_load(&m, "meta-llama/Llama-3.1-70B-Instruct", &err), 0, "%s", err.msg);
  cr_assert_str_eq(m.name, "llama-3.1-70b");
  cr_assert_eq(cfg_model_load(&m, "META-LLAMA/LLAMA-3.1-70B-INSTRUCT", &err), 0, "case ignored: %s", err.msg);
  cr_assert_eq(cfg_gpu_load(&g, "NVIDIA H100 80GB HBM3", &err), 0, "%s", err.msg);
  cr_assert_str_eq(g.name, "h100-sxm");
  cr_assert_eq(cfg_model_load(&m, "nvidia/Llama-3.1-70B-Instruct-FP8", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "give --model llama-3.1-70b --quantization fp8"), "%s", err.msg);
  cr_assert_eq(cfg_gpu_load(&g, "h2000", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "did you mean 'h200'?"), "%s", err.msg);
  cr_assert_eq(cfg_model_load(&m, "qwen2.5-27b", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "did you mean 'qwen2.5-72b'?"), "%s", err.msg);
  cr_assert_eq(cfg_model_load(&m, "something-else-entirely", &err), SIM_EINPUT);
  cr_assert_null(strstr(err.msg, "did you mean"), "nothing close: %s", err.msg);
  engine_cfg e;
  cr_assert_eq(cfg_model_load(&m, "llama-3.1-70b", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_gpu_load(&g, "h200", &err), 0, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, "vllm", &err), 0, "%s", err.msg);
  deploy_cfg d;
  deploy_init(&d);
  d.tp = 3;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &e, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "TP sizes that fit its heads: 1, 2, 4, 8, 16, 32, 64"), "%s", err.msg);
}

/* ModelOpt's hf_quant_config.json beside a config.json without quantization_config (NVIDIA's NVFP4 and FP8
 * exports): read with the config, in both layouts; MIXED_PRECISION by its most common layer algorithm, noted; a
 * format servesim cannot read, or a broken file, is an error naming the file. */
Test(config, modelopt_hf_quant_config_beside_the_config) {
  const char *dir = tu_tmpdir();
  const char *js = "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
                   "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100, "
                   "\"max_position_embeddings\": 128, \"torch_dtype\": \"bfloat16\"}";
  char path[1024], side[1100];
  model_cfg m;
  sim_err e = {0, ""};
  snprintf(path, sizeof path, "%s/config.json", dir);
  snprintf(side, sizeof side, "%s/hf_quant_config.json", dir);
  cr_assert(tu_write_table(path, js, false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_OK, "%s", e.msg);
  cr_assert(!m.ckpt_quant, "no sidecar: the torch_dtype");
  cr_assert(tu_write_table(side, "{\"producer\": {\"name\": \"modelopt\"}, \"quantization\": {\"quant_algo\": "
                                 "\"NVFP4\", \"kv_cache_quant_algo\": \"FP8\", \"group_size\": 16}}", false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_OK, "%s", e.msg);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP4, "hf_quant_config.json beside config.json");

  snprintf(path, sizeof path, "%s/org--X-FP8.json", dir);
  snprintf(side, sizeof side, "%s/org--X-FP8.hf_quant_config.json", dir);
  cr_assert(tu_write_table(path, js, false));
  cr_assert(tu_write_table(side, "{\"quantization\": {\"quant_algo\": \"FP8\"}}", false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_OK, "%s", e.msg);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP8, "X.hf_quant_config.json beside X.json");

  cr_assert(tu_write_table(side, "{\"quantization\": {\"quant_algo\": \"MIXED_PRECISION\", \"quantized_layers\": {"
                                 "\"a\": {\"quant_algo\": \"FP8\"}, \"b\": {\"quant_algo\": \"W4A16_NVFP4\"}, "
                                 "\"c\": {\"quant_algo\": \"NVFP4\"}}}}", false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_OK, "%s", e.msg);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP4, "two of three layers NVFP4");
  cr_assert(strstr(m.unmodelled, "MIXED_PRECISION") && strstr(m.unmodelled, "2 NVFP4, 1 FP8"), "%s", m.unmodelled);

  cr_assert(tu_write_table(side, "{\"quantization\": {\"quant_algo\": \"INT2\"}}", false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "org--X-FP8.hf_quant_config.json") && strstr(e.msg, "INT2"), "%s", e.msg);
  cr_assert(tu_write_table(side, "{\"quantization\": ", false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "org--X-FP8.hf_quant_config.json"), "%s", e.msg);

  /* the config's own quantization_config wins: the sidecar is not read */
  char own[1024];
  snprintf(own, sizeof own, "%.*s, \"quantization_config\": {\"quant_method\": \"fp8\"}}", (int)strlen(js) - 1, js);
  cr_assert(tu_write_table(path, own, false));
  cr_assert_eq(cfg_model_load(&m, path, &e), SIM_OK, "%s", e.msg);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP8);
}

/* A multimodal wrapper keeps quantization_config at its root and the language model under text_config (Kimi-K2.5's
 * NVFP4 export): read from the root; its "ignore" list naming the attention keeps the attention unquantized. */
Test(config, quantization_config_of_a_multimodal_wrapper) {
  const char *js = "{\"model_type\": \"kimi_k25\", \"quantization_config\": {\"quant_method\": \"modelopt\", "
                   "\"quant_algo\": \"NVFP4\", \"ignore\": [\"language_model.lm_head\", "
                   "\"language_model.model.layers.0.self_attn*\"]}, \"text_config\": {\"model_type\": \"llama\", "
                   "\"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 2, "
                   "\"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 128}}";
  model_cfg m;
  sim_err e = {0, ""};
  cr_assert_eq(cfg_model_parse(&m, js, "k.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(m.ckpt_quant && m.ckpt_wdtype == DT_FP4, "the root's quantization_config");
  cr_assert(m.attn_unquantized, "ignore names self_attn");
}

/* Per-layer lists: moe_layer_freq as one 0/1 entry per layer (MiMo-V2-Flash, MiniMax-M3), hybrid_layer_pattern
 * (MiMo: 1 = sliding window), MiniMax's dense_intermediate_size and shared_intermediate_size; a list of the wrong
 * length, an entry other than 0/1, or a 1 where first_k_dense_replace makes the layer dense is refused by key. */
Test(config, per_layer_lists) {
  model_cfg m;
  sim_err e = {0, ""};
  const char *fmt = "{\"model_type\": \"x\", \"hidden_size\": 1024, \"intermediate_size\": 256, "
                    "\"dense_intermediate_size\": 2048, \"shared_intermediate_size\": 256, \"num_hidden_layers\": 4, "
                    "\"num_attention_heads\": 8, \"num_key_value_heads\": 2, \"num_local_experts\": 8, "
                    "\"num_experts_per_tok\": 2, \"first_k_dense_replace\": %d, \"moe_layer_freq\": %s, "
                    "\"hybrid_layer_pattern\": %s, \"sliding_window\": 128, \"vocab_size\": 1000, "
                    "\"max_position_embeddings\": 4096}";
  char buf[1024];
  snprintf(buf, sizeof buf, fmt, 1, "[0, 1, 0, 1]", "[0, 1, 1, 0]");
  cr_assert_eq(cfg_model_parse(&m, buf, "l.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(!cfg_model_is_moe_layer(&m, 0) && cfg_model_is_moe_layer(&m, 1) && !cfg_model_is_moe_layer(&m, 2) &&
            cfg_model_is_moe_layer(&m, 3));
  cr_assert_eq(m.moe_layers, 2);
  cr_assert_eq(m.intermediate, 2048, "the dense layers' MLP");
  cr_assert_eq(m.expert_inter, 256);
  cr_assert_eq(m.shared_inter, 256);
  cr_assert_eq(m.sliding_layers, 2);
  cr_assert_eq(m.sliding_window, 128);
  cr_assert_eq(cfg_model_sliding_layers_in(&m, 0, 4), 2);
  cr_assert_eq(cfg_model_sliding_layers_in(&m, 0, 2), 1);
  static const struct {
    int first;
    const char *moe, *pat, *key;
  } bad[] = {
      {1, "[0, 1, 1]", "[0, 0, 0, 0]", "moe_layer_freq"},     {1, "[0, 2, 1, 1]", "[0, 0, 0, 0]", "moe_layer_freq"},
      {2, "[0, 1, 1, 1]", "[0, 0, 0, 0]", "moe_layer_freq"},  {1, "[0, \"1\", 1, 1]", "[0, 0, 0, 0]", "moe_layer_freq"},
      {1, "[0, 1, 1, 1]", "[0, 1]", "hybrid_layer_pattern"}, {1, "[0, 1, 1, 1]", "[0, 1, 0.5, 0]", "hybrid_layer_pattern"},
  };
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad); i++) {
    snprintf(buf, sizeof buf, fmt, bad[i].first, bad[i].moe, bad[i].pat);
    cr_assert_eq(cfg_model_parse(&m, buf, "bad.json", &e), SIM_EINPUT, "%s %s", bad[i].moe, bad[i].pat);
    assert_msg_has(&e, bad[i].key);
  }
}

/* DeciLM blocks (block_configs): layers without attention are nomix layers (no KV), without an FFN noffn layers,
 * each MLP's width from ffn_mult by DeciLM's rule (int(2 mult H / 3) up to a multiple of 256); the parameters
 * count each layer at its own width. Variants servesim does not model, mixed KV-head counts, a wrong block count
 * and bad values are refused naming block_configs and the layer. */
Test(config, decilm_blocks) {
  model_cfg m;
  sim_err e = {0, ""};
  const char *fmt = "{\"model_type\": \"nemotron-nas\", \"hidden_size\": 1536, \"intermediate_size\": null, "
                    "\"num_hidden_layers\": 3, \"num_attention_heads\": 12, \"num_key_value_heads\": null, "
                    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"block_configs\": [%s]}";
  const char *ok = "{\"attention\": {\"n_heads_in_group\": 4, \"no_op\": false, \"window_length\": null}, "
                   "\"ffn\": {\"ffn_mult\": 2.0, \"no_op\": false}}, "
                   "{\"attention\": {\"n_heads_in_group\": null, \"no_op\": true}, \"ffn\": {\"ffn_mult\": 1.3125}}, "
                   "{\"attention\": {\"n_heads_in_group\": 4}, \"ffn\": {\"no_op\": true}}";
  char buf[2048];
  snprintf(buf, sizeof buf, fmt, ok);
  cr_assert_eq(cfg_model_parse(&m, buf, "nas.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.kv_heads, 3);
  cr_assert_eq(m.nomix_layers, 1);
  cr_assert_eq(m.noffn_layers, 1);
  /* 2 x 2.0 x 1536 / 3 = 2048; 2 x 1.3125 x 1536 / 3 = 1344 -> 1536 */
  cr_assert_eq(m.ffn_classes, 2);
  cr_assert_eq(m.ffn_class_inter[0], 2048);
  cr_assert_eq(m.ffn_class_inter[1], 1536);
  cr_assert_eq(m.intermediate, 2048, "the widest");
  cr_assert_eq(cfg_model_ffn_class_layers_in(&m, 0, 0, 3), 1);
  cr_assert_eq(cfg_model_ffn_class_layers_in(&m, 1, 0, 3), 1);
  cr_assert_eq(cfg_model_ffn_class_layers_in(&m, 1, 0, 1), 0);
  cr_assert_float_eq(cfg_model_dense_mlp_params(&m), 3.0 * 1536 * (2048 + 1536), 0.5);
  /* attention in layers 0 and 2: q 1536 x 1536, k and v 1536 x 384 each, o 1536 x 1536 */
  double attn = 1536.0 * (1536 + 2 * 384) + 1536.0 * 1536;
  double norms = 3 * 2 * 1536.0 - 2 * 1536.0; /* two blocks without their part have one norm each */
  cr_assert_float_eq(m.params_total, 2 * attn + 3.0 * 1536 * (2048 + 1536) + norms + 2 * 1000.0 * 1536 + 1536, 0.5);
  static const struct {
    const char *blocks, *says;
  } bad[] = {
      {"{\"attention\": {\"n_heads_in_group\": 4}, \"ffn\": {\"ffn_mult\": 2.0}}", "one block per layer"},
      {"{\"attention\": {\"n_heads_in_group\": 4}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"n_heads_in_group\": 2}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "layer 1: attention.n_heads_in_group 2 differs"},
      {"{\"attention\": {\"n_heads_in_group\": 4}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"replace_with_linear\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "layer 1: attention.replace_with_linear"},
      {"{\"attention\": {\"n_heads_in_group\": 5}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "layer 0: attention.n_heads_in_group"},
      {"{\"attention\": {\"n_heads_in_group\": 4}, \"ffn\": {\"ffn_mult\": -1}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "layer 0: ffn.ffn_mult"},
      {"{\"attention\": {\"no_op\": 1}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "layer 0: no_op: expected true or false"},
      {"{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}, "
       "{\"attention\": {\"no_op\": true}, \"ffn\": {\"ffn_mult\": 2.0}}",
       "no layer with attention"},
  };
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad); i++) {
    snprintf(buf, sizeof buf, fmt, bad[i].blocks);
    cr_assert_eq(cfg_model_parse(&m, buf, "bad.json", &e), SIM_EINPUT, "%s", bad[i].blocks);
    assert_msg_has(&e, "block_configs");
    assert_msg_has(&e, bad[i].says);
  }
}

/* Layer kinds with attention shapes of their own: Gemma 4's full layers (global_head_dim; with attention_k_eq_v,
 * num_global_key_value_heads and no v_proj) and its MoE block (the dense MLP beside the experts: a shared expert of
 * intermediate_size; top_k_experts), MiMo's sliding-window layers (swa_head_dim, swa_num_key_value_heads). */
Test(config, layer_kinds_with_their_own_heads) {
  model_cfg m;
  sim_err e = {0, ""};
  const char *gemma = "{\"model_type\": \"gemma4_text\", \"hidden_size\": 1024, \"intermediate_size\": 512, "
                      "\"moe_intermediate_size\": 128, \"num_experts\": 16, \"top_k_experts\": 4, "
                      "\"enable_moe_block\": true, \"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
                      "\"num_key_value_heads\": 4, \"head_dim\": 128, \"global_head_dim\": 256, "
                      "\"num_global_key_value_heads\": 1, \"attention_k_eq_v\": true, \"layer_types\": "
                      "[\"sliding_attention\", \"full_attention\"], \"sliding_window\": 64, \"vocab_size\": 1000, "
                      "\"max_position_embeddings\": 4096, \"tie_word_embeddings\": true}";
  cr_assert_eq(cfg_model_parse(&m, gemma, "g.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(cfg_model_typed_attn(&m));
  cr_assert_eq(cfg_model_kind_head_dim(&m, false), 256);
  cr_assert_eq(cfg_model_kind_kv_heads(&m, false), 1);
  cr_assert_eq(cfg_model_kind_head_dim(&m, true), 128);
  cr_assert_eq(cfg_model_kind_kv_heads(&m, true), 4);
  cr_assert_eq(m.experts_per_tok, 4);
  cr_assert_eq(m.shared_inter, 512, "the dense MLP beside the experts");
  /* sliding: q 1024 x 1024, k, v 1024 x 512 each, o 1024 x 1024; full: q 1024 x 2048, k 1024 x 256, no v,
     o 2048 x 1024 */
  cr_assert_float_eq(cfg_model_attn_kind_params(&m, true), 1024.0 * (1024 + 1024) + 1024.0 * 1024, 0.5);
  cr_assert_float_eq(cfg_model_attn_kind_params(&m, false), 1024.0 * (2048 + 256) + 2048.0 * 1024, 0.5);
  /* the global heads count only with attention_k_eq_v (transformers' modeling_gemma4.py) */
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", gemma);
  char *k = strstr(buf, "\"attention_k_eq_v\": true");
  memcpy(k, "\"attention_k_eq_v\": 0   ", strlen("\"attention_k_eq_v\": true"));
  cr_assert_eq(cfg_model_parse(&m, buf, "g.json", &e), SIM_EINPUT, "a number is not a boolean");
  memcpy(k, "\"attention_k_eq_v\":false", strlen("\"attention_k_eq_v\": true"));
  cr_assert_eq(cfg_model_parse(&m, buf, "g.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cfg_model_kind_kv_heads(&m, false), 4);
  cr_assert_eq(cfg_model_kind_head_dim(&m, false), 256);
  const char *bad = "{\"model_type\": \"x\", \"hidden_size\": 1024, \"intermediate_size\": 512, "
                    "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, "
                    "\"swa_num_key_value_heads\": 3, \"hybrid_layer_pattern\": [1, 0], \"sliding_window\": 64, "
                    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096}";
  cr_assert_eq(cfg_model_parse(&m, bad, "b.json", &e), SIM_EINPUT);
  assert_msg_has(&e, "swa_num_key_value_heads");
}

/* Keys servesim does not read are named, never silently ignored: a set key that is neither read nor known not to
 * change memory or cost is listed in the warning; one set to nothing (null, false, 0, "", empty) is not, nor are
 * the keys it reads or knows (token ids, RoPE constants, the router's numerics); the specific warnings of
 * chunked local attention and of a shared indexer name their keys. */
Test(config, unread_keys_are_named) {
  const char *base = "\"model_type\": \"x\", \"hidden_size\": 64, \"intermediate_size\": 128, \"num_hidden_layers\": 4, "
                     "\"num_attention_heads\": 4, \"vocab_size\": 100, \"max_position_embeddings\": 128, "
                     "\"rope_theta\": 10000, \"bos_token_id\": 1, \"scoring_func\": \"sigmoid\"";
  char js[1024];
  model_cfg m;
  sim_err e = {0};
  snprintf(js, sizeof js, "{%s, \"frobnicate_layers\": 3, \"quux\": [1], \"off_a\": 0, \"off_b\": null, "
           "\"off_c\": false, \"off_d\": \"\", \"off_e\": []}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "k.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(strstr(m.unmodelled, "2 keys not read") && strstr(m.unmodelled, "frobnicate_layers, quux"), "%s",
            m.unmodelled);
  cr_assert_null(strstr(m.unmodelled, "off_"), "%s", m.unmodelled);
  cr_assert_null(strstr(m.unmodelled, "rope_theta"), "%s", m.unmodelled);
  snprintf(js, sizeof js, "{%s}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "k.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_str_eq(m.unmodelled, "");
  /* many unknown keys: cut, with the count of the rest */
  char many[2048];
  int len = snprintf(many, sizeof many, "{%s", base);
  for (int i = 0; i < 60; i++) len += snprintf(many + len, sizeof many - (size_t)len, ", \"unknown_key_%02d\": 1", i);
  snprintf(many + len, sizeof many - (size_t)len, "}");
  cr_assert_eq(cfg_model_parse(&m, many, "k.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(strstr(m.unmodelled, "60 keys not read") && strstr(m.unmodelled, "more"), "%s", m.unmodelled);
  snprintf(js, sizeof js, "{%s, \"attention_chunk_size\": 8192, \"index_topk_freq\": 4}", base);
  cr_assert_eq(cfg_model_parse(&m, js, "k.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(strstr(m.unmodelled, "attention_chunk_size 8192") && strstr(m.unmodelled, "index_topk_freq 4"), "%s",
            m.unmodelled);
  cr_assert(cfg_arch_key_known("num_experts_per_token") && cfg_arch_key_known("rope_scaling"));
  cr_assert_not(cfg_arch_key_known("frobnicate_layers"));
}
