/* shard.c: per-GPU shapes under tensor parallelism (see shard.h). */
#include "model/shard.h"

#include <math.h>
#include <string.h>

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

uint32_t shard_vocab(uint32_t vocab, uint32_t tp) { return div_up(div_up(vocab, SHARD_VOCAB_PAD) * SHARD_VOCAB_PAD, tp); }

void shard_from_dims(model_shard *s, uint32_t hidden, uint32_t intermediate, uint32_t q_heads, uint32_t kv_heads,
                     uint32_t head_dim, uint32_t vocab, uint32_t tp) {
  memset(s, 0, sizeof *s);
  SIM_ASSERT(tp >= 1); /* a resolved deployment's (config/settings.c fills the parallel sizes) */
  uint32_t t = tp;
  s->tp = t;
  s->hidden = hidden;
  s->head_dim = head_dim;
  s->q_heads = div_up(q_heads, t);
  s->kv_heads = kv_heads / t ? kv_heads / t : 1;
  s->inter = div_up(intermediate, t);
  s->vocab = shard_vocab(vocab, t);
  s->n[SG_QKV] = (s->q_heads + 2 * s->kv_heads) * head_dim, s->k[SG_QKV] = hidden;
  s->n[SG_O] = hidden, s->k[SG_O] = s->q_heads * head_dim;
  s->n[SG_GATE_UP] = 2 * s->inter, s->k[SG_GATE_UP] = hidden;
  s->n[SG_DOWN] = hidden, s->k[SG_DOWN] = s->inter;
  s->n[SG_LM_HEAD] = s->vocab, s->k[SG_LM_HEAD] = hidden;
}

void shard_init(model_shard *s, const model_cfg *m, uint32_t tp) { shard_init_ep(s, m, tp, 1); }

void shard_init_ep(model_shard *s, const model_cfg *m, uint32_t tp, uint32_t ep) { shard_init_dp(s, m, tp, 1, ep); }

void shard_init_dp(model_shard *s, const model_cfg *m, uint32_t tp, uint32_t dp, uint32_t ep) {
  shard_from_dims(s, m->hidden, m->intermediate, m->q_heads, m->kv_heads, m->head_dim, m->vocab, tp);
  uint32_t t = s->tp;
  s->experts = m->experts, s->topk = m->experts_per_tok;
  SIM_ASSERT(dp >= 1);
  s->dp = dp;
  s->ep = ep > 1 && m->experts ? ep : 1;
  SIM_ASSERT((t * s->dp) % s->ep == 0); /* cfg_resolve: ep divides the MoE layers' dp x tp GPUs */
  s->moe_tp = t * s->dp / s->ep;        /* each expert sliced over the GPUs of its EP group */
  s->local_experts = m->experts / s->ep;
  s->expert_inter = (m->expert_inter + s->moe_tp - 1) / s->moe_tp;
  s->shared_inter = (m->shared_inter + t - 1) / t;
  s->expert_hidden = cfg_model_expert_hidden(m), s->moe_latent = m->moe_latent;
  s->expert_mats = cfg_model_expert_mats(m);
  if (m->attn_out_gate) s->n[SG_QKV] += s->q_heads * m->head_dim;
  if (m->mlp_ungated) s->n[SG_GATE_UP] = s->inter; /* up only (Nemotron-H's relu2 MLP) */
  if (m->mamba) { /* vLLM's MambaMixer2: heads and groups split over TP, n_groups 1 replicated on every rank */
    uint32_t h = (m->mamba_heads + t - 1) / t, g = (m->mamba_groups + t - 1) / t, d = h * m->mamba_head_dim;
    s->lin_v_heads = h, s->lin_k_heads = g;
    s->lin_conv_ch = d + 2 * g * m->ssm_state; /* x, B, C */
    s->lin_in_n = d + s->lin_conv_ch + h, s->lin_in_k = m->hidden; /* z, x B C, dt */
    s->lin_out_n = m->hidden, s->lin_out_k = d;
    s->lin_state_elems = (double)d * m->ssm_state;
    s->lin_conv_elems = (double)(m->lin_conv - 1) * s->lin_conv_ch;
  } else if (m->lin_layers) {
    uint32_t kh = (m->lin_k_heads + t - 1) / t, vh = (m->lin_v_heads + t - 1) / t;
    s->lin_k_heads = kh, s->lin_v_heads = vh;
    s->lin_conv_ch = 2 * kh * m->lin_k_dim + vh * m->lin_v_dim;
    s->lin_in_n = s->lin_conv_ch + vh * m->lin_v_dim + 2 * vh, s->lin_in_k = m->hidden;
    s->lin_out_n = m->hidden, s->lin_out_k = vh * m->lin_v_dim;
    s->lin_state_elems = (double)vh * m->lin_k_dim * m->lin_v_dim;
    s->lin_conv_elems = (double)(m->lin_conv - 1) * s->lin_conv_ch;
  }
  if (m->mla) {
    uint32_t hg = s->q_heads, ql = m->q_lora_rank, rope = m->qk_rope_dim, nope = m->qk_nope_dim;
    s->mla = true;
    s->mla_kv = m->kv_lora_rank + rope;
    s->kv_lora = m->kv_lora_rank, s->v_dim = m->v_head_dim;
    s->kv_heads = hg;
    s->n[SG_QKV] = ql + m->kv_lora_rank + rope, s->k[SG_QKV] = m->hidden; /* replicated */
    s->qb_n = hg * (nope + rope), s->qb_k = ql ? ql : m->hidden;
    if (!ql) s->n[SG_QKV] = m->kv_lora_rank + rope; /* the direct q projection is qb */
    s->kvb_n = hg * (nope + m->v_head_dim), s->kvb_k = m->kv_lora_rank;
    s->n[SG_O] = m->hidden, s->k[SG_O] = hg * m->v_head_dim;
    if (m->attn_out_gate) s->n[SG_QKV] += hg * m->v_head_dim; /* Kimi-K3's gate: K = H, heads split over TP */
    if (m->dsv4) { /* DeepSeek-V4: no kv_b; the grouped low-rank output (wo_a: hg x head_dim -> o_lora_rank in the
                      rank's groups, wo_b: its groups' o_lora_rank -> H) as one GEMM of N = H and the same weights
                      and flops: K = (hg head_dim o_lora + groups o_lora H) / H */
      double groups = div_up(m->o_groups, t), ol = m->o_lora_rank;
      s->kvb_n = 0;
      s->k[SG_O] = (uint32_t)ceil(((double)hg * m->head_dim * ol + groups * ol * m->hidden) / m->hidden);
    }
  }
}

const char *shard_gemm_name(shard_gemm g) {
  static const char *const n[SG_COUNT] = {"qkv", "o", "gate_up", "down", "lm_head"};
  return (unsigned)g < SG_COUNT ? n[g] : "?";
}

uint32_t shard_pp_layers(uint32_t layers, uint32_t pp, uint32_t rank) {
  if (pp <= 1) return layers;
  SIM_ASSERT(rank < pp);
  uint32_t base = layers / pp, rem = layers % pp;
  /* stages pp-2, pp-3, ..., pp-1-rem get one more */
  return base + (rank + 1 < pp && rank + 1 + rem >= pp ? 1u : 0u);
}
