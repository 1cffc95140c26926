/* cfg_blocks.c: DeciLM / Nemotron-NAS per-layer blocks (block_configs), e.g. Llama-3.3-Nemotron-Super-49B: a
 * Llama layer whose attention may be absent and whose MLP width varies by layer (the result of NVIDIA's
 * neural architecture search). Read as transformers' remote modeling_decilm.py / block_config.py and vLLM's
 * nemotron_nas.py define them:
 *   - attention.no_op: the layer has no attention (and no KV cache); else n_heads_in_group query heads share one
 *     KV head (num_key_value_heads = num_attention_heads / n_heads_in_group);
 *   - ffn.no_op: no MLP; else a gated MLP of width _ffn_mult_to_intermediate_size(ffn_mult, hidden_size) =
 *     int(2 ffn_mult H / 3) rounded up to a multiple of 256;
 *   - replace_with_linear (a single linear layer in place of the block), sparsify, window_length and sink tokens
 *     (variants the search may produce) are refused by name: servesim does not model them.
 * One KV-head count serves the cache, so every attention layer must give the same n_heads_in_group. */
#include <math.h>
#include <string.h>

#include "config/cfg_hf.h"

static void mark_layer(uint8_t *mask, uint32_t *count, uint32_t i) {
  mask[i / 8] |= (uint8_t)(1u << (i % 8));
  (*count)++;
}

/* A block part's flag: absent or null = false; else it must be a boolean. */
static int part_bool(const jx *j, const cJSON *bc, const cJSON *part, const char *name, uint32_t i, bool *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(part, name);
  *out = false;
  if (!v || cJSON_IsNull(v)) return SIM_OK;
  if (!cJSON_IsBool(v))
    return jx_fail(j, bc, NULL, "block_configs", "layer %u: %s: expected true or false, got %s", i, name,
                   jx_type_name(v));
  *out = cJSON_IsTrue(v);
  return SIM_OK;
}

/* Refuses the variants servesim does not model: a key that is set (not null, not false). */
static int refuse_set(const jx *j, const cJSON *bc, const cJSON *part, const char *const *keys, size_t n, uint32_t i,
                      const char *what) {
  for (size_t k = 0; k < n; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(part, keys[k]);
    if (v && !cJSON_IsNull(v) && !cJSON_IsFalse(v))
      return jx_fail(j, bc, NULL, "block_configs", "layer %u: %s.%s: this variant of a DeciLM block is not modelled "
                     "yet", i, what, keys[k]);
  }
  return SIM_OK;
}

/* The attention part of layer i: none, or n_heads_in_group (the same in every layer: *group). */
static int attention_part(const jx *j, const cJSON *bc, const cJSON *a, uint32_t i, uint32_t *group, model_cfg *m) {
  static const char *const unmodelled[] = {"replace_with_linear", "sparsify", "window_length", "num_sink_tokens"};
  if (!cJSON_IsObject(a)) return jx_fail(j, bc, NULL, "block_configs", "layer %u: expected an \"attention\" object", i);
  bool none;
  int rc;
  if ((rc = part_bool(j, bc, a, "no_op", i, &none))) return rc;
  if (none) {
    mark_layer(m->nomix_mask, &m->nomix_layers, i);
    return SIM_OK;
  }
  if ((rc = refuse_set(j, bc, a, unmodelled, SIM_ARRAY_LEN(unmodelled), i, "attention"))) return rc;
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(a, "n_heads_in_group");
  if (!cJSON_IsNumber(g) || g->valuedouble < 1 || g->valuedouble != floor(g->valuedouble) ||
      g->valuedouble > m->q_heads || m->q_heads % (uint32_t)g->valuedouble)
    return jx_fail(j, bc, NULL, "block_configs", "layer %u: attention.n_heads_in_group: expected a whole number "
                   "dividing num_attention_heads %u", i, m->q_heads);
  if (*group && *group != (uint32_t)g->valuedouble)
    return jx_fail(j, bc, NULL, "block_configs", "layer %u: attention.n_heads_in_group %u differs from an earlier "
                   "layer's %u: KV caches of several head counts are not modelled", i, (uint32_t)g->valuedouble, *group);
  *group = (uint32_t)g->valuedouble;
  return SIM_OK;
}

/* The FFN part of layer i: none, or a gated MLP of the width ffn_mult gives (its class). */
static int ffn_part(const jx *j, const cJSON *bc, const cJSON *f, uint32_t i, model_cfg *m) {
  static const char *const unmodelled[] = {"replace_with_linear", "sparsify"};
  if (!cJSON_IsObject(f)) return jx_fail(j, bc, NULL, "block_configs", "layer %u: expected an \"ffn\" object", i);
  bool none;
  int rc;
  if ((rc = part_bool(j, bc, f, "no_op", i, &none))) return rc;
  if (none) {
    mark_layer(m->noffn_mask, &m->noffn_layers, i);
    return SIM_OK;
  }
  if ((rc = refuse_set(j, bc, f, unmodelled, SIM_ARRAY_LEN(unmodelled), i, "ffn"))) return rc;
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, "ffn_mult");
  if (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 64))
    return jx_fail(j, bc, NULL, "block_configs", "layer %u: ffn.ffn_mult: expected a number in (0, 64]", i);
  double w = floor(2.0 * x->valuedouble * m->hidden / 3.0);
  uint32_t inter = (uint32_t)(ceil(w / 256.0) * 256.0);
  if (!inter) inter = 256;
  uint32_t k = 0;
  while (k < m->ffn_classes && m->ffn_class_inter[k] != inter) k++;
  if (k == m->ffn_classes) {
    if (k == SIM_ARRAY_LEN(m->ffn_class_inter))
      return jx_fail(j, bc, NULL, "block_configs", "layer %u: more than %zu distinct FFN widths", i,
                     SIM_ARRAY_LEN(m->ffn_class_inter));
    m->ffn_class_inter[m->ffn_classes++] = inter;
  }
  m->ffn_class[i] = (uint8_t)k;
  if (inter > m->intermediate) m->intermediate = inter;
  return SIM_OK;
}

int cfg_hf_blocks(const jx *j, const cJSON *o, model_cfg *m) {
  const cJSON *bc = hf_get(o, "block_configs");
  if (!bc) return SIM_OK;
  if (!cJSON_IsArray(bc) || (uint32_t)cJSON_GetArraySize(bc) != m->layers || m->layers > 256)
    return jx_fail(j, bc, NULL, "block_configs", "expected one block per layer (%u, at most 256)", m->layers);
  m->intermediate = 0;
  uint32_t group = 0, i = 0;
  int rc;
  for (const cJSON *b = bc->child; b; b = b->next, i++) {
    if (!cJSON_IsObject(b)) return jx_fail(j, bc, NULL, "block_configs", "layer %u: expected an object", i);
    if ((rc = attention_part(j, bc, cJSON_GetObjectItemCaseSensitive(b, "attention"), i, &group, m)) ||
        (rc = ffn_part(j, bc, cJSON_GetObjectItemCaseSensitive(b, "ffn"), i, m)))
      return rc;
  }
  if (!group) return jx_fail(j, bc, NULL, "block_configs", "no layer with attention: not modelled");
  if (!m->ffn_classes) m->intermediate = m->hidden; /* no MLP anywhere: a width only for activation sizing */
  m->kv_heads = m->q_heads / group;
  return SIM_OK;
}

uint32_t cfg_model_ffn_class_layers_in(const model_cfg *m, uint32_t k, uint32_t first, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t i = first; i < first + n && i < m->layers; i++) {
    if (cfg_model_is_moe_layer(m, i) || (i < 256 && m->noffn_layers && ((m->noffn_mask[i / 8] >> (i % 8)) & 1u)))
      continue;
    c += !m->ffn_classes || (i < 256 && m->ffn_class[i] == k);
  }
  return c;
}

double cfg_model_dense_mlp_params(const model_cfg *m) {
  double p = 0, H = m->hidden;
  for (uint32_t k = 0; k < cfg_model_ffn_nclasses(m); k++)
    p += (double)cfg_model_ffn_class_layers_in(m, k, 0, m->layers) * cfg_model_mlp_mats(m) * H *
         cfg_model_ffn_class_inter(m, k);
  return p;
}
