/* cfg_arch.c: architecture features servesim does not model (see cfg_arch.h).
 * Each entry names the Hugging Face key that declares the feature and what
 * it changes; the model families are those of shared/models/README.md. */
#include "config/cfg_arch.h"

#include <stdio.h>
#include <string.h>

static const cJSON *get(const cJSON *root, const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v || cJSON_IsNull(v)) v = cJSON_GetObjectItemCaseSensitive(root, key);
  return cJSON_IsNull(v) ? NULL : v;
}

/* Entries of array a equal to (or, with sub, containing) s; -1 when a is not an array. */
static int count_str(const cJSON *a, const char *s, bool sub) {
  if (!cJSON_IsArray(a)) return -1;
  int n = 0;
  for (const cJSON *e = a->child; e; e = e->next)
    if (cJSON_IsString(e) && (sub ? strstr(e->valuestring, s) != NULL : !strcmp(e->valuestring, s))) n++;
  return n;
}

/* Entries of array a; -1 when a is not an array. */
static int count_num(const cJSON *a) {
  return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
}

static int count_chr(const char *s, char c) {
  int n = 0;
  for (; *s; s++) n += *s == c;
  return n;
}

/* Appends a warning to m->unmodelled. */
#define note(m, ...) sim_append_note((m)->unmodelled, sizeof (m)->unmodelled, __VA_ARGS__)

int cfg_arch_check(const jx *j, const cJSON *root, const cJSON *o, model_cfg *m) {
  m->unmodelled[0] = 0;
  const cJSON *v;
  int n;
  /* refused: the memory plan itself would be wrong */
  if ((n = count_str(v = get(root, o, "layer_types"), "linear_attention", false)) > 0 &&
      !get(root, o, "linear_num_value_heads"))
    return jx_fail(j, v, NULL, "layer_types",
                   "%d linear-attention layers without Gated DeltaNet's linear_* keys: this kind of linear attention "
                   "is not modelled yet", n);
  if (n > 0)
    note(m, "%d Gated DeltaNet layers: their recurrence kernels (convolution and delta rule) come from the kernel "
            "database's gdn_perf tables where a bundled profile of the GPU and engine has the layer's per-GPU shape, "
            "else from first principles (the `cost model:` line says which), and a prefix-cache hit is taken to "
            "restore their state with the KV", n);
  const cJSON *kda = get(root, o, "linear_attn_config");
  if (kda && (n = count_num(cJSON_GetObjectItemCaseSensitive(kda, "kda_layers"))) > 0)
    note(m, "%d Kimi Delta Attention layers: read as Gated DeltaNet layers (the same recurrent state; the per-channel "
            "decay's low-rank projection counted in the weights) and costed from first principles (the kernel "
            "database has no KDA table for these engines), a prefix-cache hit taken to restore their state", n);
  if ((v = get(root, o, "attn_res_block_size")) != NULL)
    note(m, "attn_res_block_size: Kimi-K3's attention residuals (each block mixes earlier blocks' outputs) are not "
            "costed (elementwise work beside the layers)");
  /* Nemotron-H / Nemotron-3 blocks (cfg_layers.c reads them, the mixture-of-experts blocks included) */
  int mamba = -1;
  if (cJSON_IsString(v = get(root, o, "hybrid_override_pattern")) ||
      cJSON_IsString(v = get(root, o, "layers_block_type")))
    mamba = count_chr(v->valuestring, 'M');
  else if (cJSON_IsArray(v = get(root, o, "layers_block_type")))
    mamba = count_str(v, "mamba", false);
  if (mamba > 0)
    note(m, "%d Mamba-2 layers: the SSD scan and the state update are costed from first principles (the kernel "
            "database's mamba2_perf table is not read), and a prefix-cache hit is taken to restore their state "
            "with the KV", mamba);
  if (cJSON_IsArray(v = get(root, o, "compress_ratios")))
    note(m, "compress_ratios: DeepSeek-V4's compressed attention (CSA layers: one entry per 4 tokens and an indexer's "
            "top-k; HCA: one per 128; every layer a 128-token window) is costed from first principles as MLA over "
            "the entries each query reads (the kernel database's dsv4_* tables are not read); the compressors' "
            "projections and the window's cache are counted; hc_mult hyper-connections (a residual stream %ld "
            "wide) counted in the weights, their mixing not costed; num_hash_layers' hash routing costed as the "
            "learned router; expert_dtype fp4: every weight taken as FP4 (one weight dtype per model: its FP8 "
            "attention, about 2%% of the weights, under-counted)",
         (long)(cJSON_IsNumber(get(root, o, "hc_mult")) ? get(root, o, "hc_mult")->valuedouble : 1));
  /* warned: read, with a cost servesim approximates */
  if ((v = get(root, o, "index_topk")) != NULL && cJSON_IsNumber(v))
    note(m, "index_topk %ld: DeepSeek sparse attention (an indexer picks the keys each query attends to): the "
            "attention reads the top %ld keys; the whole attention block (indexer, top-k, sparse MLA, projections) "
            "comes from the kernel database's dsa_*_module_perf tables where a bundled profile of the GPU and engine "
            "has the model's dimensions, heads per GPU, KV dtype and GEMM type (the `cost model:` line names them), "
            "else the indexer's scoring of the whole context and its key cache are costed from first principles",
         (long)v->valuedouble, (long)v->valuedouble);
  if (mamba < 0 && (v = get(root, o, "moe_latent_size")) != NULL && cJSON_IsNumber(v)) /* Nemotron-3's is read */
    note(m, "moe_latent_size %ld: the experts' latent projection is not modelled outside Nemotron-3's blocks "
            "(experts costed at the full hidden size)",
         (long)v->valuedouble);
  if (((v = get(root, o, "swa_num_key_value_heads")) != NULL && cJSON_IsNumber(v)) ||
      ((v = get(root, o, "global_head_dim")) != NULL && cJSON_IsNumber(v)))
    note(m, "%s %ld: a layer kind with attention shapes of its own: its weights and KV cache are in the memory plan at "
            "those shapes; its attention time is the call at head_dim %ld and num_key_value_heads %ld scaled to them "
            "(decode by the KV read, prefill by the head dim; no table measures the kind's own shapes)",
         v->string, (long)v->valuedouble, (long)(get(root, o, "head_dim") ? get(root, o, "head_dim")->valuedouble : 0),
         (long)(get(root, o, "num_key_value_heads") ? get(root, o, "num_key_value_heads")->valuedouble : 0));
  if ((v = get(root, o, "sparse_attention_config")) != NULL && cJSON_IsObject(v) &&
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "use_sparse_attention")))
    note(m, "sparse_attention_config: block-sparse attention (an index picks the key blocks each query reads, MiniMax-M3) "
            "is costed as full attention over the whole context (an upper bound on long contexts), and the index keys "
            "are not in the memory plan");
  if ((v = get(root, o, "attention_chunk_size")) != NULL && cJSON_IsNumber(v) && v->valuedouble > 0 &&
      !(cJSON_IsNumber(get(root, o, "sliding_window")) &&
        v->valuedouble == get(root, o, "sliding_window")->valuedouble)) /* MiMo's is its window: read as such */
    note(m, "attention_chunk_size %ld: chunked local attention (layers that attend within %ld-token chunks, "
            "Llama-4's) is held and costed as full attention (an upper bound on long contexts)",
         (long)v->valuedouble, (long)v->valuedouble);
  if (((v = get(root, o, "index_topk_freq")) != NULL && cJSON_IsNumber(v) && v->valuedouble > 1))
    note(m, "index_topk_freq %ld: the sparse-attention indexer's top-k is shared by %ld layers (indexer_types "
            "\"shared\"): the indexer is costed in every layer (an upper bound)",
         (long)v->valuedouble, (long)v->valuedouble);
  const cJSON *vh = get(root, o, "v_head_dim"), *hd = get(root, o, "head_dim");
  if (!get(root, o, "kv_lora_rank") && cJSON_IsNumber(vh) && cJSON_IsNumber(hd) && vh->valuedouble != hd->valuedouble)
    note(m, "v_head_dim %ld: values narrower than keys (head_dim %ld) are costed and cached at head_dim (the KV cache "
            "per token is over by %.0f%%)",
         (long)vh->valuedouble, (long)hd->valuedouble,
         100.0 * (hd->valuedouble - vh->valuedouble) / (hd->valuedouble + vh->valuedouble));
  char unread[512];
  size_t nu = cfg_arch_unread(o, unread, sizeof unread);
  if (nu)
    note(m, "%zu key%s not read (servesim does not know what %s to memory or cost): %s", nu, nu > 1 ? "s" : "",
         nu > 1 ? "they do" : "it does", unread);
  return SIM_OK;
}
