/* cost_dsv4.c: DeepSeek-V4's compressed attention, one layer of a step (see cost_dsv4.h). */
#include "hw/cost_dsv4.h"

#include "hw/cost_gemm.h"
#include "hw/cost_state.h"

/* Sum over the chunk's queries i = 0 .. chunk-1 of min(ctx + i + 1, cap): the keys each reads under a cap. */
static double capped_work(double chunk, double ctx, double cap) {
  double n1 = cap - ctx; /* queries whose whole context is under the cap */
  if (n1 < 0) n1 = 0;
  if (n1 > chunk) n1 = chunk;
  return chunk_work(n1, ctx) + (chunk - n1) * cap;
}

uint64_t cost__dsv4_decode_ctx(const cost_model *c, uint32_t batch, uint64_t ctx_total, uint32_t ratio) {
  const model_cfg *m = c->model;
  if (!ratio) return ctx_total;
  uint64_t win = (uint64_t)batch * m->sliding_window, entries = ctx_total / ratio;
  if (win > ctx_total) win = ctx_total;
  if (ratio == m->csa_ratio && m->csa_topk && entries > (uint64_t)batch * m->csa_topk)
    entries = (uint64_t)batch * m->csa_topk;
  return win + entries;
}

double cost__dsv4_prefill_share(const cost_model *c, uint32_t chunk, uint32_t ctx, uint32_t ratio) {
  const model_cfg *m = c->model;
  double dense = chunk_work(chunk, ctx);
  if (!ratio || dense <= 0) return 1.0;
  /* entries: min((ctx + i + 1) / ratio, topk) summed = capped_work(.., topk x ratio) / ratio */
  double cap = ratio == m->csa_ratio && m->csa_topk ? (double)m->csa_topk * ratio : 1e18;
  double work = capped_work(chunk, ctx, m->sliding_window) + capped_work(chunk, ctx, cap) / ratio;
  return work < dense ? work / dense : 1.0;
}

static double index_ns(const cost_model *c, double pairs, double keys_read) {
  const model_cfg *m = c->model;
  const engine_cfg *e = c->engine;
  double peak = c->gpu->flops[DT_FP8] > 0 ? c->gpu->flops[DT_FP8] : c->gpu->flops[c->deploy->act_dtype];
  double key_b = m->dsa_head_dim * dtype_bytes(c->deploy->kv_dtype); /* as the memory plan holds it */
  double tc = ns_of(2.0 * m->dsa_heads * m->dsa_head_dim * pairs, peak * e->attn_prefill_eff);
  double tm = ns_of(keys_read * key_b + pairs * 4.0 * 2.0, c->gpu->hbm_Bps * e->attn_decode_eff);
  double t = tc > tm ? tc : tm, floor = 2.0 * c->kernel_floor_ns; /* the logits and the top-k kernels */
  return t > floor ? t : floor;
}

double cost__dsv4_index_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total) {
  if (!c->model->csa_layers || !batch) return 0;
  double keys = (double)(ctx_total / c->model->csa_ratio);
  return index_ns(c, keys, keys);
}

double cost__dsv4_index_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx) {
  if (!c->model->csa_layers || !chunk) return 0;
  double r = c->model->csa_ratio;
  return index_ns(c, chunk_work(chunk, ctx) / r, ((double)ctx + chunk) / r);
}

double cost__dsv4_proj_ns(const cost_model *c, uint32_t T, cost_bound *bound) {
  const model_cfg *m = c->model;
  cost_src s;
  cost_bound b1 = BOUND_MEMORY, b2 = BOUND_MEMORY, b3 = BOUND_MEMORY;
  double csa = 0, hca = 0;
  if (m->csa_layers) /* two overlapping streams of value and gate, for the KV and for the index keys; head weights */
    csa = cost__gemm_shape_eval(c, OP_GEMM_QKV, T, 4 * m->head_dim + 4 * m->dsa_head_dim + m->dsa_heads, m->hidden,
                                false, &s, &b1) +
          cost__gemm_shape_eval(c, OP_GEMM_QKV, T, m->dsa_heads * m->dsa_head_dim, m->q_lora_rank, false, &s, &b2);
  if (m->hca_layers) hca = cost__gemm_shape_eval(c, OP_GEMM_QKV, T, 2 * m->head_dim, m->hidden, false, &s, &b3);
  *bound = m->csa_layers * csa >= m->hca_layers * hca ? b1 : b3;
  (void)b2;
  return m->csa_layers * csa + m->hca_layers * hca;
}
