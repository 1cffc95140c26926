/* cfg_hf.h: the model reader's parts (cfg_parse.c reads a Hugging Face config.json; cfg_layers.c reads its
 * per-layer keys). Private to sim/config. */
#ifndef SIM_CFG_HF_H
#define SIM_CFG_HF_H

#include "config/cfg.h"
#include "config/jsonx.h"

/* A key of o; a JSON null counts as absent (HF configs write null for "not set"). */
const cJSON *hf_get(const cJSON *o, const char *key);
/* Reads a positive integer key; *present (may be NULL) says if it was there; missing and required: an error. */
int hf_u32(const jx *j, const cJSON *o, const char *key, bool required, uint32_t *out, bool *present);
/* The largest value accepted for an integer key of a config.json (cfg_layers.c's table; 1e9 for others). */
double cfg_hf_ceiling(const char *key);
int hf_bool(const jx *j, const cJSON *o, const char *key, bool *out, bool *present);
/* The mixture-of-experts keys (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, Llama-4): experts, top-k, expert and
 * shared-expert sizes and which layers are MoE blocks. m->intermediate and m->arch must be set. */
int cfg_hf_moe(const jx *j, const cJSON *o, model_cfg *m);
/* layer_types: sliding-window layers and Gated DeltaNet linear-attention layers with their heads and state
 * dtype. m->layers and m->native_dtype must be set. */
int cfg_hf_layer_types(const jx *j, const cJSON *o, model_cfg *m);
/* block_configs (DeciLM / Nemotron-NAS): per-layer attention (none, or query heads per KV head) and MLP width
 * (none, or a width class). m->layers, m->hidden and m->q_heads must be set; sets m->kv_heads and m->intermediate
 * (the widest). Absent: nothing. */
int cfg_hf_blocks(const jx *j, const cJSON *o, model_cfg *m);
/* DeepSeek-V4's compress_ratios and the keys that go with it (cfg_dsv4.c; cfg.h: dsv4); nothing without
 * compress_ratios. m->layers, the heads and head_dim must be set; sets the MLA fields it is read into. */
int cfg_hf_dsv4(const jx *j, const cJSON *o, model_cfg *m);
/* The parameter counts (params_total, params_embedding, params_lm_head, params_per_layer_linear) of a model whose
 * keys are all read (doubles: exact below 2^53). */
void cfg_model_params(model_cfg *m);

#endif
