/* test_hybrid.c: hybrid models with Gated DeltaNet (linear-attention) layers, Qwen3-Next / Qwen3.5: the config
 * as Hugging Face writes it, the parameter count, the per-sequence state and the KV bytes per token, the memory
 * plan's state reservation by engine rule, the cost model's linear-attention terms, all against numbers
 * computed by hand in the comments. The model is a small one written here (a Qwen3.5 layout: every fourth layer
 * full attention with an output gate). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hw/cost.h"
#include "hw/cost_gemm.h"
#include "hw/cost_inplace.h"
#include "hw/cost_linattn.h"
#include "hw/cost_select.h"
#include "hw/prof.h"
#include "hw/memplan.h"
#include "model/shard.h"
#include "testutil.h"

/* H 2048, 8 layers (6 linear, 2 full), 16 query heads of 256 with an output gate, 2 KV heads; linear: 16 key
 * heads and 32 value heads of 128, conv kernel 4, fp32 state; dense MLP 6144; vocab 1000, untied. */
static const char *const QWEN35_SMALL =
    "{\"text_config\": {\"model_type\": \"qwen3_5_text\", \"hidden_size\": 2048, \"intermediate_size\": 6144, "
    "\"num_hidden_layers\": 8, \"num_attention_heads\": 16, \"num_key_value_heads\": 2, \"head_dim\": 256, "
    "\"attn_output_gate\": true, \"full_attention_interval\": 4, \"layer_types\": [\"linear_attention\", "
    "\"linear_attention\", \"linear_attention\", \"full_attention\", \"linear_attention\", \"linear_attention\", "
    "\"linear_attention\", \"full_attention\"], \"linear_num_key_heads\": 16, \"linear_num_value_heads\": 32, "
    "\"linear_key_head_dim\": 128, \"linear_value_head_dim\": 128, \"linear_conv_kernel_dim\": 4, "
    "\"mamba_ssm_dtype\": \"float32\", \"dtype\": \"bfloat16\", \"vocab_size\": 1000, "
    "\"max_position_embeddings\": 4096, \"tie_word_embeddings\": false}}";

/* A model written here, parsed (the test fails if it does not parse). */
static model_cfg parse_model(const char *text, const char *name) {
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, text, name, &e), SIM_OK, "%s", e.msg);
  return m;
}

static model_cfg small_hybrid(void) { return parse_model(QWEN35_SMALL, "qwen35.json"); }

/* Parameters by hand:
 *   linear mixer: in_proj H (2 kd + 2 vd + 2 vh) = 2048 x (4096 + 8192 + 64) = 25,296,896; out_proj vd H =
 *     8,388,608; conv (2 kd + vd) x 4 = 32,768; A_log, dt_bias 64 and the norm 128 = 192: 33,718,464
 *   full attention with gate: H (16 + 4) 256 + 16 x 256 x H + H x 16 x 256 = 27,262,976
 *   6 x 33,718,464 + 2 x 27,262,976 + 8 x (2 H norms) 32,768 + 8 x 3 H I 301,989,888 + embedding and LM head
 *   4,096,000 + final norm 2,048 = 562,957,440 */
Test(hybrid, gated_deltanet_config_and_parameters) {
  model_cfg m = small_hybrid();
  cr_assert_eq(m.lin_layers, 6);
  cr_assert(m.attn_out_gate);
  cr_assert_eq(cfg_model_lin_layers_in(&m, 0, 4), 3);
  cr_assert_eq(cfg_model_lin_layers_in(&m, 3, 2), 1, "layer 3 full, layer 4 linear");
  cr_assert_eq(m.lin_state_dtype, DT_FP32);
  cr_assert_float_eq(cfg_model_lin_layer_params(&m), 33718464.0, 0);
  cr_assert_float_eq(m.params_total, 562957440.0, 0, "%.0f", m.params_total);
  cr_assert(strstr(m.unmodelled, "6 Gated DeltaNet layers"), "%s", m.unmodelled);
  /* the shapes at TP 2: query heads 8 (+ their gate), linear heads 8 / 16 */
  model_shard s;
  shard_init(&s, &m, 2);
  cr_assert_eq(s.n[SG_QKV], (8 + 8 + 2) * 256u, "q, gate, k, v");
  cr_assert_eq(s.lin_in_n, 2 * 8 * 128 + 2 * 16 * 128 + 2 * 16u);
  cr_assert_eq(s.lin_out_k, 16 * 128u);
  cr_assert_float_eq(s.lin_state_elems, 16.0 * 128 * 128, 0);
  cr_assert_float_eq(s.lin_conv_elems, 3.0 * 4096, 0);
}

/* Missing linear keys and a model of linear layers only are refused, naming the key. */
Test(hybrid, bad_linear_attention_configs) {
  model_cfg m;
  sim_err e = {0};
  char js[2048];
  snprintf(js, sizeof js, "%s", QWEN35_SMALL);
  char *k = strstr(js, "\"linear_conv_kernel_dim\": 4, ");
  cr_assert(k);
  memmove(k, k + strlen("\"linear_conv_kernel_dim\": 4, "), strlen(k + strlen("\"linear_conv_kernel_dim\": 4, ")) + 1);
  cr_assert_eq(cfg_model_parse(&m, js, "q.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "q.json") && strstr(e.msg, "linear_conv_kernel_dim: missing required key"), "%s", e.msg);
  snprintf(js, sizeof js, "%s", QWEN35_SMALL);
  char *v = strstr(js, "\"linear_num_value_heads\": 32");
  memcpy(v, "\"linear_num_value_heads\": 24", strlen("\"linear_num_value_heads\": 24"));
  cr_assert_eq(cfg_model_parse(&m, js, "q.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "linear_num_value_heads") && strstr(e.msg, "not a multiple of linear_num_key_heads 16"),
            "%s", e.msg);
}

/* State per sequence at TP 2: per layer 16 x 128 x 128 fp32 = 1,048,576 B + conv 3 x 4096 bf16 = 24,576 B:
 * 1,073,152 B x 6 layers = 6,438,912 B. KV per token: the 2 full layers only, 2 x 1 head x 256 x 2 B each. */
Test(hybrid, state_and_kv_bytes) {
  model_cfg m = small_hybrid();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&m, &d, 0, 8), 6438912.0, 0);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&m, &d, 3, 1), 0.0, 0, "a full-attention layer holds no state");
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 2048.0, 0);
}

/* The memory plan sets the states aside before cutting the KV pool: for max_num_seqs sequences (engine ratio 0,
 * TensorRT-LLM's rule), or SGLang's split: r / (1 + r) of what is left, as many states as fit, which caps the
 * running batch. What is left for KV and states together is the same either way. */
Test(hybrid, memory_plan_reserves_states_by_engine_rule) {
  model_cfg m = small_hybrid();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  d.max_model_len = 4096;
  mem_plan p, q;
  sim_err err = {0};
  e.state_memory_ratio = 0;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.state_bytes_per_seq, 6438912.0, 0);
  cr_assert_eq(p.state_slots, d.max_num_seqs);
  cr_assert_float_eq(p.state_bytes, d.max_num_seqs * 6438912.0, 0);
  cr_assert_float_eq(p.kv_bytes_per_token, 2048.0, 0);
  e.state_memory_ratio = 0.9;
  cr_assert_eq(memplan_compute(&q, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  double rest = p.kv_bytes + p.state_bytes;
  cr_assert(fabs(q.kv_bytes + q.state_bytes - rest) < 1.0, "the same memory is split");
  cr_assert_eq(q.state_slots, (uint32_t)floor(rest * 0.9 / 1.9 / 6438912.0));
  cr_assert_float_eq(q.state_bytes, q.state_slots * 6438912.0, 0);
  /* a dense model has no states and no cap */
  model_cfg dense = tu_model_llama70b();
  deploy_cfg d4 = tu_deploy(4, DT_BF16);
  cr_assert_eq(memplan_compute(&p, &dense, &g, &e, &d4, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.state_bytes, 0.0, 0);
}

/* The small hybrid at TP 2 on an H200 under vLLM's engine file, its cost model initialized (no profile). */
typedef struct hyb {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
  cost_model c;
} hyb;
static void hyb_init(hyb *h) {
  h->m = small_hybrid(), h->g = tu_gpu_h200(), h->e = tu_engine_vllm(), h->d = tu_deploy(2, DT_BF16);
  sim_err err = {0};
  cr_assert_eq(cost_init(&h->c, &h->m, &h->g, &h->e, &h->d, &err), SIM_OK, "%s", err.msg);
}

/* The cost model: the recurrence's decode call reads and writes each sequence's state once (bytes / HBM x
 * attn_decode_eff), never under its two kernels' floors; the projections of the linear layers and the
 * attention of the full layers only. */
Test(hybrid, cost_terms_by_hand) {
  hyb h;
  hyb_init(&h);
  cost_model *c = &h.c;
  gpu_cfg g = h.g;
  engine_cfg e = h.e;
  double per_seq_layer = 1073152.0;
  double want = 64 * 2.0 * per_seq_layer / (g.hbm_Bps * e.attn_decode_eff) * 1e9;
  cr_assert(fabs(cost__lin_decode(c, 64) - want) < 1e-6 * want, "%.3f vs %.3f ns", cost__lin_decode(c, 64), want);
  cr_assert_float_eq(cost__lin_decode(c, 1), fmax(2.0 * per_seq_layer / (g.hbm_Bps * e.attn_decode_eff) * 1e9,
                                                   2 * c->kernel_floor_ns), 1e-6);
  cost_bound b;
  double pre = cost__lin_prefill(c, 4096, 1, 4096, &b);
  /* 4096 tokens x 16 value heads x 2 (64 (256 + 128) + 2 x 128 x 128) FLOP on the bf16 tensor cores: 2.9 us at
     989 TFLOP/s; one sequence's 64 chunks in order at 3 us each: 192 us, which binds */
  double flops = 4096.0 * 16 * 2 * (64 * 384 + 2 * 128 * 128);
  cr_assert(pre >= flops / (g.flops[DT_BF16] * e.attn_prefill_eff) * 1e9 * (1 - 1e-9), "%.1f ns", pre);
  cr_assert_float_eq(pre, 64 * 3000.0, 1e-6, "%.1f ns", pre);
  /* the same tokens as 64 sequences of one chunk: no long chain; the roofline binds, here the 64 states read
     and written once (64 x 2 x 1,073,152 B = 137.4 MB) and the tokens' q, k, v in and gate, output (4096 x
     (4096 + 4096) x 2 B = 67.1 MB) at the HBM bandwidth x attn_decode_eff */
  double spread = cost__lin_prefill(c, 4096, 64, 64, &b);
  double bytes = 64 * 2 * 1073152.0 + 4096.0 * (4096 + 2 * 16 * 128) * 2;
  cr_assert_float_eq(spread, bytes / (g.hbm_Bps * e.attn_decode_eff) * 1e9, 1e-6, "%.1f ns", spread);
  cr_assert_eq(b, BOUND_MEMORY);
  cr_assert(spread < pre, "%.1f ns", spread);
  /* a decode step of the hybrid costs more attention time than its 2 full layers' calls alone */
  step_cost sc;
  double with = cost_decode_step_ns(c, 64, 2048, &sc);
  cr_assert(with > 0);
  cr_assert(sc.op_ns[OP_ATTN_DECODE] >= 6 * cost__lin_decode(c, 64) * (1 - 1e-9));
  cost_deinit(c);
}

/* The bundled profile companion a test reads (configs/profiles, committed: pinned whatever ../shared holds). */
static prof *bundled(const char *name) {
  char path[1024];
  sim_err err = {0};
  cr_assert_eq(cfg_find(CFG_PROFILE, name, path, sizeof path, &err), SIM_OK, "%s", err.msg);
  prof *p = NULL;
  cr_assert_eq(prof_load(&p, path, &err), SIM_OK, "%s", err.msg);
  return p;
}

/* Gated DeltaNet from the kernel database's gdn_perf (H200, SGLang 0.5.14, bundled companion): the rows checked
 * by hand in h200_sxm/sglang-0.5.14/gdn_perf.csv.gz at the small hybrid's per-GPU shape at TP 2 (8 key and 16
 * value heads of 128, kernel 4; the fastest of the three models measured at it, Qwen3.5-4B's rows):
 *   decode, batch 64:  causal_conv1d_update 0.003201 ms + fused_recurrent_gated_delta_rule_packed_decode
 *                      0.038664 ms = 41.865 us, 41,860 ns at the profile's 4 digits;
 *   prompt, 1 x 4096:  causal_conv1d_fn 0.031006 ms + chunk_gated_delta_rule 0.212569 ms = 243.6 us.
 * Attached, the cost model's linear-attention calls are those cells and a decode step's attention grows by the
 * 6 linear layers' difference from the roofline; another shape (kernel 3) is not attached and keeps it. */
Test(hybrid, gated_deltanet_from_measured_tables) {
  prof *comp = bundled("h200_sglang-0.5.14.moe");
  prof_gdn_key k = {false, 8, 128, 16, 128, 4};
  double ns;
  cr_assert(prof_gdn_ns(comp, &k, 64, 1, &ns));
  cr_assert_float_eq(ns, 41860.0, 1e-6, "%g", ns);
  k.context = true;
  cr_assert(prof_gdn_ns(comp, &k, 1, 4096, &ns));
  cr_assert_float_eq(ns, 243600.0, 1e-6, "%g", ns);
  hyb h;
  hyb_init(&h);
  cost_model *c = &h.c;
  double roof = cost__lin_decode(c, 64);
  step_cost s0, s1;
  cost_decode_step_ns(c, 64, 2048, &s0);
  cr_assert(cost_set_gdn_tables(c, comp), "the shape is measured");
  cr_assert_float_eq(cost__lin_decode(c, 64), 41860.0, 1e-6);
  cost_bound b;
  cr_assert_float_eq(cost__lin_prefill(c, 4096, 1, 4096, &b), 243600.0, 1e-6);
  cost_decode_step_ns(c, 64, 2048, &s1);
  double want = 6 * (41860.0 - roof);
  cr_assert_float_eq(s1.op_ns[OP_ATTN_DECODE] - s0.op_ns[OP_ATTN_DECODE], want, 1e-6 * fabs(want) + 1e-6,
                     "%g vs %g", s1.op_ns[OP_ATTN_DECODE] - s0.op_ns[OP_ATTN_DECODE], want);
  cost_set_gdn_tables(c, NULL);
  cr_assert_float_eq(cost__lin_decode(c, 64), roof, 1e-9);
  h.m.lin_conv = 3;
  cr_assert_not(cost_set_gdn_tables(c, comp), "no table of kernel 3");
  cr_assert_float_eq(cost__lin_decode(c, 64), roof, 1e-9);
  cost_deinit(c);
  prof_free(comp);
}

/* DeepSeek sparse attention (DeepSeek-V3.2's config.json fields that matter): the indexer's weights and key
 * cache by hand, the top-k cap on what the attention reads, the prefill work it keeps. */
Test(hybrid, dsa_indexer_and_topk) {
  const char *v32 = "{\"model_type\": \"deepseek_v32\", \"hidden_size\": 7168, \"intermediate_size\": 18432, "
                    "\"moe_intermediate_size\": 2048, \"num_hidden_layers\": 61, \"num_attention_heads\": 128, "
                    "\"num_key_value_heads\": 128, \"q_lora_rank\": 1536, \"kv_lora_rank\": 512, "
                    "\"qk_nope_head_dim\": 128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, "
                    "\"n_routed_experts\": 256, \"num_experts_per_tok\": 8, \"n_shared_experts\": 1, "
                    "\"first_k_dense_replace\": 3, \"moe_layer_freq\": 1, \"vocab_size\": 129280, "
                    "\"index_topk\": 2048, \"index_n_heads\": 64, \"index_head_dim\": 128, "
                    "\"max_position_embeddings\": 163840, \"tie_word_embeddings\": false}";
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, v32, "v32.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.dsa_topk, 2048);
  /* wq_b 1536 x 64 x 128 = 12,582,912; wk 7168 x 128 = 917,504; head weights 7168 x 64 = 458,752; k_norm 256 */
  cr_assert_float_eq(cfg_model_dsa_params(&m), 13959424.0, 0);
  cr_assert_float_eq(cfg_model_dsa_cache_bytes(&m), 132.0, 0, "128 FP8 values and one FP32 scale");
  deploy_cfg d = tu_deploy(8, DT_BF16);
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 61.0 * (576 * 2 + 132), 0);
  gpu_cfg g = tu_gpu_h200();
  engine_cfg en = tu_engine_vllm();
  cost_model c;
  cr_assert_eq(cost_init(&c, &m, &g, &en, &d, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cost__dsa_decode_ctx(&c, 4, 4 * 1000), 4000u, "contexts under the top-k: all read");
  cr_assert_eq(cost__dsa_decode_ctx(&c, 4, 4 * 10000), 4 * 2048u, "over it: the top-k of each");
  /* a chunk of 4096 after 0 cached: queries 0..2047 read i + 1 keys (2,098,176), the other 2048 read 2048
     (4,194,304): 6,292,480 of the dense 8,390,656 */
  cr_assert_float_eq(cost__dsa_prefill_share(&c, 4096, 0), 6292480.0 / 8390656.0, 1e-12);
  cr_assert_float_eq(cost__dsa_prefill_share(&c, 1000, 0), 1.0, 1e-12, "short prompts are dense");
  /* the indexer of 64 queries over 64 x 32768 keys: the key cache (132 B a key) and the scores (4 B written and
     read) against HBM, vs 2 x 64 x 128 FLOP a pair on the FP8 tensor cores */
  double pairs = 64.0 * 32768;
  double tm = pairs * (132 + 8) / (g.hbm_Bps * en.attn_decode_eff) * 1e9;
  double tc = 2.0 * 64 * 128 * pairs / (g.flops[DT_FP8] * en.attn_prefill_eff) * 1e9;
  cr_assert_float_eq(cost__dsa_index_decode(&c, 64, 64 * 32768ull), fmax(tm, tc), 1e-6);
  cost_deinit(&c);
}

/* ---- Mamba-2 (Nemotron-H) ------------------------------------------------------------------------------------
 * A small Nemotron-H written here: H 1024, 6 layers "M-M-*-" (Mamba-2 at 0 and 2, MLP at 1, 3 and 5, attention
 * at 4), each layer one block; 16 Mamba heads of 64, state 128, 2 groups, conv kernel 4, chunks of 128, an FP32
 * SSM state; 8 query heads / 2 KV heads of 128; relu2 MLP (up and down) of 4096; vocab 1000, untied. */
static const char *const NEMOTRON_H_SMALL =
    "{\"model_type\": \"nemotron_h\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
    "\"num_hidden_layers\": 6, \"hybrid_override_pattern\": \"M-M-*-\", \"num_attention_heads\": 8, "
    "\"num_key_value_heads\": 2, \"head_dim\": 128, \"mamba_num_heads\": 16, \"mamba_head_dim\": 64, "
    "\"ssm_state_size\": 128, \"n_groups\": 2, \"conv_kernel\": 4, \"chunk_size\": 128, \"expand\": 2, "
    "\"mamba_ssm_cache_dtype\": \"float32\", \"mlp_hidden_act\": \"relu2\", \"torch_dtype\": \"bfloat16\", "
    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false}";

static model_cfg small_nemotron_h(void) { return parse_model(NEMOTRON_H_SMALL, "nemotron_h.json"); }

/* Parameters by hand (heads x head_dim d = 1024, B and C 2 x 2 x 128 = 512, conv channels 1536):
 *   Mamba-2 mixer: in_proj H (2 d + 512 + 16) = 1024 x 2576 = 2,637,824; out_proj d H = 1,048,576; conv and its
 *     bias 1536 x 5 = 7,680; A_log, D, dt_bias 48 and the gated norm 1024 = 1,072: 3,695,152
 *   attention: H (8 + 4) 128 + 8 x 128 x H = 2,621,440; MLP (up, down) 2 x H x 4096 = 8,388,608
 *   2 x 3,695,152 + 2,621,440 + 3 x 8,388,608 + 6 blocks' norms 6,144 + embedding and LM head 2,048,000 + final
 *   norm 1,024 = 37,232,736 */
Test(hybrid, nemotron_h_config_and_parameters) {
  model_cfg m = small_nemotron_h();
  cr_assert(m.mamba && m.mlp_ungated);
  cr_assert_eq(m.layers, 6);
  cr_assert_eq(m.lin_layers, 2, "Mamba-2 layers");
  cr_assert_eq(m.nomix_layers, 3, "MLP-only layers");
  cr_assert_eq(m.noffn_layers, 3, "mixer-only layers: 2 Mamba-2, 1 attention");
  cr_assert_eq(cfg_model_lin_layers_in(&m, 1, 2), 1, "layer 2");
  cr_assert_eq(cfg_model_nomix_layers_in(&m, 3, 3), 2, "layers 3 and 5");
  cr_assert_eq(cfg_model_blocks_in(&m, 0, 6), 6u, "one block a layer");
  cr_assert_eq(m.lin_state_dtype, DT_FP32);
  cr_assert_eq(m.lin_conv, 4);
  cr_assert_float_eq(cfg_model_lin_layer_params(&m), 3695152.0, 0);
  cr_assert_float_eq(m.params_total, 37232736.0, 0, "%.0f", m.params_total);
  cr_assert(strstr(m.unmodelled, "2 Mamba-2 layers"), "%s", m.unmodelled);
  deploy_cfg d1 = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_weight_bytes(&m, &d1), 2 * 37232736.0, 0, "the memory plan counts the same weights");
  /* the shapes at TP 2: 8 heads, 1 group; in_proj 2 x 512 + 2 x 128 + 8; the MLP's up only */
  model_shard s;
  shard_init(&s, &m, 2);
  cr_assert_eq(s.lin_in_n, 1288u);
  cr_assert_eq(s.lin_out_k, 512u);
  cr_assert_eq(s.lin_conv_ch, 768u);
  cr_assert_eq(s.n[SG_GATE_UP], 2048u, "relu2: up only, 4096 / 2");
  cr_assert_float_eq(s.lin_state_elems, 8.0 * 64 * 128, 0);
  cr_assert_float_eq(s.lin_conv_elems, 3.0 * 768, 0);
}

/* State per sequence at TP 2, by hand: SSM 8 heads x 64 x 128 x 4 B (FP32) = 262,144 B, conv 3 x 768 x 2 B =
 * 4,608 B: 266,752 B a Mamba-2 layer, 533,504 B for both. KV per token: the one attention layer only,
 * 2 x 1 KV head x 128 x 2 B = 512 B; MLP-only layers hold none. */
Test(hybrid, nemotron_h_state_and_kv_bytes) {
  model_cfg m = small_nemotron_h();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&m, &d, 0, 6), 533504.0, 0);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&m, &d, 3, 3), 0.0, 0, "MLP and attention layers hold no state");
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 512.0, 0);
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  d.max_model_len = 4096;
  mem_plan p;
  sim_err err = {0};
  e.state_memory_ratio = 0;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.kv_bytes_per_token, 512.0, 0);
  cr_assert_float_eq(p.state_bytes, d.max_num_seqs * 533504.0, 0);
  /* a pattern without the SSM cache dtype keeps the model's: bf16 */
  char js[2048];
  snprintf(js, sizeof js, "%s", NEMOTRON_H_SMALL);
  const char *key = "\"mamba_ssm_cache_dtype\": \"float32\", ";
  char *k = strstr(js, key);
  memmove(k, k + strlen(key), strlen(k + strlen(key)) + 1);
  model_cfg b;
  cr_assert_eq(cfg_model_parse(&b, js, "nh.json", &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(b.lin_state_dtype, DT_BF16);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&b, &d, 0, 6), 2 * (65536.0 * 2 + 4608), 0);
}

/* The cost model: the Mamba-2 decode call reads and writes each state once; the prefill's SSD scan from its
 * FLOP and bytes by hand; a step's MLP GEMMs over the 3 MLP layers, its QKV over the one attention layer and
 * the 2 in_proj, one all-reduce per block. */
Test(hybrid, nemotron_h_cost_terms_by_hand) {
  model_cfg m = small_nemotron_h();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  cost_model c;
  sim_err err = {0};
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  double bw = g.hbm_Bps * e.attn_decode_eff;
  cr_assert_float_eq(cost__lin_decode(&c, 64), 64 * 2.0 * 266752.0 / bw * 1e9, 1e-6);
  /* 16384 tokens of one sequence: per token 8 heads (2 x 128 x 64 + 4 x 128 x 64) + 1 group x 2 x 128 x 128 =
     425,984 FLOP (7.0 GFLOP: 14 us on the tensor cores at attn_prefill_eff); bytes: the tokens 16384 x (3 x 768
     + 8 + 512) x 2 B = 92,536,832, the 128 chunk states 128 x 8 x 64 x 128 x (2 x 4 + 2 x 2) B = 100,663,296,
     the final and initial state 2 x 266,752: 193.7 MB, 58 us at 4.8 TB/s x 0.7: memory-bound */
  cost_bound b;
  double pre = cost__lin_prefill(&c, 16384, 1, 16384, &b);
  double bytes = 92536832.0 + 100663296.0 + 2 * 266752.0;
  cr_assert_eq(b, BOUND_MEMORY);
  cr_assert_float_eq(pre, bytes / bw * 1e9, 1e-6, "%.1f ns", pre);
  cr_assert(16384.0 * 425984 / (g.flops[DT_BF16] * e.attn_prefill_eff) * 1e9 < pre);
  /* 64 sequences of 256 tokens: up to 63 more (partial) chunks' states, and 64 states in and out */
  double spread = cost__lin_prefill(&c, 16384, 64, 256, &b);
  double bytes64 = 92536832.0 + (128 + 63) * 8 * 64 * 128 * 12.0 + 64 * 2 * 266752.0;
  cr_assert_float_eq(spread, bytes64 / bw * 1e9, 1e-6, "%.1f ns", spread);
  step_cost sc;
  cost_decode_step_ns(&c, 64, 2048, &sc);
  double up = cost_gemm_ns(&c, OP_GEMM_GATEUP, 64, NULL, NULL), down = cost_gemm_ns(&c, OP_GEMM_DOWN, 64, NULL, NULL);
  cr_assert_float_eq(sc.op_ns[OP_GEMM_GATEUP], 3 * up, 1e-6, "the 3 MLP layers");
  cr_assert_float_eq(sc.op_ns[OP_GEMM_DOWN], 3 * down, 1e-6);
  cr_assert(sc.op_ns[OP_ATTN_DECODE] >= 2 * cost__lin_decode(&c, 64) * (1 - 1e-9));
  cr_assert(sc.op_ns[OP_GEMM_QKV] > cost_gemm_ns(&c, OP_GEMM_QKV, 64, NULL, NULL), "the attention's and in_proj");
  cost_deinit(&c);
}

/* What is not modelled or does not add up is refused, naming the key: MoE blocks without routed experts, a
 * block kind servesim does not know, a pattern whose length is not num_hidden_layers, a TP size that splits the
 * Mamba groups unevenly. */
Test(hybrid, nemotron_refusals) {
  model_cfg m;
  sim_err e = {0};
  char js[2048];
  snprintf(js, sizeof js, "%s", NEMOTRON_H_SMALL);
  char *p = strstr(js, "M-M-*-");
  memcpy(p, "MEM-*E", 6);
  cr_assert_eq(cfg_model_parse(&m, js, "n3.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "n3.json") && strstr(e.msg, "hybrid_override_pattern") &&
                strstr(e.msg, "2 mixture-of-experts blocks but no n_routed_experts"), "%s", e.msg);
  memcpy(p, "M-M-*X", 6);
  cr_assert_eq(cfg_model_parse(&m, js, "n3.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "hybrid_override_pattern") && strstr(e.msg, "block 'X'"), "%s", e.msg);
  memcpy(p, "M-M-*-", 6);
  char *n = strstr(js, "\"num_hidden_layers\": 6");
  n[strlen("\"num_hidden_layers\": ")] = '7';
  cr_assert_eq(cfg_model_parse(&m, js, "n3.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "6 layers, num_hidden_layers says 7"), "%s", e.msg);
  const char *lbt = "{\"model_type\": \"nemotron_h\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
                    "\"num_hidden_layers\": 3, \"layers_block_type\": [\"mamba\", \"moe\", \"attention\"], "
                    "\"num_attention_heads\": 8, \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, "
                    "\"moe_intermediate_size\": 512, \"moe_latent_size\": 256, \"vocab_size\": 1000, "
                    "\"max_position_embeddings\": 4096}";
  cr_assert_eq(cfg_model_parse(&m, lbt, "n3.json", &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "mamba_num_heads") && strstr(e.msg, "missing required key"), "%s", e.msg);
  /* the list form of a dense pattern reads like the string */
  const char *dense = "{\"model_type\": \"nemotron_h\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
                      "\"num_hidden_layers\": 3, \"layers_block_type\": [\"mamba\", \"mlp\", \"attention\"], "
                      "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"mamba_num_heads\": 16, "
                      "\"mamba_head_dim\": 64, "
                      "\"ssm_state_size\": 128, \"n_groups\": 8, \"conv_kernel\": 4, \"chunk_size\": 128, "
                      "\"vocab_size\": 1000, \"max_position_embeddings\": 4096}";
  cr_assert_eq(cfg_model_parse(&m, dense, "n3.json", &e), SIM_OK, "%s", e.msg);
  cr_assert(m.lin_layers == 1 && m.nomix_layers == 1 && m.noffn_layers == 2);
  /* TP 16 splits 8 groups unevenly (vLLM's MambaMixer2 asserts); TP 4 takes 2 of them on each rank */
  gpu_cfg g = tu_gpu_h200();
  engine_cfg en = tu_engine_vllm();
  deploy_cfg d;
  deploy_init(&d);
  d.tp = 16;
  cr_assert_eq(cfg_resolve(&d, &m, &g, &en, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "mamba_num_heads 16 and n_groups 8"), "%s", e.msg);
}

/* ---- Nemotron-3 mixture-of-experts blocks ----------------------------------------------------------------------
 * A small Nemotron-3 written here: NEMOTRON_H_SMALL's Mamba-2, attention and MLP blocks, pattern "MEM*E-" (MoE
 * blocks at 1 and 4); 8 routed experts, top-2, of 512 (ungated relu2: up, down) at a latent width of 256, one
 * shared expert of 1024 at the hidden width, one router group (vLLM nemotron_h.py NemotronHMoE). */
static const char *const NEMOTRON3_SMALL =
    "{\"model_type\": \"nemotron_h\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
    "\"num_hidden_layers\": 6, \"hybrid_override_pattern\": \"MEM*E-\", \"num_attention_heads\": 8, "
    "\"num_key_value_heads\": 2, \"head_dim\": 128, \"mamba_num_heads\": 16, \"mamba_head_dim\": 64, "
    "\"ssm_state_size\": 128, \"n_groups\": 2, \"conv_kernel\": 4, \"chunk_size\": 128, \"expand\": 2, "
    "\"mamba_ssm_cache_dtype\": \"float32\", \"mlp_hidden_act\": \"relu2\", \"torch_dtype\": \"bfloat16\", "
    "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 512, \"n_shared_experts\": 1, "
    "\"moe_shared_expert_intermediate_size\": 1024, \"moe_latent_size\": 256, \"n_group\": 1, \"topk_group\": 1, "
    "\"routed_scaling_factor\": 2.5, \"norm_topk_prob\": true, "
    "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, \"tie_word_embeddings\": false}";

/* Parameters by hand: the Mamba-2 mixers 2 x 3,695,152, the attention 2,621,440, the MLP 8,388,608 (as for
 * NEMOTRON_H_SMALL); an MoE block: routed 8 x 2 x 256 x 512 = 2,097,152, shared 2 x 1024 x 1024 = 2,097,152,
 * router 1024 x 8 = 8,192, latent projections 2 x 1024 x 256 = 524,288: 4,726,784, two of them 9,453,568;
 * 6 blocks' norms 6,144, embedding and LM head 2,048,000, final norm 1,024: 29,909,088. Active: 2 blocks x 6
 * idle experts x 262,144 = 3,145,728 fewer. */
Test(hybrid, nemotron3_moe_config_and_parameters) {
  model_cfg m = parse_model(NEMOTRON3_SMALL, "nemotron3.json");
  cr_assert(m.moe_masked && m.moe_ungated && m.mlp_ungated);
  cr_assert_eq(m.experts, 8);
  cr_assert_eq(m.experts_per_tok, 2);
  cr_assert_eq(m.expert_inter, 512);
  cr_assert_eq(m.shared_inter, 1024, "moe_shared_expert_intermediate_size x n_shared_experts");
  cr_assert_eq(m.moe_latent, 256);
  cr_assert_eq(m.moe_layers, 2);
  cr_assert(cfg_model_is_moe_layer(&m, 1) && cfg_model_is_moe_layer(&m, 4));
  cr_assert(!cfg_model_is_moe_layer(&m, 0) && !cfg_model_is_moe_layer(&m, 5), "a Mamba-2 block, the MLP block");
  cr_assert_eq(cfg_model_moe_layers_in(&m, 2, 4), 1, "layer 4");
  cr_assert_eq(m.lin_layers, 2);
  cr_assert_eq(m.nomix_layers, 3, "2 MoE blocks and the MLP");
  cr_assert_eq(m.noffn_layers, 3);
  cr_assert_float_eq(cfg_model_moe_block_params(&m), 4726784.0, 0);
  cr_assert_float_eq(m.params_total, 29909088.0, 0, "%.0f", m.params_total);
  deploy_cfg d1 = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_weight_bytes(&m, &d1), 2 * 29909088.0, 0, "the memory plan counts the same weights");
  cr_assert_float_eq(memplan_active_weight_bytes(&m, &d1), 2 * (29909088.0 - 3145728.0), 0);
  /* KV: the one attention block only (512 B at TP 2, as NEMOTRON_H_SMALL) */
  deploy_cfg d2 = tu_deploy(2, DT_BF16);
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d2), 512.0, 0);
  /* the shapes at TP 2: each expert's intermediate halved, the shared expert's too, the latent whole */
  model_shard s;
  shard_init(&s, &m, 2);
  cr_assert_eq(s.expert_inter, 256u);
  cr_assert_eq(s.shared_inter, 512u);
  cr_assert_eq(s.expert_hidden, 256u);
  cr_assert_eq(s.moe_latent, 256u);
  cr_assert_float_eq(s.expert_mats, 2.0, 0);
}

/* Weights on one GPU at TP 2 (bf16), by hand: the attention block QKV (4 + 2 x 1) x 128 x 1024 = 786,432 and O
 * 1024 x 512 = 524,288; the MLP up and down 2 x 2048 x 1024 = 4,194,304; an MoE block's 8 experts 8 x 2 x 256 x
 * 256 = 1,048,576, its shared expert 2 x 1024 x 512 = 1,048,576 and the latent projections (replicated)
 * 524,288; the Mamba-2 mixers 2 x (1288 x 1024 + 1024 x 512) and their small weights 2 x (768 x 5 + 24 + 512);
 * the routers 2 x 1024 x 8; the vocabulary 2 x 512 x 1024; 7 norms of 1024 (6 blocks, the final one):
 * (1,310,720 + 4,194,304 + 2 x 2,621,440 + 7,390,304 / 2 + 16,384 + 1,048,576 + 7,168) x 2 B = 31,030,368 B.
 * With expert parallelism over the 2 ranks: 4 whole experts each (4 x 2 x 256 x 512, the same elements). */
Test(hybrid, nemotron3_weights_per_gpu) {
  model_cfg m = parse_model(NEMOTRON3_SMALL, "nemotron3.json");
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  d.max_model_len = 4096;
  mem_plan p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.weights_bytes, 31030368.0, 0, "%.0f", p.weights_bytes);
  d.expert_parallel = true;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.weights_bytes, 31030368.0, 0, "%.0f", p.weights_bytes);
}

/* The step cost of an MoE block at 64 tokens on TP 2 without measured tables: the routed experts' roofline (2
 * matrices of 256 x 256 per expert reached; 8 (1 - (3/4)^64) experts, 128 token-expert pairs), the router GEMM
 * (64 x 8 x 1024), the shared expert's up (N 512) and down, the two latent projections (N 256, K 1024; N 1024,
 * K 256); the decode step counts it once per MoE block. */
Test(hybrid, nemotron3_moe_cost_by_hand) {
  model_cfg m = parse_model(NEMOTRON3_SMALL, "nemotron3.json");
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  cost_model c;
  sim_err err = {0};
  cr_assert_eq(cost_init(&c, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cost_src src;
  cost_bound b;
  double moe = cost__moe_eval(&c, 64, 64, &src, &b);
  cr_assert_eq(src, SRC_ROOFLINE);
  double hit = 8 * (1 - pow(0.75, 64)), pairs = 128, H = 256, I = 256;
  double bytes = hit * 2 * H * I * 2 + pairs * H * (2 + 2) + pairs * I * 2;
  double tc = 2 * pairs * 2 * H * I / (g.flops[DT_BF16] * e.gemm_compute_eff) * 1e9;
  double tm = bytes / (g.hbm_Bps * e.gemm_memory_eff) * 1e9;
  double routed = fmax(tc, tm);
  double gate = cost__gemm_shape_eval(&c, OP_LM_HEAD, 64, 8, 1024, false, &src, &b);
  double shared = cost__gemm_shape_eval(&c, OP_GEMM_GATEUP, 64, 512, 1024, false, &src, &b) +
                  cost__gemm_shape_eval(&c, OP_GEMM_DOWN, 64, 1024, 512, false, &src, &b);
  double latent = cost__gemm_shape_eval(&c, OP_GEMM_GATEUP, 64, 256, 1024, false, &src, &b) +
                  cost__gemm_shape_eval(&c, OP_GEMM_DOWN, 64, 1024, 256, false, &src, &b);
  cr_assert_float_eq(moe, routed + gate + shared + latent, 1e-6, "%.1f ns", moe);
  step_cost sc;
  cost_decode_step_ns(&c, 64, 2048, &sc);
  cr_assert_float_eq(sc.op_ns[OP_MOE], 2 * moe, 1e-6, "the 2 MoE blocks");
  double up = cost_gemm_ns(&c, OP_GEMM_GATEUP, 64, NULL, NULL);
  cr_assert_float_eq(sc.op_ns[OP_GEMM_GATEUP], up, 1e-6, "the one MLP block");
  cost_deinit(&c);
}

/* Inconsistent MoE fields are refused naming the key and the file: routed experts without an MoE block, n_group
 * not dividing the experts, topk_group above n_group, a latent not below the hidden size, shared experts without
 * their size. */
Test(hybrid, nemotron3_moe_refusals) {
  static const struct {
    const char *from, *to, *want;
  } cases[] = {
      {"\"MEM*E-\"", "\"MMM*--\"", "routed experts but hybrid_override_pattern has no mixture-of-experts block"},
      {"\"n_group\": 1", "\"n_group\": 3", "n_group"},
      {"\"topk_group\": 1", "\"topk_group\": 2", "topk_group"},
      {"\"moe_latent_size\": 256", "\"moe_latent_size\": 1024", "moe_latent_size"},
      {"\"moe_shared_expert_intermediate_size\": 1024", "\"moe_shared_expert_intermediate_sizX\": 1024",
       "n_shared_experts"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char js[4096];
    const char *at = strstr(NEMOTRON3_SMALL, cases[i].from);
    cr_assert(at, "%s", cases[i].from);
    snprintf(js, sizeof js, "%.*s%s%s", (int)(at - NEMOTRON3_SMALL), NEMOTRON3_SMALL, cases[i].to,
             at + strlen(cases[i].from));
    model_cfg m;
    sim_err e = {0};
    cr_assert_eq(cfg_model_parse(&m, js, "n3.json", &e), SIM_EINPUT, "%s", cases[i].to);
    cr_assert(strstr(e.msg, "n3.json") && strstr(e.msg, cases[i].want), "%s: %s", cases[i].to, e.msg);
  }
  /* layers_block_type as a list, without num_hidden_layers (Nemotron-3-Ultra's form): its length is the layers */
  char js[4096];
  const char *pat = "\"num_hidden_layers\": 6, \"hybrid_override_pattern\": \"MEM*E-\"";
  const char *at = strstr(NEMOTRON3_SMALL, pat);
  snprintf(js, sizeof js, "%.*s%s%s", (int)(at - NEMOTRON3_SMALL), NEMOTRON3_SMALL,
           "\"layers_block_type\": [\"mamba\", \"moe\", \"mamba\", \"attention\", \"moe\", \"mlp\"]",
           at + strlen(pat));
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, js, "n3.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(m.layers, 6);
  cr_assert_float_eq(m.params_total, 29909088.0, 0);
}
