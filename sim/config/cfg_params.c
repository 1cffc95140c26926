/* cfg_params.c: a model's parameter counts from its shapes (cfg_hf.h: cfg_model_params), read by cfg_parse.c's
 * model reader once every key is in: attention by layer kind (MLA, DeepSeek-V4's grouped output, Gemma 4's and
 * MiMo's kinds of their own), dense MLPs by width class, mixture-of-experts blocks, linear-attention and Mamba
 * layers, Nemotron-H's and DeciLM's blocks, embeddings. */
#include "config/cfg_hf.h"

/* The parameter counts of a model read by model_from (doubles: exact below 2^53). */
void cfg_model_params(model_cfg *m) {
  double H = m->hidden, I = m->intermediate, hd = m->head_dim, qh = m->q_heads, kvh = m->kv_heads, V = m->vocab;
  double attn = H * (qh + 2 * kvh) * hd + qh * hd * H + (m->attn_out_gate ? H * qh * hd : 0);
  if (m->mla) { /* q (through the q_lora bottleneck or direct), the latent + RoPE key, kv_b, o */
    double ql = m->q_lora_rank, kl = m->kv_lora_rank, nope = m->qk_nope_dim, rope = m->qk_rope_dim, v = m->v_head_dim;
    double q = ql > 0 ? H * ql + ql * qh * (nope + rope) : H * qh * (nope + rope);
    attn = q + H * (kl + rope) + kl * qh * (nope + v) + qh * v * H;
    if (m->attn_out_gate) attn += H * qh * v; /* Kimi-K3's output gate (mla_use_output_gate) */
    if (m->dsv4) /* no kv_b; the grouped low-rank output: wo_a (heads x head_dim -> o_lora_rank per group), wo_b */
      attn = q + H * (kl + rope) + qh * hd * m->o_lora_rank + (double)m->o_groups * m->o_lora_rank * H;
  }
  double mm = cfg_model_mlp_mats(m); /* 3 (gate, up, down); 2 for an ungated MLP */
  m->params_per_layer_linear = attn + mm * H * I;
  m->params_embedding = V * H;
  m->params_lm_head = m->tied_embeddings ? 0 : V * H;
  double per_layer_other = 2 * H + (m->qkv_bias ? (qh + 2 * kvh) * hd : 0); /* 2 RMSNorms, QKV biases */
  if (m->mla) per_layer_other += (double)m->q_lora_rank + m->kv_lora_rank; /* q_a and kv_a norms */
  double moe_block = cfg_model_moe_block_params(m); /* experts, shared experts, router, latent projections */
  /* Nemotron-H's blocks: a layer without a mixer holds no attention, one without an FFN no MLP, each block one
     RMSNorm (the others' layers two) */
  double attns = (m->layers - m->lin_layers - m->nomix_layers) * attn;
  if (cfg_model_typed_attn(m))
    attns = (m->layers - m->lin_layers - m->nomix_layers - m->sliding_layers) * cfg_model_attn_kind_params(m, false) +
            m->sliding_layers * cfg_model_attn_kind_params(m, true);
  m->params_total = attns +
                    m->lin_layers * cfg_model_lin_layer_params(m) +
                    m->layers * (per_layer_other + cfg_model_dsa_params(m)) +
                    cfg_model_dense_mlp_params(m) +
                    (double)m->moe_layers * moe_block + m->params_embedding + m->params_lm_head + H; /* + final norm */
  if (m->dsv4) /* compressors and indexers, hyper-connections, one attention sink per head */
    m->params_total += m->csa_layers * cfg_model_dsv4_layer_params(m, m->csa_ratio) +
                       m->hca_layers * cfg_model_dsv4_layer_params(m, m->hca_ratio) +
                       m->layers * (cfg_model_hc_params(m) + qh);
  if (m->nomix_layers || m->noffn_layers) m->params_total -= H * (m->nomix_layers + m->noffn_layers);
}
