/* cost_select.c: which measured tables serve which operation of the cost
 * model (cost.h): the plausibility check of block-scaled FP8 GEMM grids, the
 * MLA attention modules a deployment can take, and the memo reset when they
 * change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cost.h"
#include "hw/cost_impl.h"

bool cost_block_gemm_check(const prof *p, double *ratio) {
  double tb, tt;
  *ratio = 0;
  if (!p || !prof_gemm_block_ns(p, 1, 4096, 4096, &tb) || !prof_gemm_ns(p, DT_FP8, DT_FP8, 1, 4096, 4096, &tt) ||
      !(tt > 0))
    return false;
  *ratio = tb / tt;
  return *ratio <= COST_BLOCK_CHECK_RATIO;
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

void cost__memo_clear(cost_model *c) {
  for (int g = 0; g < 2; g++)
    for (size_t i = 0; i < c->memo_len; i++) c->memo[g][i].valid = false;
  free(c->dec_memo);
  c->dec_memo = NULL;
}
