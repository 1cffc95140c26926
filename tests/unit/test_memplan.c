/* test_memplan.c: weights, KV bytes per token, the KV pool and the refusals of
 * memplan_compute, against numbers computed by hand (Llama-3.1-70B, H200,
 * H100 built in code, a vLLM-like engine: testutil.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "hw/memplan.h"
#include "testutil.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

/* Llama-3.1-70B parameters:
 *   per layer linear: QKV 8192 x 10240 = 83,886,080; O 67,108,864; gate+up 469,762,048; down 234,881,024
 *                     = 855,638,016; x 80 layers = 68,451,041,280
 *   embedding + LM head (untied) 2 x 128256 x 8192 = 2,101,346,304; norms 161 x 8192 = 1,318,912
 *   total 70,553,706,496 params */
#define LINEAR_PARAMS 68451041280.0
#define EMB_NORM_PARAMS (2101346304.0 + 1318912.0)

Test(memplan, weight_bytes_70b_per_dtype) {
  model_cfg m = tu_model_llama70b();
  deploy_cfg d = tu_deploy(1, DT_BF16);
  /* bf16: 70,553,706,496 x 2 = 141,107,412,992 B (the "140 GB" of the classic check) */
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 141107412992.0, 0.5);
  /* fp8: linear 1 B, embeddings and norms 2 B: 68,451,041,280 + 4,205,330,432 = 72,656,371,712 */
  d.weight_dtype = DT_FP8;
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 72656371712.0, 0.5);
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), LINEAR_PARAMS + 2 * EMB_NORM_PARAMS, 0.5);
  /* int4: 0.515625 B per linear weight: 35,295,068,160 + 4,205,330,432 = 39,500,398,592 */
  d.weight_dtype = DT_INT4;
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 39500398592.0, 0.5);
  /* nvfp4: 0.5625 B per linear weight (4 bits + an E4M3 scale per 16): 38,503,710,720 + 4,205,330,432 */
  d.weight_dtype = DT_FP4;
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), LINEAR_PARAMS * 0.5625 + 2 * EMB_NORM_PARAMS, 0.5);
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 42709041152.0, 0.5);
  /* tied embeddings drop one 128256 x 8192 x 2 B tensor */
  m.tied_embeddings = true;
  d.weight_dtype = DT_BF16;
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 141107412992.0 - 2101346304.0, 0.5);
}

Test(memplan, kv_bytes_per_token) {
  model_cfg m = tu_model_llama70b();
  deploy_cfg d = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 327680.0, 0); /* 2*80*8*128*2 */
  d.tp = 4;
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 81920.0, 0); /* 2 kv heads per GPU */
  d.tp = 8;
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 40960.0, 0);
  d.tp = 16; /* KV heads replicated: still one per GPU */
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 40960.0, 0);
  d.tp = 1, d.kv_dtype = DT_FP8;
  cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 163840.0, 0);
}

Test(memplan, h200_tp4_bf16_pool_by_hand) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(4, DT_BF16);
  mem_plan p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert(p.fits);
  /* device 143771 MiB = 150,754,820,096 B; budget x 0.92 = 138,694,434,488.32 */
  cr_assert_float_eq(p.device_bytes, 150754820096.0, 0.5);
  cr_assert_float_eq(p.budget_bytes, 138694434488.32, 0.01);
  /* weights per GPU: (141,107,412,992 - norms 2,637,824) / 4 + norms = 35,278,831,616 */
  cr_assert_float_eq(p.weights_bytes, 35278831616.0, 0.5);
  cr_assert_float_eq(p.weights_total_bytes, 141107412992.0, 0.5);
  /* activation: MLP phase 8192 x 2 x (2*8192 + 3*7168) = 620,756,992 (> attention phase 343,932,928)
   * + logits 1024 x 128256 x 4 = 525,336,576; x 1.2 = 1,375,312,281.6 */
  cr_assert_float_eq(p.activation_bytes, 1375312281.6, 0.01);
  cr_assert_float_eq(p.cuda_graph_bytes, 0.5 * GIB, 0);
  cr_assert_float_eq(p.runtime_bytes, 1.5 * GIB, 0);
  /* kv = 138,694,434,488.32 - 35,278,831,616 - 1,375,312,281.6 - 2 GiB = 99,892,806,942.72 (93.0 GiB) */
  cr_assert_float_eq(p.kv_bytes, 99892806942.72, 0.01);
  cr_assert_float_eq(p.kv_bytes_per_token, 81920.0, 0);
  cr_assert_float_eq(p.kv_bytes_per_block, 16 * 81920.0, 0);
  /* blocks = floor(99,892,806,942.72 / 1,310,720) - 1 = 76,212 - 1 = 76,211 -> 1,219,376 tokens */
  cr_assert_eq(p.kv_blocks, 76211u);
  cr_assert_eq(p.kv_blocks, (uint32_t)floor(p.kv_bytes / (16 * 81920.0)) - 1);
  cr_assert_eq(p.kv_tokens, 1219376u);
  cr_assert_eq(p.block_tokens, 16u);
  cr_assert_eq(p.max_model_len, 131072u);
  cr_assert_float_eq(p.max_concurrency_at_max_len, 1219376.0 / 131072, 1e-12);
  /* fp8 KV: half the bytes per token, twice the blocks (+1 for the null block) */
  d.kv_dtype = DT_FP8;
  mem_plan p8;
  cr_assert_eq(memplan_compute(&p8, &m, &g, &e, &d, &err), SIM_OK);
  cr_assert_eq(p8.kv_blocks, (uint32_t)floor(p.kv_bytes / (16 * 40960.0)) - 1);
  cr_assert(p8.kv_blocks >= 2 * p.kv_blocks);
}

Test(memplan, refuses_70b_bf16_on_one_h100_with_numbers) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h100();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(1, DT_BF16);
  mem_plan p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert_not(p.fits);
  cr_assert_eq(p.kv_blocks, 0u);
  cr_assert_eq(p.kv_tokens, 0u);
  /* 141,107,412,992 B = 131.4 GiB; 81559 MiB = 79.6 GiB; x 0.92 = 73.3 GiB */
  cr_assert_float_eq(p.weights_bytes, 141107412992.0, 0.5);
  cr_assert(strstr(err.msg, "llama-3.1-70b bf16 on 1 x h100-sxm: weights 131.4 GiB per GPU exceed the 73.3 GiB "
                            "budget (79.6 GiB x gpu_memory_utilization 0.92); use a larger "
                            "--tensor-parallel-size, --pipeline-parallel-size or --quantization"),
            "%s", err.msg);
  /* int4 fits on one H100: 39.5 GB of weights */
  d.weight_dtype = DT_INT4;
  d.max_model_len = 8192;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert(p.fits && p.kv_blocks > 0);
}

Test(memplan, refuses_pool_smaller_than_max_model_len) {
  /* 70B bf16 on 2 x H100: 65.7 GiB weights, 73.3 GiB budget, 1.67 GiB activations, 2 GiB graphs+runtime
   * -> 3.89 GiB of KV at 163,840 B per token: floor(4,178,493,696 / 2,621,440) - 1 = 1,592 blocks
   * = 25,472 tokens < 131072 (vLLM refuses to start the same way) */
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h100();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  mem_plan p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert_not(p.fits);
  cr_assert(p.kv_bytes > 3.8 * GIB && p.kv_bytes < 4.0 * GIB);
  cr_assert(strstr(err.msg, "llama-3.1-70b bf16 on 2 x h100-sxm: KV pool holds 25,472 tokens, fewer than "
                            "max_model_len 131072; lower --max-model-len or raise --gpu-memory-utilization"),
            "%s", err.msg);
  d.max_model_len = 16384;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(p.kv_tokens, 25472u);
  cr_assert_float_eq(p.max_concurrency_at_max_len, 25472.0 / 16384, 1e-12);
}

Test(memplan, refuses_when_nothing_is_left_for_kv) {
  /* same deployment at utilization 0.85: budget 67.7 GiB < 65.7 + 1.67 + 2 GiB */
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h100();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(2, DT_BF16);
  d.gpu_memory_utilization = 0.85;
  mem_plan p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_EINPUT);
  cr_assert(p.kv_bytes < 0);
  cr_assert_not(p.fits);
  cr_assert(strstr(err.msg, "no memory left for the KV cache: budget 67.7 GiB - weights 65.7 GiB"), "%s", err.msg);
}

Test(memplan, graph_pool_only_with_graphs_and_unset_fields_from_engine) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(4, DT_FP8);
  mem_plan a, b;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&a, &m, &g, &e, &d, &err), SIM_OK);
  e.cuda_graph_max_batch = 0;
  cr_assert_eq(memplan_compute(&b, &m, &g, &e, &d, &err), SIM_OK);
  cr_assert_float_eq(b.cuda_graph_bytes, 0.0, 0);
  cr_assert_float_eq(b.kv_bytes - a.kv_bytes, 0.5 * GIB, 1e-3);
  /* a smaller token budget shrinks the activation peak */
  d.max_num_batched_tokens = 2048;
  cr_assert_eq(memplan_compute(&b, &m, &g, &e, &d, &err), SIM_OK);
  cr_assert(b.activation_bytes < a.activation_bytes);
}

/* Pipeline parallelism: 70B TP4 x PP2 on H200, stages of 40 layers (vLLM's
 * split). Each stage holds its layers' weights and KV cache, the first the
 * embedding, the last the final norm, LM head and the sampler's logits; each
 * sizes its own pool and vLLM V1 uses the smallest (its workers' KV-cache
 * configs are unified to the minimum number of blocks). By hand:
 *   linear per GPU 855,638,016 / 4 x 2 B x 40 layers = 17,112,760,320
 *   embedding or LM head per GPU 32,064 x 8,192 x 2 B = 525,336,576
 *   norms 80 x 8,192 x 2 B = 1,310,720 (stage 0), 81 x ... = 1,327,104 (stage 1)
 *   stage 0: 17,639,407,616 B, stage 1: 17,639,424,000 B (together TP4's 35,278,831,616)
 *   activations: stage 0 without logits 620,756,992 x 1.2 = 744,908,390.4; stage 1 1,375,312,281.6
 *   KV per token per GPU: 40 x 2 x 2 x 128 x 2 B = 40,960 B, a block 655,360 B
 *   stage 0: 138,694,434,488.32 - 17,639,407,616 - 744,908,390.4 - 2 GiB = 118,162,634,833.92 -> 180,300 blocks
 *   stage 1: 138,694,434,488.32 - 17,639,424,000 - 1,375,312,281.6 - 2 GiB = 117,532,214,558.72 -> 179,338 blocks */
Test(memplan, pipeline_stages_size_their_own_pools) {
  model_cfg m = tu_model_llama70b();
  gpu_cfg g = tu_gpu_h200();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg d = tu_deploy(4, DT_BF16);
  mem_plan one, p;
  sim_err err = {0};
  cr_assert_eq(memplan_compute(&one, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  d.pp = 2;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(p.pp, 2);
  cr_assert_eq(p.stage_layers[0], 40);
  cr_assert_eq(p.stage_layers[1], 40);
  cr_assert_float_eq(p.stage_weights_bytes[0], 17639407616.0, 0.5);
  cr_assert_float_eq(p.stage_weights_bytes[1], 17639424000.0, 0.5);
  cr_assert_float_eq(p.stage_weights_bytes[0] + p.stage_weights_bytes[1], one.weights_bytes, 0.5,
                     "untied: the stages hold TP4's weights once");
  cr_assert_eq(p.stage_kv_blocks[0], 180300u);
  cr_assert_eq(p.stage_kv_blocks[1], 179338u);
  cr_assert_eq(p.binding_stage, 1, "the last stage holds the LM head and the logits");
  cr_assert_eq(p.kv_blocks, 179338u);
  cr_assert_float_eq(p.kv_bytes_per_token, 40960.0, 0);
  cr_assert_float_eq(p.activation_bytes, 1375312281.6, 0.01);
  cr_assert_gt(p.kv_blocks, 2 * one.kv_blocks, "half the layers per GPU: more than twice the tokens");
  /* tied embeddings: the last stage loads its own copy of the LM head */
  m.tied_embeddings = true;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  cr_assert_float_eq(p.stage_weights_bytes[1], 17639424000.0, 0.5);
  /* a stage that cannot hold its weights is named */
  d.pp = 2, d.tp = 1, d.gpu_memory_utilization = 0.5;
  m.tied_embeddings = false;
  gpu_cfg h = tu_gpu_h100();
  cr_assert_eq(memplan_compute(&p, &m, &h, &e, &d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "on 2 x h100-sxm (pipeline stage 0 of 2, 40 layers): weights"), "%s", err.msg);
}

/* A mixture of experts holds every expert: Mixtral-8x7B's 46.7 B parameters
 * are its BF16 weights at 2 bytes each (the router in the activation dtype,
 * bf16 too), and TP2 splits every expert over the two GPUs. */
Test(memplan, mixture_of_experts_weights) {
  model_cfg m;
  sim_err err = {0};
  const char *mixtral = "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                        "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                        "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                        "\"max_position_embeddings\": 32768}";
  cr_assert_eq(cfg_model_parse(&m, mixtral, "mixtral.json", &err), SIM_OK, "%s", err.msg);
  deploy_cfg d = tu_deploy(1, DT_BF16);
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), 2 * m.params_total, 0.5);
  d.weight_dtype = DT_FP8; /* experts and attention in 1 byte; router, embeddings and norms stay 16-bit */
  double router_etc = 32.0 * 4096 * 8 + 2.0 * 32000 * 4096 + (2.0 * 32 + 1) * 4096;
  cr_assert_float_eq(memplan_weight_bytes(&m, &d), m.params_total + router_etc, 0.5);
  gpu_cfg g = tu_gpu_h100();
  engine_cfg e = tu_engine_vllm();
  d = tu_deploy(2, DT_BF16);
  d.max_model_len = 32768;
  mem_plan p;
  cr_assert_eq(memplan_compute(&p, &m, &g, &e, &d, &err), SIM_OK, "%s", err.msg);
  /* per GPU: half of everything but the norms (2 x 32 + 1 of 4096) and the routers (32 of 4096 x 8:
   * vLLM's gate is a ReplicatedLinear), which every GPU holds whole */
  double whole = ((2.0 * 32 + 1) * 4096 + 32.0 * 4096 * 8) * 2;
  cr_assert_float_eq(p.weights_bytes, (2 * m.params_total - whole) / 2 + whole, 1.0);
}

/* Attention data parallelism (vLLM --data-parallel-size with a mixture of
 * experts): each of the dp ranks holds the attention, embeddings and norms
 * whole at its TP (here TP1) and 1/(dp x tp) of every expert (the MoE layers
 * flattened over all ranks); the whole model's weights do not change, and DP2
 * x TP1 holds more per GPU than TP2 by half the attention and embeddings. */
Test(memplan, data_parallel_ranks_share_the_experts) {
  model_cfg m;
  sim_err err = {0};
  const char *mixtral = "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                        "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                        "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                        "\"max_position_embeddings\": 32768}";
  cr_assert_eq(cfg_model_parse(&m, mixtral, "mixtral.json", &err), SIM_OK, "%s", err.msg);
  gpu_cfg g = tu_gpu_h100();
  engine_cfg e = tu_engine_vllm();
  deploy_cfg tp2 = tu_deploy(2, DT_BF16), dp2 = tu_deploy(1, DT_BF16);
  tp2.max_model_len = dp2.max_model_len = 32768;
  dp2.dp = 2;
  cr_assert_float_eq(memplan_weight_bytes(&m, &dp2), memplan_weight_bytes(&m, &tp2), 0.5, "the same model");
  cr_assert_eq(deploy_gpus(&dp2), 2);
  mem_plan a, b;
  cr_assert_eq(memplan_compute(&a, &m, &g, &e, &tp2, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(memplan_compute(&b, &m, &g, &e, &dp2, &err), SIM_OK, "%s", err.msg);
  /* attention (q, k, v, o) and the embedding + LM head: whole on each DP rank, halved at TP2 */
  double attn = 32.0 * 4096 * (4096 + 2 * 1024 + 4096), emb = 2.0 * 32000 * 4096;
  cr_assert_float_eq(b.weights_bytes - a.weights_bytes, (attn + emb) * 2 / 2, 4096.0 * 2,
                     "DP2 x TP1 %.0f vs TP2 %.0f bytes", b.weights_bytes, a.weights_bytes);
}

/* Multi-head latent attention: the KV cache holds the 512-value latent and
 * the 64-value RoPE key per token and layer, the same on every TP rank (vLLM
 * replicates it): DeepSeek-V3/R1 in BF16 takes 61 x 576 x 2 = 70,272 bytes a
 * token on each GPU at any TP. */
Test(memplan, mla_latent_cache_is_replicated) {
  model_cfg m = tu_model_deepseek_v3(false);
  for (uint32_t tp = 1; tp <= 16; tp *= 4) {
    deploy_cfg d = tu_deploy(tp, DT_BF16);
    cr_assert_float_eq(memplan_kv_bytes_per_token(&m, &d), 70272.0, 0, "tp %u", tp);
  }
  deploy_cfg d = tu_deploy(1, DT_FP8);
  /* FP8 weights: about one byte per parameter (embeddings, routers and norms stay 16-bit) */
  double w = memplan_weight_bytes(&m, &d);
  cr_assert(w > m.params_total && w < m.params_total * 1.01, "%.4g bytes for %.4g parameters", w, m.params_total);
}
