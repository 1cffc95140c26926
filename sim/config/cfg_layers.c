/* cfg_layers.c: what a Hugging Face config.json says about a model's layers: the reading helpers for its keys
 * (null counts as absent), the mixture-of-experts keys and which layers are MoE blocks, sliding-window and
 * linear-attention (Gated DeltaNet) layers, and the per-layer predicates cfg.h declares. Part of the model
 * reader (cfg_parse.c: model_from), split along cfg_hf.h. */
#include <math.h>
#include <string.h>

#include "config/cfg.h"
#include "config/cfg_hf.h"

/* HF configs write null for "not set": such a key counts as absent. */
const cJSON *hf_get(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNull(v) ? NULL : v;
}

/* The largest value servesim accepts for an integer key of a config.json: far above every published model
 * (the largest in ../shared/models has 126 layers, hidden size 16,384, 256 experts, a 10M-token context), low
 * enough that a typo or a forged file (2^32-1 layers) is refused as it is read, naming the key and its line,
 * instead of being costed layer by layer. Keys not listed: 1e9. */
static const struct {
  const char *key;
  double hi;
} hf_ceiling[] = {
    {"num_hidden_layers", 4096},          {"hidden_size", 1048576},         {"intermediate_size", 4194304},
    {"moe_intermediate_size", 4194304},   {"intermediate_size_mlp", 4194304},
    {"shared_expert_intermediate_size", 4194304},
    {"num_attention_heads", 65536},       {"num_key_value_heads", 65536},   {"head_dim", 65536},
    {"vocab_size", 16777216},             {"num_local_experts", 65536},     {"num_experts", 65536},
    {"n_routed_experts", 65536},          {"moe_num_experts", 65536},       {"num_experts_per_tok", 65536},
    {"n_shared_experts", 65536},          {"first_k_dense_replace", 4096},  {"moe_layer_freq", 4096},
    {"decoder_sparse_step", 4096},        {"interleave_moe_layer_step", 4096},
    {"kv_lora_rank", 65536},              {"q_lora_rank", 65536},           {"qk_nope_head_dim", 65536},
    {"qk_rope_head_dim", 65536},          {"v_head_dim", 65536},            {"index_head_dim", 65536},
    {"index_n_heads", 65536},             {"linear_conv_kernel_dim", 1024}, {"linear_key_head_dim", 65536},
    {"linear_num_key_heads", 65536},      {"linear_num_value_heads", 65536}, {"linear_value_head_dim", 65536},
    {"mamba_num_heads", 65536},           {"mamba_head_dim", 4096},         {"ssm_state_size", 4096},
    {"n_groups", 65536},                  {"conv_kernel", 1024},            {"chunk_size", 65536},
    {"moe_shared_expert_intermediate_size", 4194304}, {"moe_latent_size", 1048576},
    {"n_group", 65536},                   {"topk_group", 65536},
    {"num_experts_per_token", 65536},     {"num_shared_experts", 65536},    {"routed_expert_hidden_size", 1048576},
    {"num_heads", 65536},                 {"short_conv_kernel_size", 1024}, {"o_lora_rank", 65536},
    {"o_groups", 65536},                  {"sliding_window", 1e8},          {"hc_mult", 64},
};

double cfg_hf_ceiling(const char *key) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(hf_ceiling); i++)
    if (!strcmp(hf_ceiling[i].key, key)) return hf_ceiling[i].hi;
  return 1e9;
}

/* Reads a positive integer key (at most its ceiling); *present says if it was there. */
int hf_u32(const jx *j, const cJSON *o, const char *key, bool required, uint32_t *out, bool *present) {
  bool have = hf_get(o, key) != NULL;
  if (present) *present = have;
  if (!have) return required ? jx_fail(j, NULL, NULL, key, "missing required key") : SIM_OK;
  return jx_u32(j, o, NULL, key, out, 0, cfg_hf_ceiling(key), JX_GT);
}

int hf_bool(const jx *j, const cJSON *o, const char *key, bool *out, bool *present) {
  bool have = hf_get(o, key) != NULL;
  if (present) *present = have;
  return have ? jx_bool(j, o, NULL, key, out) : SIM_OK;
}

/* Keys that give the routed experts of a mixture-of-experts model. */
/* Layers marked in a 256-bit layer mask among [first, first + n). */
static uint32_t mask_in(const model_cfg *m, const uint8_t *mask, uint32_t first, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t i = first; i < first + n && i < m->layers && i < 256; i++) c += (mask[i / 8] >> (i % 8)) & 1u;
  return c;
}

uint32_t cfg_model_lin_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return mask_in(m, m->lin_mask, first, n);
}

uint32_t cfg_model_nomix_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return m->nomix_layers ? mask_in(m, m->nomix_mask, first, n) : 0;
}

uint32_t cfg_model_noffn_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  return m->noffn_layers ? mask_in(m, m->noffn_mask, first, n) : 0;
}

double cfg_model_lin_layer_params(const model_cfg *m) {
  if (m->mamba) { /* vLLM's MambaMixer2 */
    double H = m->hidden, d = (double)m->mamba_heads * m->mamba_head_dim, bc = 2.0 * m->mamba_groups * m->ssm_state;
    double conv_ch = d + bc;
    return H * (2 * d + bc + m->mamba_heads) /* in_proj: z, x, B, C, dt */
           + d * H                            /* out_proj */
           + conv_ch * (m->lin_conv + 1.0)    /* depthwise convolution and its bias (use_conv_bias) */
           + 3.0 * m->mamba_heads + d;        /* A_log, D, dt_bias, the gated RMSNorm */
  }
  double H = m->hidden, kd = (double)m->lin_k_heads * m->lin_k_dim, vd = (double)m->lin_v_heads * m->lin_v_dim;
  double conv_ch = 2 * kd + vd;
  double w = H * (2 * kd + 2 * vd + 2.0 * m->lin_v_heads) /* in_proj: q, k, v, z and b, a */
             + vd * H                                     /* out_proj */
             + conv_ch * m->lin_conv                      /* depthwise short convolution */
             + 2.0 * m->lin_v_heads + m->lin_v_dim;       /* A_log, dt_bias, the gated RMSNorm */
  if (m->kda) w += H * m->lin_k_dim + (double)m->lin_k_dim * kd; /* KDA's per-channel decay: f_a, f_b */
  return w;
}

/* The recurrent state's dtype (Gated DeltaNet and Mamba-2 layers): mamba_ssm_cache_dtype (Nemotron-3's configs;
 * vLLM's --mamba-ssm-cache-dtype, which NVIDIA's model cards set to float32), else mamba_ssm_dtype (Qwen3.5),
 * else the model's own (vLLM's "auto"); a null key is an absent one. */
static int ssm_dtype_from(const jx *j, const cJSON *o, model_cfg *m) {
  const char *key = "mamba_ssm_cache_dtype";
  const cJSON *sd = hf_get(o, key);
  if (!sd || cJSON_IsNull(sd)) sd = hf_get(o, key = "mamba_ssm_dtype");
  m->lin_state_dtype = m->native_dtype;
  if (!sd || cJSON_IsNull(sd)) return SIM_OK;
  sim_dtype d;
  if (!cJSON_IsString(sd) || !dtype_parse(sd->valuestring, &d) || (d != DT_BF16 && d != DT_FP16 && d != DT_FP32))
    return jx_fail(j, sd, NULL, key, "expected \"float32\", \"bfloat16\" or \"float16\"");
  m->lin_state_dtype = d;
  return SIM_OK;
}

/* Kimi Delta Attention (Kimi-Linear, Kimi-K3: text_config.linear_attn_config; the field list of Moonshot's
 * configuration_kimi_linear.py as the NeMo AutoModel kimi_k3 model and the K3 config read it): kda_layers and
 * full_attn_layers (1-based layer numbers, together every layer once), num_heads x head_dim for queries, keys and
 * values, short_conv_kernel_size. Mapped onto the Gated DeltaNet fields (cfg.h: kda). */
static int kda_from(const jx *j, const cJSON *o, const cJSON *lac, model_cfg *m) {
  int rc;
  uint32_t heads = 0, dim = 0, conv = 0;
  if (!cJSON_IsObject(lac)) return jx_fail(j, lac, NULL, "linear_attn_config", "expected an object");
  if ((rc = hf_u32(j, lac, "num_heads", true, &heads, NULL)) || (rc = hf_u32(j, lac, "head_dim", true, &dim, NULL)) ||
      (rc = hf_u32(j, lac, "short_conv_kernel_size", true, &conv, NULL)))
    return rc;
  static const char *const lists[2] = {"kda_layers", "full_attn_layers"};
  uint8_t seen[32] = {0};
  for (int l = 0; l < 2; l++) {
    const cJSON *a = hf_get(lac, lists[l]);
    if (!cJSON_IsArray(a)) return jx_fail(j, a, NULL, lists[l], "expected a list of 1-based layer numbers");
    for (const cJSON *e = a->child; e; e = e->next) {
      double x = cJSON_IsNumber(e) ? e->valuedouble : -1;
      if (!(x >= 1 && x <= m->layers && x <= 256) || x != floor(x))
        return jx_fail(j, a, NULL, lists[l], "expected layer numbers 1 to %u (at most 256)", m->layers);
      uint32_t i = (uint32_t)x - 1;
      if ((seen[i / 8] >> (i % 8)) & 1u)
        return jx_fail(j, a, NULL, lists[l], "layer %u is listed twice", i + 1);
      seen[i / 8] |= (uint8_t)(1u << (i % 8));
      if (l == 0) m->lin_mask[i / 8] |= (uint8_t)(1u << (i % 8)), m->lin_layers++;
    }
  }
  if (mask_in(m, seen, 0, m->layers) != m->layers)
    return jx_fail(j, lac, NULL, "linear_attn_config", "kda_layers and full_attn_layers name %u of the %u layers",
                   mask_in(m, seen, 0, m->layers), m->layers);
  if (!m->lin_layers || m->lin_layers == m->layers)
    return jx_fail(j, lac, NULL, "kda_layers", "%u of %u layers: a model of only one kind of layer is not modelled",
                   m->lin_layers, m->layers);
  m->kda = true;
  m->lin_k_heads = m->lin_v_heads = heads, m->lin_k_dim = m->lin_v_dim = dim, m->lin_conv = conv;
  return ssm_dtype_from(j, o, m);
}

/* Gated DeltaNet layers (layer_types "linear_attention", Qwen3-Next / Qwen3.5) or Kimi Delta Attention layers
 * (kda_from): which layers, the heads and the state's dtype. Other linear-attention kinds are refused by
 * cfg_arch_check before this runs. */
static int linear_attention_from(const jx *j, const cJSON *o, model_cfg *m) {
  int rc;
  bool gate = false, have_gate = false;
  if ((rc = hf_bool(j, o, "attn_output_gate", &gate, &have_gate))) return rc;
  if (!have_gate && (rc = hf_bool(j, o, "mla_use_output_gate", &gate, &have_gate))) return rc;
  m->attn_out_gate = have_gate && gate;
  const cJSON *lac = hf_get(o, "linear_attn_config");
  if (lac) return kda_from(j, o, lac, m);
  const cJSON *lt = hf_get(o, "layer_types");
  if (!cJSON_IsArray(lt)) return SIM_OK;
  uint32_t i = 0;
  for (const cJSON *e = lt->child; e; e = e->next, i++)
    if (cJSON_IsString(e) && !strcmp(e->valuestring, "linear_attention")) {
      if (i >= 256 || i >= m->layers)
        return jx_fail(j, lt, NULL, "layer_types", "a linear-attention layer %u beyond the first 256 of %u", i,
                       m->layers);
      m->lin_mask[i / 8] |= (uint8_t)(1u << (i % 8));
      m->lin_layers++;
    }
  if (!m->lin_layers) return SIM_OK;
  if (m->lin_layers == m->layers)
    return jx_fail(j, lt, NULL, "layer_types", "every layer is linear attention: a model without any full-attention "
                   "layer is not modelled");
  if ((rc = hf_u32(j, o, "linear_num_key_heads", true, &m->lin_k_heads, NULL)) ||
      (rc = hf_u32(j, o, "linear_num_value_heads", true, &m->lin_v_heads, NULL)) ||
      (rc = hf_u32(j, o, "linear_key_head_dim", true, &m->lin_k_dim, NULL)) ||
      (rc = hf_u32(j, o, "linear_value_head_dim", true, &m->lin_v_dim, NULL)) ||
      (rc = hf_u32(j, o, "linear_conv_kernel_dim", true, &m->lin_conv, NULL)))
    return rc;
  if (!m->lin_k_heads || !m->lin_v_heads || !m->lin_k_dim || !m->lin_v_dim || !m->lin_conv)
    return jx_fail(j, hf_get(o, "linear_num_key_heads"), NULL, "linear_num_key_heads",
                   "linear-attention heads, head dims and conv kernel must all be positive");
  if (m->lin_v_heads % m->lin_k_heads)
    return jx_fail(j, hf_get(o, "linear_num_value_heads"), NULL, "linear_num_value_heads",
                   "%u is not a multiple of linear_num_key_heads %u", m->lin_v_heads, m->lin_k_heads);
  return ssm_dtype_from(j, o, m);
}

/* Marks layer i (< 256: the pattern's length is checked first) in a layer mask. */
static void mark(uint8_t *mask, uint32_t *count, uint32_t i) {
  mask[i / 8] |= (uint8_t)(1u << (i % 8));
  (*count)++;
}

/* Nemotron-3's mixture-of-experts blocks (vLLM nemotron_h.py NemotronHMoE, at commit 00b08dc44519): cfg_hf_moe
 * has read n_routed_experts, num_experts_per_tok and moe_intermediate_size; this reads what NemotronHMoE adds:
 * the shared expert (moe_shared_expert_intermediate_size x n_shared_experts, a NemotronHMLP at hidden_size;
 * n_shared_experts absent or 0: none), moe_latent_size (null: none) and the grouped sigmoid router's groups
 * (n_group, topk_group: checked, not costed apart from the router GEMM). `moe` blocks were marked in m->moe_mask. */
static int nemotron_moe_from(const jx *j, const cJSON *o, const cJSON *v, const char *key, uint32_t moe,
                             model_cfg *m) {
  if (!moe) {
    if (m->experts)
      return jx_fail(j, hf_get(o, "n_routed_experts"), NULL, "n_routed_experts",
                     "%u routed experts but %s has no mixture-of-experts block ('E' / \"moe\")", m->experts, key);
    return SIM_OK;
  }
  if (!m->experts)
    return jx_fail(j, v, NULL, key, "%u mixture-of-experts blocks but no n_routed_experts (more than 1) is given",
                   moe);
  if (m->moe_first_dense || m->moe_freq > 1 || m->moe_step > 1 || m->n_mlp_only)
    return jx_fail(j, v, NULL, key, "the MoE blocks are given by %s: first_k_dense_replace, moe_layer_freq, "
                   "decoder_sparse_step, interleave_moe_layer_step or mlp_only_layers would contradict it", key);
  m->moe_masked = m->moe_ungated = true;
  m->moe_layers = moe;
  int rc;
  uint32_t nshared = 0, inter = 0, latent = 0, groups = 1, topk_groups = 1;
  bool have_n = false, have_i = false, have_l = false, have;
  if ((have_n = hf_get(o, "n_shared_experts") != NULL) &&
      (rc = jx_u32(j, o, NULL, "n_shared_experts", &nshared, 0, cfg_hf_ceiling("n_shared_experts"), 0)))
    return rc;
  if ((rc = hf_u32(j, o, "moe_shared_expert_intermediate_size", false, &inter, &have_i))) return rc;
  if (have_n && nshared && !have_i)
    return jx_fail(j, hf_get(o, "n_shared_experts"), NULL, "n_shared_experts",
                   "%u shared experts without moe_shared_expert_intermediate_size", nshared);
  double si = (double)nshared * inter;
  if (si > cfg_hf_ceiling("moe_shared_expert_intermediate_size"))
    return jx_fail(j, hf_get(o, "n_shared_experts"), NULL, "n_shared_experts",
                   "%u shared experts of %u: %.0f wide, above %.0f", nshared, inter, si,
                   cfg_hf_ceiling("moe_shared_expert_intermediate_size"));
  m->shared_inter = (uint32_t)si;
  if ((rc = hf_u32(j, o, "moe_latent_size", false, &latent, &have_l))) return rc;
  if (have_l && latent >= m->hidden)
    return jx_fail(j, hf_get(o, "moe_latent_size"), NULL, "moe_latent_size",
                   "%u is not below hidden_size %u (a latent projects the hidden state down)", latent, m->hidden);
  m->moe_latent = have_l ? latent : 0;
  if ((rc = hf_u32(j, o, "n_group", false, &groups, &have))) return rc;
  if ((rc = hf_u32(j, o, "topk_group", false, &topk_groups, &have))) return rc;
  if (m->experts % groups)
    return jx_fail(j, hf_get(o, "n_group"), NULL, "n_group", "%u does not divide n_routed_experts %u", groups,
                   m->experts);
  if (topk_groups > groups)
    return jx_fail(j, hf_get(o, "topk_group"), NULL, "topk_group", "%u exceeds n_group %u", topk_groups, groups);
  if (m->experts_per_tok > (uint64_t)topk_groups * (m->experts / groups))
    return jx_fail(j, hf_get(o, "num_experts_per_tok"), NULL, "num_experts_per_tok",
                   "%u exceeds the %u experts of the topk_group %u groups a token may choose from",
                   m->experts_per_tok, topk_groups * (m->experts / groups), topk_groups);
  return SIM_OK;
}

/* Nemotron-H's blocks (model_type nemotron_h): hybrid_override_pattern, one character per layer ('M' Mamba-2,
 * '*' attention, '-' MLP, 'E' mixture of experts), or Nemotron-3's layers_block_type, a list ("mamba",
 * "attention", "mlp", "moe") or a string like the pattern (Nemotron-3.5). Every layer is one block: a mixer, an
 * MLP or an MoE block (nemotron_moe_from). The MLP is NemotronHMLP: up_proj and down_proj, no gate, whatever
 * mlp_hidden_act says (relu2). */
static int nemotron_h_from(const jx *j, const cJSON *o, model_cfg *m) {
  const char *key = "hybrid_override_pattern";
  const cJSON *v = hf_get(o, key);
  if (!v) v = hf_get(o, key = "layers_block_type");
  if (!v) return SIM_OK;
  if (m->lin_layers || m->sliding_layers || m->mla)
    return jx_fail(j, v, NULL, key, "Nemotron-H blocks together with linear attention, sliding windows or MLA are "
                   "not modelled");
  char kinds[257];
  uint32_t n = 0;
  if (cJSON_IsString(v)) {
    for (const char *c = v->valuestring; *c; c++) {
      if (n >= 256) return jx_fail(j, v, NULL, key, "more than 256 layers");
      kinds[n++] = *c;
    }
  } else if (cJSON_IsArray(v)) {
    static const struct { const char *name; char kind; } names[] = {
        {"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
    for (const cJSON *e = v->child; e; e = e->next) {
      char k = 0;
      for (size_t i = 0; cJSON_IsString(e) && i < SIM_ARRAY_LEN(names) && !k; i++)
        if (!strcmp(e->valuestring, names[i].name)) k = names[i].kind;
      if (!k) return jx_fail(j, v, NULL, key, "entry %u: expected \"mamba\", \"attention\", \"mlp\" or \"moe\"", n);
      if (n >= 256) return jx_fail(j, v, NULL, key, "more than 256 layers");
      kinds[n++] = k;
    }
  } else {
    return jx_fail(j, v, NULL, key, "expected a string or a list of block types, got %s", jx_type_name(v));
  }
  if (n != m->layers)
    return jx_fail(j, v, NULL, key, "%u layers, num_hidden_layers says %u", n, m->layers);
  int rc;
  uint32_t attn = 0, moe = 0;
  for (uint32_t i = 0; i < n; i++) {
    switch (kinds[i]) {
    case 'M':
      mark(m->lin_mask, &m->lin_layers, i);
      mark(m->noffn_mask, &m->noffn_layers, i);
      break;
    case '*':
      attn++;
      mark(m->noffn_mask, &m->noffn_layers, i);
      break;
    case '-':
      mark(m->nomix_mask, &m->nomix_layers, i);
      break;
    case 'E':
      mark(m->nomix_mask, &m->nomix_layers, i);
      mark(m->moe_mask, &moe, i);
      break;
    default:
      return jx_fail(j, v, NULL, key, "layer %u: block '%c' is not modelled (expected 'M' Mamba-2, '*' attention, "
                     "'-' MLP or 'E' mixture of experts)", i, kinds[i]);
    }
  }
  if (!attn)
    return jx_fail(j, v, NULL, key, "no attention layer: a model without any full-attention layer is not modelled");
  if ((rc = nemotron_moe_from(j, o, v, key, moe, m))) return rc;
  m->mlp_ungated = true;
  if (!m->lin_layers) return SIM_OK;
  m->mamba = true;
  if ((rc = hf_u32(j, o, "mamba_num_heads", true, &m->mamba_heads, NULL)) ||
      (rc = hf_u32(j, o, "mamba_head_dim", true, &m->mamba_head_dim, NULL)) ||
      (rc = hf_u32(j, o, "ssm_state_size", true, &m->ssm_state, NULL)) ||
      (rc = hf_u32(j, o, "n_groups", true, &m->mamba_groups, NULL)) ||
      (rc = hf_u32(j, o, "conv_kernel", true, &m->lin_conv, NULL)) ||
      (rc = hf_u32(j, o, "chunk_size", true, &m->mamba_chunk, NULL)))
    return rc;
  if (m->mamba_heads % m->mamba_groups)
    return jx_fail(j, hf_get(o, "n_groups"), NULL, "n_groups", "%u does not divide mamba_num_heads %u",
                   m->mamba_groups, m->mamba_heads);
  return ssm_dtype_from(j, o, m);
}

static const char *const moe_keys[] = {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"};

bool cfg_model_is_moe_layer(const model_cfg *m, uint32_t i) {
  if (m->moe_masked) return i < m->layers && i < 256 && ((m->moe_mask[i / 8] >> (i % 8)) & 1u);
  if (!m->experts || i >= m->layers || i < m->moe_first_dense) return false;
  if (m->moe_freq > 1 && i % m->moe_freq) return false;
  if (m->moe_step > 1 && (i + 1) % m->moe_step) return false;
  for (uint32_t k = 0; k < m->n_mlp_only; k++)
    if (m->mlp_only[k] == i) return false;
  return true;
}

uint32_t cfg_model_sliding_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t i = first; i < first + n && i < m->layers && i < 256; i++)
    c += (m->sliding_mask[i / 8] >> (i % 8)) & 1u;
  return c;
}

uint32_t cfg_model_moe_layers_in(const model_cfg *m, uint32_t first, uint32_t n) {
  uint32_t c = 0;
  for (uint32_t i = first; i < first + n && i < m->layers; i++) c += cfg_model_is_moe_layer(m, i);
  return c;
}

/* moe_layer_freq as a per-layer list (MiniMax-M3, MiMo-V2-Flash: entry i is 1 when layer i's FFN is an MoE
 * block, 0 for a dense MLP; their modeling files test `moe_layer_freq[layer_idx]`): one entry per layer, each 0
 * or 1; the list decides alone (first_k_dense_replace, when also given, must agree with it). */
static int moe_layer_list(const jx *j, const cJSON *a, model_cfg *m) {
  uint32_t n = (uint32_t)cJSON_GetArraySize(a), i = 0;
  if (n != m->layers || n > 256)
    return jx_fail(j, a, NULL, "moe_layer_freq", "a list of %u entries for %u layers (expected one 0 or 1 per layer, "
                   "at most 256 layers)", n, m->layers);
  memset(m->moe_mask, 0, sizeof m->moe_mask);
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
      return jx_fail(j, a, NULL, "moe_layer_freq", "entry %u: expected 0 (dense) or 1 (mixture of experts)", i);
    if (e->valuedouble == 1) {
      if (i < m->moe_first_dense)
        return jx_fail(j, a, NULL, "moe_layer_freq", "entry %u is 1 but first_k_dense_replace %u makes layer %u dense",
                       i, m->moe_first_dense, i);
      m->moe_mask[i / 8] |= (uint8_t)(1u << (i % 8));
    }
  }
  m->moe_masked = true;
  return SIM_OK;
}

/* The mixture-of-experts keys of the Hugging Face configs (Mixtral, Qwen2/3-MoE,
 * DeepSeek-V2/V3, Llama-4): experts, top-k, the expert and shared-expert
 * sizes and which layers are MoE blocks. */
int cfg_hf_moe(const jx *j, const cJSON *o, model_cfg *m) {
  m->moe_freq = m->moe_step = 1;
  const char *key = NULL;
  for (size_t i = 0; i < SIM_ARRAY_LEN(moe_keys) && !key; i++) {
    const cJSON *v = hf_get(o, moe_keys[i]);
    if (cJSON_IsNumber(v) && v->valuedouble > 1) key = moe_keys[i];
  }
  if (!key) return SIM_OK;
  int rc;
  if ((rc = hf_u32(j, o, key, true, &m->experts, NULL))) return rc;
  /* top-k: Kimi-K3 spells it num_experts_per_token, Gemma 4 top_k_experts */
  const char *topk = hf_get(o, "num_experts_per_tok")      ? "num_experts_per_tok"
                     : hf_get(o, "num_experts_per_token") ? "num_experts_per_token"
                     : hf_get(o, "top_k_experts")         ? "top_k_experts"
                                                          : "num_experts_per_tok";
  if ((rc = hf_u32(j, o, topk, true, &m->experts_per_tok, NULL))) return rc;
  if (m->experts_per_tok > m->experts)
    return jx_fail(j, hf_get(o, topk), NULL, topk, "%u exceeds %s %u", m->experts_per_tok, key, m->experts);
  bool have = false;
  if ((rc = hf_u32(j, o, "moe_intermediate_size", false, &m->expert_inter, &have))) return rc;
  if (!have) m->expert_inter = m->intermediate; /* Mixtral, Llama-4, gpt-oss: intermediate_size is the expert's */
  uint32_t dense = 0, v = 0;
  if ((rc = hf_u32(j, o, "intermediate_size_mlp", false, &dense, &have))) return rc; /* Llama-4's dense layers */
  if (have) m->intermediate = dense;
  /* MiniMax-M3: its dense layers' MLP width (intermediate_size there is the expert's) */
  if ((rc = hf_u32(j, o, "dense_intermediate_size", false, &dense, &have))) return rc;
  if (have) m->intermediate = dense;
  /* shared experts: DeepSeek n_shared_experts x moe_intermediate_size; Qwen2-MoE
   * shared_expert_intermediate_size; Llama-4 one of intermediate_size per MoE block */
  /* 0 = no shared expert (Qwen3-Coder-480B writes shared_expert_intermediate_size 0) */
  v = 0;
  const char *nsk = hf_get(o, "n_shared_experts") ? "n_shared_experts" : "num_shared_experts"; /* Kimi-K3's */
  if ((have = hf_get(o, nsk) != NULL) && (rc = jx_u32(j, o, NULL, nsk, &v, 0, cfg_hf_ceiling(nsk), 0))) return rc;
  if (have) m->shared_inter = v * m->expert_inter;
  v = 0;
  if ((have = hf_get(o, "shared_expert_intermediate_size") != NULL) &&
      (rc = jx_u32(j, o, NULL, "shared_expert_intermediate_size", &v, 0,
                              cfg_hf_ceiling("shared_expert_intermediate_size"), 0)))
    return rc;
  if (have) m->shared_inter = v;
  v = 0; /* MiniMax's name for it (M2.5: 0, none; M3: 3072, one shared expert of the routed experts' width) */
  if ((have = hf_get(o, "shared_intermediate_size") != NULL) &&
      (rc = jx_u32(j, o, NULL, "shared_intermediate_size", &v, 0, cfg_hf_ceiling("shared_intermediate_size"), 0)))
    return rc;
  if (have) m->shared_inter = v;
  if (!strncmp(m->arch, "llama4", 6)) m->shared_inter = m->expert_inter;
  /* Gemma 4's enable_moe_block: every layer runs its dense MLP (intermediate_size) beside the routed experts on the
     same tokens and sums them (transformers' modeling_gemma4.py): a shared expert of that width */
  const cJSON *gemma_moe = hf_get(o, "enable_moe_block");
  if (cJSON_IsTrue(gemma_moe)) m->shared_inter = m->intermediate;
  if ((rc = hf_u32(j, o, "first_k_dense_replace", false, &m->moe_first_dense, NULL))) return rc;
  const cJSON *freq = hf_get(o, "moe_layer_freq");
  if (cJSON_IsArray(freq)) {
    if ((rc = moe_layer_list(j, freq, m))) return rc;
  } else {
    if ((rc = hf_u32(j, o, "moe_layer_freq", false, &v, &have))) return rc;
    if (have && v) m->moe_freq = v;
  }
  if ((rc = hf_u32(j, o, "decoder_sparse_step", false, &v, &have))) return rc;
  if (have && v) m->moe_step = v;
  if ((rc = hf_u32(j, o, "interleave_moe_layer_step", false, &v, &have))) return rc;
  if (have && v) m->moe_step = v;
  const cJSON *mo = hf_get(o, "mlp_only_layers");
  if (cJSON_IsArray(mo))
    for (const cJSON *e = mo->child; e; e = e->next) {
      if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 1e6) ||
          e->valuedouble != floor(e->valuedouble) || m->n_mlp_only >= SIM_ARRAY_LEN(m->mlp_only))
        return jx_fail(j, mo, NULL, "mlp_only_layers", "expected at most %zu layer indices (whole numbers 0 to 1e6)",
                       SIM_ARRAY_LEN(m->mlp_only));
      m->mlp_only[m->n_mlp_only++] = (uint32_t)e->valuedouble;
    }
  m->moe_layers = cfg_model_moe_layers_in(m, 0, m->layers);
  /* Kimi-K3's latent MoE (routed_expert_hidden_size: routed_expert_down_proj before the routed experts,
     routed_expert_up_proj after, as Nemotron-3's moe_latent_size; the flashinfer K3 MoE API's token_hidden_size) */
  if ((rc = hf_u32(j, o, "routed_expert_hidden_size", false, &v, &have))) return rc;
  if (have && v < m->hidden) m->moe_latent = v;
  else if (have && v > m->hidden)
    return jx_fail(j, hf_get(o, "routed_expert_hidden_size"), NULL, "routed_expert_hidden_size",
                   "%u is above hidden_size %u (a latent projects the hidden state down)", v, m->hidden);
  const cJSON *qc = hf_get(o, "quantization_config");
  m->fp8_block = cJSON_IsObject(qc) && cJSON_GetObjectItemCaseSensitive(qc, "weight_block_size") != NULL;
  return SIM_OK;
}

double cfg_model_moe_block_params(const model_cfg *m) {
  if (!m->experts) return 0;
  double H = m->hidden, em = cfg_model_expert_mats(m);
  double w = (double)m->experts * em * cfg_model_expert_hidden(m) * m->expert_inter + em * H * m->shared_inter +
             H * m->experts; /* + router */
  if (m->moe_latent) w += 2.0 * H * m->moe_latent; /* fc1_latent_proj, fc2_latent_proj */
  return w;
}

double cfg_model_dsa_params(const model_cfg *m) {
  if (!m->dsa_topk) return 0;
  double H = m->hidden, n = (double)m->dsa_heads * m->dsa_head_dim;
  double ql = m->q_lora_rank ? m->q_lora_rank : H;
  return ql * n + H * m->dsa_head_dim + H * m->dsa_heads + 2.0 * m->dsa_head_dim; /* wq_b, wk, weights, k_norm */
}

double cfg_model_dsa_cache_bytes(const model_cfg *m) {
  return m->dsa_topk ? m->dsa_head_dim + (m->dsa_head_dim + 127) / 128 * 4.0 : 0;
}

/* DeepSeek sparse attention's indexer (index_topk, index_n_heads, index_head_dim): read with MLA only. */
static int sparse_attention_from(const jx *j, const cJSON *o, model_cfg *m) {
  int rc;
  bool have = false;
  if (m->dsv4) return SIM_OK; /* DeepSeek-V4's indexer serves its CSA layers only (cfg_dsv4.c) */
  if ((rc = hf_u32(j, o, "index_topk", false, &m->dsa_topk, &have)) || !have) return rc;
  if (!m->mla)
    return jx_fail(j, hf_get(o, "index_topk"), NULL, "index_topk",
                   "sparse attention without multi-head latent attention (kv_lora_rank) is not modelled");
  if ((rc = hf_u32(j, o, "index_n_heads", true, &m->dsa_heads, NULL)) ||
      (rc = hf_u32(j, o, "index_head_dim", true, &m->dsa_head_dim, NULL)))
    return rc;
  return SIM_OK;
}

/* hybrid_layer_pattern (MiMo-V2-Flash): entry i is 1 when layer i is sliding-window attention, 0 when full
 * (transformers' modeling_mimo_v2_flash.py: is_swa_layer = hybrid_layer_pattern[layer_idx] == 1); the window is
 * sliding_window. Read only where layer_types did not already name the layers. */
static int hybrid_pattern_from(const jx *j, const cJSON *o, model_cfg *m) {
  const cJSON *a = hf_get(o, "hybrid_layer_pattern");
  if (!cJSON_IsArray(a) || m->sliding_layers) return SIM_OK;
  uint32_t n = (uint32_t)cJSON_GetArraySize(a), i = 0;
  if (n != m->layers || n > 256)
    return jx_fail(j, a, NULL, "hybrid_layer_pattern", "a list of %u entries for %u layers (expected one 0 or 1 per "
                   "layer, at most 256 layers)", n, m->layers);
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
      return jx_fail(j, a, NULL, "hybrid_layer_pattern", "entry %u: expected 0 (full) or 1 (sliding window)", i);
    if (e->valuedouble == 1) m->sliding_mask[i / 8] |= (uint8_t)(1u << (i % 8)), m->sliding_layers++;
  }
  return m->sliding_layers ? hf_u32(j, o, "sliding_window", true, &m->sliding_window, NULL) : SIM_OK;
}

/* A kind's KV heads: a whole number dividing num_attention_heads. */
static int kind_heads(const jx *j, const cJSON *o, const char *key, const model_cfg *m, uint32_t *out) {
  bool have;
  int rc = hf_u32(j, o, key, false, out, &have);
  if (!rc && have && m->q_heads % *out)
    return jx_fail(j, hf_get(o, key), NULL, key, "%u does not divide num_attention_heads %u", *out, m->q_heads);
  return rc;
}

/* Attention shapes of a layer kind of its own (model_cfg.full_* / swa_*): Gemma 4's full layers (global_head_dim;
 * with attention_k_eq_v, num_global_key_value_heads and no v_proj: transformers' modeling_gemma4.py takes the
 * global heads only then), MiMo-V2-Flash's sliding-window layers (swa_head_dim, swa_num_key_value_heads). */
static int typed_heads_from(const jx *j, const cJSON *o, model_cfg *m) {
  int rc;
  if ((rc = hf_u32(j, o, "global_head_dim", false, &m->full_head_dim, NULL)) ||
      (rc = hf_bool(j, o, "attention_k_eq_v", &m->full_k_eq_v, NULL)) ||
      (m->full_k_eq_v && (rc = kind_heads(j, o, "num_global_key_value_heads", m, &m->full_kv_heads))))
    return rc;
  if (!m->sliding_layers) return SIM_OK; /* the swa_* keys describe layers the model does not have */
  if ((rc = hf_u32(j, o, "swa_head_dim", false, &m->swa_head_dim, NULL)) ||
      (rc = kind_heads(j, o, "swa_num_key_value_heads", m, &m->swa_kv_heads)))
    return rc;
  return SIM_OK;
}

/* layer_types: sliding-window layers (gpt-oss, Gemma: "sliding_attention") and Gated DeltaNet layers. */
int cfg_hf_layer_types(const jx *j, const cJSON *o, model_cfg *m) {
  int rc;
  const cJSON *lt = hf_get(o, "layer_types");
  if (cJSON_IsArray(lt)) {
    uint32_t i = 0;
    for (const cJSON *e = lt->child; e; e = e->next, i++)
      if (cJSON_IsString(e) && strstr(e->valuestring, "sliding")) {
        if (i >= 256 || i >= m->layers)
          return jx_fail(j, lt, NULL, "layer_types", "a sliding-window layer %u beyond the first 256 of %u", i,
                         m->layers);
        m->sliding_mask[i / 8] |= (uint8_t)(1u << (i % 8));
        m->sliding_layers++;
      }
    if (m->sliding_layers && (rc = hf_u32(j, o, "sliding_window", true, &m->sliding_window, NULL))) return rc;
  }
  if ((rc = hybrid_pattern_from(j, o, m))) return rc;
  if ((rc = typed_heads_from(j, o, m))) return rc;
  if ((rc = linear_attention_from(j, o, m))) return rc;
  if ((rc = nemotron_h_from(j, o, m))) return rc;
  return sparse_attention_from(j, o, m);
}

double cfg_model_attn_kind_params(const model_cfg *m, bool sliding) {
  double H = m->hidden, qh = m->q_heads, kvh = cfg_model_kind_kv_heads(m, sliding);
  double hd = cfg_model_kind_head_dim(m, sliding);
  double p = H * (qh + 2 * kvh) * hd + qh * hd * H + (m->attn_out_gate ? H * qh * hd : 0);
  if (!sliding && m->full_k_eq_v) p -= H * kvh * hd; /* no v_proj */
  return p;
}
