/* test_arch_v4k3.c: DeepSeek-V4's compressed attention (compress_ratios: CSA, HCA and window-only layers) and
 * Kimi Delta Attention (Kimi-K3's linear_attn_config) on small models written here: the config as the released
 * files write it, the parameter count, the KV and state bytes, the cost model's DeepSeek-V4 terms and the
 * refusals of malformed keys, all against numbers computed by hand in the comments. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hw/cost.h"
#include "hw/cost_dsv4.h"
#include "hw/cost_inplace.h"
#include "hw/memplan.h"
#include "model/shard.h"
#include "testutil.h"

/* H 256, 5 layers: ratios 0 (window only), 4 (CSA), 128 (HCA), 4, 128 (and an MTP entry, not read); 8 query
 * heads of 64 over one KV head, RoPE 16, q_lora 32, o_lora 32 in 2 groups, window 8; indexer 4 heads of 32, top
 * 16; hyper-connections 2 wide; 4 experts top-2 of 64 plus one shared, every layer MoE; vocab 1000, untied. */
static const char *const V4_SMALL =
    "{\"model_type\": \"deepseek_v4\", \"hidden_size\": 256, \"num_hidden_layers\": 5, \"num_attention_heads\": 8, "
    "\"num_key_value_heads\": 1, \"head_dim\": 64, \"qk_rope_head_dim\": 16, \"q_lora_rank\": 32, "
    "\"o_lora_rank\": 32, \"o_groups\": 2, \"sliding_window\": 8, \"compress_ratios\": [0, 4, 128, 4, 128, 0], "
    "\"index_topk\": 16, \"index_n_heads\": 4, \"index_head_dim\": 32, \"hc_mult\": 2, \"n_routed_experts\": 4, "
    "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, \"n_shared_experts\": 1, \"vocab_size\": 1000, "
    "\"max_position_embeddings\": 4096, \"torch_dtype\": \"bfloat16\", \"tie_word_embeddings\": false}";

static model_cfg parse_model(const char *text, const char *name) {
  model_cfg m;
  sim_err e = {0};
  cr_assert_eq(cfg_model_parse(&m, text, name, &e), SIM_OK, "%s", e.msg);
  return m;
}

/* A replacement in a config written here: `from` (found in base) becomes `to`. */
typedef struct edit {
  const char *from, *to, *says;
} edit;

/* Each edit of base is refused, the message naming the file and saying what it says. */
static void assert_refused(const char *base, const char *file, const edit *bad, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char js[2048];
    const char *at = strstr(base, bad[i].from);
    cr_assert(at, "%s", bad[i].from);
    snprintf(js, sizeof js, "%.*s%s%s", (int)(at - base), base, bad[i].to, at + strlen(bad[i].from));
    model_cfg m;
    sim_err e = {0};
    cr_assert_eq(cfg_model_parse(&m, js, file, &e), SIM_EINPUT, "%s", bad[i].to);
    cr_assert(strstr(e.msg, file) && strstr(e.msg, bad[i].says), "%s", e.msg);
  }
}

/* Parameters by hand:
 *   attention: wq_a 256 x 32 + wq_b 32 x 8 x 64 = 24,576; wkv 256 x 64 = 16,384; wo_a 8 x 64 x 32 = 16,384;
 *     wo_b 2 x 32 x 256 = 16,384: 73,728 a layer; norms 2 H + q_lora + (head_dim - rope) = 592
 *   MoE: 4 x 3 x 256 x 64 + 3 x 256 x 64 + router 256 x 4 = 246,784
 *   CSA extras: compressor 2 streams x (2 x 256 x 64 + 4 x 64) + 64 = 66,112; indexer wq_b 32 x 128 = 4,096,
 *     head weights 256 x 4 = 1,024, its compressor 2 x (2 x 256 x 32 + 4 x 32) + 32 = 33,056: 104,288
 *   HCA extras: 2 x 256 x 64 + 128 x 64 + 64 = 41,024
 *   hyper-connections (n 2: n^2 + 2n = 8 outputs): 2 x (2 x 256 x 8 + 16) = 8,224, sinks 8: 8,232 a layer
 *   5 x (73,728 + 592 + 246,784 + 8,232) + 2 x 104,288 + 2 x 41,024 + embedding and LM head 512,000 + final norm
 *   256 = 2,449,560 */
Test(arch_v4k3, deepseek_v4_config_and_parameters) {
  model_cfg m = parse_model(V4_SMALL, "v4.json");
  cr_assert(m.dsv4 && m.mla);
  cr_assert_eq(m.csa_layers, 2);
  cr_assert_eq(m.hca_layers, 2);
  cr_assert_eq(m.sliding_layers, 1);
  cr_assert_eq(m.csa_ratio, 4);
  cr_assert_eq(m.hca_ratio, 128);
  cr_assert_eq(cfg_model_csa_layers_in(&m, 0, 2), 1, "layer 1 is CSA");
  cr_assert_eq(cfg_model_hca_layers_in(&m, 2, 3), 2, "layers 2 and 4 are HCA");
  cr_assert_eq(m.kv_lora_rank, 48);
  cr_assert_eq(m.dsa_topk, 0, "V4's indexer is not the DSA one of every layer");
  cr_assert_float_eq(cfg_model_dsv4_layer_params(&m, 4), 104288.0, 0);
  cr_assert_float_eq(cfg_model_dsv4_layer_params(&m, 128), 41024.0, 0);
  cr_assert_float_eq(cfg_model_hc_params(&m), 8224.0, 0);
  cr_assert_float_eq(m.params_total, 2449560.0, 0, "%.0f", m.params_total);
  cr_assert(strstr(m.unmodelled, "compress_ratios") && strstr(m.unmodelled, "a residual stream 2 wide"), "%s",
            m.unmodelled);
  /* TP 2: 4 heads a rank, one group: wo as one GEMM of the same weights, K = (4 x 64 x 32 + 32 x 256) / 256 */
  model_shard s;
  shard_init(&s, &m, 2);
  cr_assert_eq(s.k[SG_O], 64u);
  cr_assert_eq(s.kvb_n, 0u, "no kv_b");
  cr_assert_eq(s.n[SG_QKV], 32 + 64u, "wq_a and wkv, whole on every rank");
}

/* KV bytes per token, BF16, TP 1: the shared vector 64 x 2 = 128 B; CSA (128 + its index key 32 x 2 = 64) / 4 =
 * 48 each, HCA 128 / 128 = 1 each: 2 x 48 + 2 x 1 = 98; the ratio-0 layer holds only its window. */
Test(arch_v4k3, deepseek_v4_kv_bytes) {
  model_cfg m = parse_model(V4_SMALL, "v4.json");
  deploy_cfg d = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 98.0, 0);
  cr_assert_float_eq(cfg_model_dsv4_token_bytes(&m, 128.0, 1, 1), 48.0, 0);
}

/* What a query reads: decode of 4 sequences over 4,000 tokens: the windows 4 x 8 = 32 and, CSA, min(4000 / 4,
 * 4 x 16) = 64 entries: 96; HCA 4000 / 128 = 31 entries: 63; 4 short sequences of 5 tokens: windows 20, CSA
 * entries 5: 25. A prefill chunk of 100 after nothing: dense work 5,050 (100 x 101 / 2); windows: queries 0..7
 * read i + 1 (36), the other 92 read 8 (736): 772; CSA entries min((i + 1) / 4, 16) summed: (2,080 + 36 x 64) /
 * 4 = 1,096; share 1,868 / 5,050. The indexer: 64 decode queries over 64 x 4,096 tokens score 65,536 index keys. */
Test(arch_v4k3, deepseek_v4_cost_terms) {
  model_cfg m = parse_model(V4_SMALL, "v4.json");
  deploy_cfg d = tu_deploy(1, DT_BF16);
  gpu_cfg g = tu_gpu_h200();
  engine_cfg en = tu_engine_vllm();
  cost_model c;
  sim_err e = {0};
  cr_assert_eq(cost_init(&c, &m, &g, &en, &d, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(cost__dsv4_decode_ctx(&c, 4, 4000, 4), 96u);
  cr_assert_eq(cost__dsv4_decode_ctx(&c, 4, 4000, 128), 63u);
  cr_assert_eq(cost__dsv4_decode_ctx(&c, 4, 20, 4), 25u);
  cr_assert_float_eq(cost__dsv4_prefill_share(&c, 100, 0, 4), 1868.0 / 5050.0, 1e-12);
  double keys = 65536.0, tm = keys * (64 + 8) / (g.hbm_Bps * en.attn_decode_eff) * 1e9;
  double tc = 2.0 * 4 * 32 * keys / (g.flops[DT_FP8] * en.attn_prefill_eff) * 1e9;
  double fl = 2.0 * c.kernel_floor_ns;
  cr_assert_float_eq(cost__dsv4_index_decode(&c, 64, 64 * 4096ull), fmax(fmax(tm, tc), fl), 1e-6);
  /* a decode step's attention grows with the context (the HCA entries and the CSA indexer's keys) */
  batch_desc b = {0};
  b.num_tokens = b.num_seqs = b.num_decode = b.num_sample = 8, b.decode_ctx_tokens = 8 * 2048;
  step_cost short_ctx, long_ctx;
  cost_step(&c, &b, &short_ctx);
  b.decode_ctx_tokens = 8 * 1048576ull;
  cost_step(&c, &b, &long_ctx);
  cr_assert_gt(long_ctx.op_ns[OP_ATTN_DECODE], short_ctx.op_ns[OP_ATTN_DECODE]);
  cost_deinit(&c);
}

Test(arch_v4k3, deepseek_v4_refusals) {
  static const edit bad[] = {
      {"[0, 4, 128, 4, 128, 0]", "[0, 4, 128, 16, 128]", "a third ratio 16"},
      {"[0, 4, 128, 4, 128, 0]", "[4, 128]", "2 entries for 5 layers"},
      {"[0, 4, 128, 4, 128, 0]", "[0, 4, 128, 4, -1]", "expected a whole ratio"},
      {"\"num_key_value_heads\": 1", "\"num_key_value_heads\": 2", "one shared KV head"},
      {"\"o_groups\": 2", "\"o_groups\": 3", "does not divide num_attention_heads"},
      {"\"qk_rope_head_dim\": 16", "\"qk_rope_head_dim\": 64", "is not below head_dim"},
  };
  assert_refused(V4_SMALL, "v4.json", bad, sizeof bad / sizeof bad[0]);
}

/* ---- Kimi Delta Attention --------------------------------------------------------------------------------------
 * H 256, 4 layers under text_config: KDA at 1, 2, 3 and MLA at 4 (1-based, as Kimi-K3 numbers them), 4 KDA heads
 * of 32, conv 4; MLA 4 heads, q_lora 48, kv_lora 32, nope 16, rope 8, v 16, with its output gate; the first layer
 * dense (512), then 8 experts top-2 (num_experts_per_token) of 64 at a latent width of 128, one shared. */
static const char *const KDA_SMALL =
    "{\"model_type\": \"kimi_k3\", \"text_config\": {\"model_type\": \"kimi_linear\", \"hidden_size\": 256, "
    "\"intermediate_size\": 512, \"num_hidden_layers\": 4, \"num_attention_heads\": 4, \"num_key_value_heads\": 4, "
    "\"kv_lora_rank\": 32, \"q_lora_rank\": 48, \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, "
    "\"v_head_dim\": 16, \"mla_use_output_gate\": true, \"linear_attn_config\": {\"kda_layers\": [1, 2, 3], "
    "\"full_attn_layers\": [4], \"num_heads\": 4, \"head_dim\": 32, \"short_conv_kernel_size\": 4}, "
    "\"num_experts\": 8, \"num_experts_per_token\": 2, \"num_shared_experts\": 1, \"moe_intermediate_size\": 64, "
    "\"routed_expert_hidden_size\": 128, \"first_k_dense_replace\": 1, \"vocab_size\": 1000, "
    "\"max_position_embeddings\": 4096, \"dtype\": \"bfloat16\", \"tie_word_embeddings\": false}}";

/* Parameters by hand:
 *   KDA layer: in_proj 256 x (2 x 128 + 2 x 128 + 8) = 133,120 (q, k, v, the output gate; beta and a GDN a);
 *     out_proj 128 x 256 = 32,768; conv 384 x 4 = 1,536; A_log, dt_bias 8 and the norm 32 = 40; the decay's
 *     low-rank f_a 256 x 32 + f_b 32 x 128 = 12,288: 179,752
 *   MLA layer: q 256 x 48 + 48 x 4 x 24 = 16,896; latent 256 x 40 = 10,240; kv_b 32 x 4 x 32 = 4,096; o 4 x 16 x
 *     256 = 16,384; gate 256 x 64 = 16,384: 64,000
 *   norms 4 x (512 + 48 + 32) = 2,368; dense MLP 3 x 256 x 512 = 393,216; MoE 3 x (8 x 3 x 128 x 64 + 3 x 256 x
 *     64 + router 2,048 + latent 2 x 256 x 128) = 3 x 313,344 = 940,032; embedding and LM head 512,000; norm 256
 *   64,000 + 3 x 179,752 + 2,368 + 393,216 + 940,032 + 512,000 + 256 = 2,451,128
 * State a sequence and KDA layer (bf16, TP 1): 4 x 32 x 32 x 2 = 8,192 + conv 3 x 384 x 2 = 2,304: 10,496, x 3.
 * KV per token: the MLA layer's (32 + 8) x 2 = 80. */
Test(arch_v4k3, kimi_delta_attention_config_and_sizes) {
  model_cfg m = parse_model(KDA_SMALL, "k3.json");
  cr_assert(m.kda && m.mla && m.attn_out_gate);
  cr_assert_eq(m.lin_layers, 3);
  cr_assert_eq(cfg_model_lin_layers_in(&m, 0, 3), 3, "1-based 1..3 are layers 0..2");
  cr_assert_eq(cfg_model_lin_layers_in(&m, 3, 1), 0);
  cr_assert_eq(m.experts_per_tok, 2);
  cr_assert_eq(m.shared_inter, 64);
  cr_assert_eq(m.moe_latent, 128);
  cr_assert_eq(m.moe_layers, 3);
  cr_assert_float_eq(cfg_model_lin_layer_params(&m), 179752.0, 0);
  cr_assert_float_eq(m.params_total, 2451128.0, 0, "%.0f", m.params_total);
  cr_assert(strstr(m.unmodelled, "3 Kimi Delta Attention layers"), "%s", m.unmodelled);
  deploy_cfg d = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_state_bytes_per_seq(&m, &d, 0, 4), 3 * 10496.0, 0);
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 80.0, 0);
}

Test(arch_v4k3, kimi_delta_attention_refusals) {
  static const edit bad[] = {
      {"\"num_heads\": 4, ", "", "num_heads: missing required key"},
      {"[1, 2, 3]", "[1, 2, 5]", "expected layer numbers 1 to 4"},
      {"[1, 2, 3]", "[1, 2, 2]", "layer 2 is listed twice"},
      {"[1, 2, 3]", "[1, 2]", "name 3 of the 4 layers"},
      {"[1, 2, 3], \"full_attn_layers\": [4]", "[1, 2, 3, 4], \"full_attn_layers\": []",
       "a model of only one kind of layer"},
      {"\"routed_expert_hidden_size\": 128", "\"routed_expert_hidden_size\": 512", "above hidden_size"},
  };
  assert_refused(KDA_SMALL, "k3.json", bad, sizeof bad / sizeof bad[0]);
}
