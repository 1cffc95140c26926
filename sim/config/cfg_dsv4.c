/* cfg_dsv4.c: DeepSeek-V4's attention keys (compress_ratios and what goes with it; cfg.h: dsv4), part of the model
 * reader (cfg_parse.c calls cfg_hf_dsv4 once the heads are read). Sources: the six V4 configs of
 * ../shared/models (their README lists the keys) and the DeepSeek-V4 technical report (arXiv 2606.19348: hybrid
 * CSA / HCA attention over one shared KV vector per token with a 128-token sliding window, a lightning indexer
 * choosing the compressed entries CSA reads, manifold-constrained hyper-connections). */
#include <math.h>
#include <string.h>

#include "config/cfg.h"
#include "config/cfg_hf.h"

static uint32_t in_mask(const model_cfg *m, const uint8_t *mask, uint32_t first, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t i = first; i < first + n && i < m->layers && i < 256; i++) c += (mask[i / 8] >> (i % 8)) & 1u;
  return c;
}

uint32_t cfg_model_csa_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return m->csa_layers ? in_mask(m, m->csa_mask, first, n) : 0;
}

uint32_t cfg_model_hca_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return m->hca_layers ? in_mask(m, m->hca_mask, first, n) : 0;
}

/* A compressor turns `ratio` tokens into one entry: a value projection and a gating projection of the hidden
 * state (softmax-pooled over the group), each `width` wide, and a learned position bias per slot of the group;
 * CSA's compressor runs two overlapping streams (2 x the projections). servesim's reading of the report; no
 * engine code was at hand to check the exact shapes, which make up under 0.5% of the weights. */
static double compressor(const model_cfg *m, uint32_t ratio, double width) {
  double streams = ratio == m->csa_ratio ? 2.0 : 1.0;
  return streams * (2.0 * m->hidden * width + (double)ratio * width) + width; /* + its RMSNorm */
}

double cfg_model_dsv4_layer_params(const model_cfg *m, uint32_t ratio) {
  if (!m->dsv4 || !ratio) return 0;
  double w = compressor(m, ratio, m->head_dim);
  if (ratio == m->csa_ratio) { /* the indexer: queries from the q latent, one weight per head, its own keys */
    double qn = (double)m->dsa_heads * m->dsa_head_dim;
    w += (double)m->q_lora_rank * qn + (double)m->hidden * m->dsa_heads + compressor(m, ratio, m->dsa_head_dim);
  }
  return w;
}

/* mHC (arXiv 2512.24880): before each of a layer's two blocks, the n = hc_mult residual copies (n x H flattened)
 * are projected to the n pre-mixing weights, the n post-mixing weights and the n x n residual mixing matrix,
 * plus a bias and a gate per output. */
double cfg_model_hc_params(const model_cfg *m) {
  if (m->hc_mult <= 1) return 0;
  double n = m->hc_mult, out = n * n + 2.0 * n;
  return 2.0 * (n * m->hidden * out + 2.0 * out);
}

double cfg_model_dsv4_token_bytes(const model_cfg *m, double kv_layer_token, uint32_t first, uint32_t n) {
  if (!m->dsv4) return 0;
  /* the index key in the cache's dtype, as the technical report's 9.62 GiB per 1M-token sequence (BF16) counts it */
  double idx = kv_layer_token * m->dsa_head_dim / m->head_dim;
  return cfg_model_csa_layers_in(m, first, n) * (kv_layer_token + idx) / m->csa_ratio +
         cfg_model_hca_layers_in(m, first, n) * kv_layer_token / m->hca_ratio;
}

/* compress_ratios: one entry per layer (the configs add one for the MTP layer, not read), 0 or one of two
 * positive ratios, the smaller CSA's, the larger HCA's. */
static int ratios_from(const jx *j, const cJSON *cr, model_cfg *m) {
  uint32_t i = 0;
  for (const cJSON *e = cr->child; e && i < m->layers; e = e->next, i++) {
    double x = cJSON_IsNumber(e) ? e->valuedouble : -1;
    if (!(x >= 0 && x <= 65536) || x != floor(x) || i >= 256)
      return jx_fail(j, cr, NULL, "compress_ratios", "entry %u: expected a whole ratio 0 to 65536 (layers < 256)", i);
    uint32_t r = (uint32_t)x;
    if (!r) {
      m->sliding_mask[i / 8] |= (uint8_t)(1u << (i % 8)), m->sliding_layers++;
      continue;
    }
    if (!m->csa_ratio || r == m->csa_ratio) m->csa_ratio = r;
    else if (!m->hca_ratio || r == m->hca_ratio) m->hca_ratio = r;
    else
      return jx_fail(j, cr, NULL, "compress_ratios", "entry %u: a third ratio %u (besides %u and %u)", i, r,
                     m->csa_ratio, m->hca_ratio);
  }
  if (i < m->layers)
    return jx_fail(j, cr, NULL, "compress_ratios", "%u entries for %u layers", i, m->layers);
  if (m->hca_ratio && m->hca_ratio < m->csa_ratio) {
    uint32_t t = m->csa_ratio;
    m->csa_ratio = m->hca_ratio, m->hca_ratio = t;
  }
  i = 0;
  for (const cJSON *e = cr->child; e && i < m->layers; e = e->next, i++) {
    uint32_t r = (uint32_t)e->valuedouble;
    if (r && r == m->csa_ratio) m->csa_mask[i / 8] |= (uint8_t)(1u << (i % 8)), m->csa_layers++;
    else if (r) m->hca_mask[i / 8] |= (uint8_t)(1u << (i % 8)), m->hca_layers++;
  }
  if (m->csa_layers && !m->hca_ratio && m->csa_ratio > 16) /* one ratio only: a large one is HCA's */
    memcpy(m->hca_mask, m->csa_mask, sizeof m->hca_mask), memset(m->csa_mask, 0, sizeof m->csa_mask),
        m->hca_layers = m->csa_layers, m->csa_layers = 0, m->hca_ratio = m->csa_ratio, m->csa_ratio = 0;
  return SIM_OK;
}

int cfg_hf_dsv4(const jx *j, const cJSON *o, model_cfg *m) {
  const cJSON *cr = hf_get(o, "compress_ratios");
  if (!cr) return SIM_OK;
  if (!cJSON_IsArray(cr)) return jx_fail(j, cr, NULL, "compress_ratios", "expected a list, one ratio per layer");
  if (m->mla || m->kv_heads != 1)
    return jx_fail(j, cr, NULL, "compress_ratios", "compressed attention is read with one shared KV head "
                   "(num_key_value_heads 1, no kv_lora_rank), as DeepSeek-V4's");
  int rc;
  uint32_t rope = 0;
  if ((rc = hf_u32(j, o, "qk_rope_head_dim", true, &rope, NULL)) ||
      (rc = hf_u32(j, o, "q_lora_rank", true, &m->q_lora_rank, NULL)) ||
      (rc = hf_u32(j, o, "o_lora_rank", true, &m->o_lora_rank, NULL)) ||
      (rc = hf_u32(j, o, "o_groups", true, &m->o_groups, NULL)) ||
      (rc = hf_u32(j, o, "sliding_window", true, &m->sliding_window, NULL)))
    return rc;
  if (rope >= m->head_dim)
    return jx_fail(j, hf_get(o, "qk_rope_head_dim"), NULL, "qk_rope_head_dim", "%u is not below head_dim %u", rope,
                   m->head_dim);
  if (m->q_heads % m->o_groups)
    return jx_fail(j, hf_get(o, "o_groups"), NULL, "o_groups", "%u does not divide num_attention_heads %u",
                   m->o_groups, m->q_heads);
  if ((rc = ratios_from(j, cr, m))) return rc;
  if (m->csa_layers &&
      ((rc = hf_u32(j, o, "index_topk", true, &m->csa_topk, NULL)) ||
       (rc = hf_u32(j, o, "index_n_heads", true, &m->dsa_heads, NULL)) ||
       (rc = hf_u32(j, o, "index_head_dim", true, &m->dsa_head_dim, NULL))))
    return rc;
  bool have = false;
  if ((rc = hf_u32(j, o, "hc_mult", false, &m->hc_mult, &have))) return rc;
  /* the MLA fields (cfg.h): the shared KV head is the latent, read whole by every query head */
  m->dsv4 = m->mla = true;
  m->kv_lora_rank = m->head_dim - rope, m->qk_rope_dim = rope, m->qk_nope_dim = m->head_dim - rope;
  m->v_head_dim = m->head_dim;
  m->kv_heads = m->q_heads;
  return SIM_OK;
}
