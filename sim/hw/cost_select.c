/* cost_select.c: which measured tables serve which operation of the cost
 * model (cost_select.h) and what they include: the tables attached beside
 * the own profile (sliding-window attention, another version's attention
 * tables, the MLA attention modules a deployment can take), the plausibility
 * check of block-scaled FP8 GEMM grids, the floors a profile measures, the
 * input quantization its FP8 GEMM table includes, and the memo reset when
 * they change. A part cost.c calls; it calls nothing of cost.c.
 *
 * FP8 input quantization. An FP8 (W8A8 per-tensor) linear quantizes its
 * 16-bit input before the GEMM. With the checkpoint's static activation scale
 * that is one elementwise kernel, or nothing where the engine fuses it into
 * the kernel before (RMSNorm, the all-reduce, the attention output); without
 * one the scale is computed first (an amax reduction, then the quantize: two
 * or three kernels). A kernel-db table times the whole linear as its collector
 * built it, and AIConfigurator's TensorRT-LLM collector loads no input scale
 * (collector/trtllm/collect_gemm.py gives `weight` and `weight_scale` only,
 * so TensorRT-LLM's FP8QDQLinearMethod quantizes dynamically): its FP8 table
 * is 9.4-11.6 us slower than its BF16 table at 1 x 128 x 128 on every GPU (H200:
 * 12.1 vs 2.7 us) and about as much above half the BF16 time where the
 * weights dominate (H200, 4 x 10240 x 10240: 39.3 us, BF16 59.1 us). vLLM
 * 0.24.0's collector uses a static scale (Fp8Config activation_scheme
 * "static"): 1.9 us above BF16 there. So the table's per-call quantization is
 * q = T_fp8(1,128,128) - T_bf16(1,128,128) (the two tiny GEMMs taken as equal),
 * the engine's with a static scale one kernel floor T_bf16(1,128,128), and an
 * engine file with fp8_static_activation_scale has every FP8 GEMM of the table
 * lowered by q - floor = T_fp8 - 2 T_bf16 (H200 TensorRT-LLM: 6.7 us; 0 for
 * vLLM 0.24.0's tables). The amax pass's bandwidth at large M (it reads the
 * 2-byte input once more: 28 us of an 8192 x 8192 x 8192 GEMM's ~0.9 ms on
 * H200) is left in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cost_select.h"

#include "hw/cost_state.h"

bool cost_block_gemm_check(const prof *p, double *ratio) {
  double tb, tt;
  *ratio = 0;
  if (!p || !prof_gemm_block_ns(p, 1, 4096, 4096, &tb) || !prof_gemm_ns(p, DT_FP8, DT_FP8, 1, 4096, 4096, &tt) ||
      !(tt > 0))
    return false;
  *ratio = tb / tt;
  return *ratio <= COST_BLOCK_CHECK_RATIO;
}

void cost__floors_from(cost_model *c, const prof *p) {
  double ns;
  if (prof_gemm_ns(p, c->deploy->act_dtype, c->deploy->act_dtype, 1, 128, 128, &ns) && ns > 0) c->kernel_floor_ns = ns;
  const model_shard *s = &c->shard;
  if (prof_attn_decode_ns(p, c->deploy->kv_dtype, 1, 2, s->q_heads, s->kv_heads, s->head_dim, &ns) && ns > 0)
    c->attn_floor_ns = ns;
}

double cost__fp8_requant_ns(const cost_model *c, const prof *p) {
  double t8, t16;
  if (!p || !c->engine->fp8_static_act_scale || !prof_gemm_ns(p, DT_FP8, DT_FP8, 1, 128, 128, &t8) ||
      !prof_gemm_ns(p, DT_BF16, DT_BF16, 1, 128, 128, &t16))
    return 0;
  double q = t8 - 2.0 * t16;
  return q > 0 ? q : 0;
}

bool cost_set_mla_modules(cost_model *c, const prof *p) {
  c->mla_module = false;
  c->mla_prof = NULL;
  const model_cfg *m = c->model;
  const char *gemm = NULL;
  switch (c->deploy->weight_dtype) {
    case DT_BF16:
    case DT_FP16: gemm = "bfloat16"; break;
    case DT_FP8: gemm = m->fp8_block ? "fp8_block" : NULL; break;
    case DT_FP4: gemm = "nvfp4"; break;
    default: break;
  }
  if (m->attn_unquantized) gemm = "bfloat16"; /* the checkpoint keeps its attention in the activation dtype */
  double g1, x1;
  if (p && c->shard.mla && gemm) {
    prof_mla_key k;
    memset(&k, 0, sizeof k);
    k.kv_dtype = c->deploy->kv_dtype;
    snprintf(k.gemm, sizeof k.gemm, "%s", gemm);
    k.heads = c->shard.q_heads;
    k.dims = (prof_mla_dims){m->hidden, m->q_lora_rank, m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim, m->v_head_dim};
    k.topk = m->dsa_topk; /* a sparse-attention model's blocks: the dsa_* modules (indexer and top-k inside) */
    c->mla_gen = k;
    k.context = true;
    c->mla_ctx = k;
    if (prof_mla_module_ns(p, &c->mla_gen, 1, 1, &g1) && prof_mla_module_ns(p, &c->mla_ctx, 1, 1, &x1)) {
      c->mla_module = true;
      c->mla_prof = p;
      c->mla_floor_ns = g1;
    }
  }
  cost__memo_clear(c);
  return c->mla_module;
}

bool cost_set_gdn_tables(cost_model *c, const prof *p) {
  const model_cfg *m = c->model;
  bool ok = false;
  if (!p) c->gdn_prof = NULL;
  else if (m->lin_layers && !m->mamba && !m->kda) {
    prof_gdn_key g = {false, c->shard.lin_k_heads, m->lin_k_dim, c->shard.lin_v_heads, m->lin_v_dim, m->lin_conv};
    prof_gdn_key x = g;
    x.context = true;
    double ns;
    ok = prof_gdn_ns(p, &g, 1, 1, &ns) && prof_gdn_ns(p, &x, 1, 1, &ns);
    if (ok) c->gdn_prof = p, c->gdn_gen = g, c->gdn_ctx = x;
  }
  cost__memo_clear(c);
  return ok;
}

void cost_set_window_tables(cost_model *c, const prof *const *p, int n) {
  c->n_win_alt = 0;
  for (int i = 0; i < n && i < 5; i++) c->win_alt[c->n_win_alt++] = p[i];
  cost__memo_clear(c);
}

bool cost_attention_covered(const cost_model *c, const prof *p) {
  const model_shard *s = &c->shard;
  double ns;
  sim_dtype kvd = c->deploy->kv_dtype;
  return p && !s->mla &&
         prof_attn_decode_ns(p, kvd, 1, 1024, s->q_heads, s->kv_heads, s->head_dim, &ns) &&
         prof_attn_context_ns(p, kvd, 1, 1024, s->q_heads, s->kv_heads, s->head_dim, &ns);
}

void cost_set_attention_alternate(cost_model *c, const prof *p) {
  c->attn_alt = p;
  cost__memo_clear(c);
}

void cost__memo_clear(cost_model *c) {
  for (int g = 0; g < 2; g++) {
    for (size_t i = 0; i < c->memo_top[g]; i++) c->memo[g][i].valid = false;
    c->memo_top[g] = 0;
  }
  free(c->dec_memo);
  c->dec_memo = NULL;
  free(c->dec_step);
  c->dec_step = NULL;
  c->dec_hits = c->dec_misses = 0;
}
