/* cfg_parse.c: model, GPU and engine configs from JSON text.
 *
 * Two parsing disciplines (see cfg.h and configs/README.md):
 *   - servesim's own files (gpus/, engines/) are strict: every key must be
 *     known (case-sensitive, no duplicates), every required key present, every
 *     value of the documented JSON type and range. Schemas are tables of
 *     `kspec` below; values are converted to the struct's unit on the way in
 *     (MiB -> bytes, GB/s -> bytes/s, TFLOPS -> FLOP/s, us -> ns).
 *   - Hugging Face config.json files (models/) carry dozens of keys servesim
 *     does not need; those are ignored, the needed ones must be present with
 *     the right type.
 * Both read through config/jsonx.h: every error is SIM_EINPUT with
 * "<what>:<line>: <key>: <problem>"; <what> names the file and <line> is the
 * line of the offending key in the text (omitted for a missing key).
 *
 * Invariants on success: all figures of a gpu_cfg are > 0 except flops of
 * dtypes without native support (0) and price (0 = unknown); an engine_cfg's
 * efficiencies lie in (0, 1], block_size is a power of two
 * in 8..128; a model_cfg's head counts divide as the architecture requires and
 * its parameter counts are filled. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/cfg.h"
#include "config/cfg_arch.h"
#include "config/cfg_hf.h"
#include "config/jsonx.h"
#include "config/instance.h"
#include "config/mig.h"

#define MIB 1048576.0

/* ---- strict, table-driven objects (on config/jsonx.h) -------------------- */

typedef enum kkind { K_STR, K_U32, K_NUM, K_BOOL, K_SPECIAL } kkind;
typedef enum krange { R_ANY, R_POS, R_NONNEG, R_FRAC, R_GE1 } krange;

typedef struct kspec {
  const char *key; /* JSON key, exact */
  kkind kind;
  krange range;    /* numbers only */
  bool required;
  size_t off;      /* byte offset of the destination in the target struct */
  size_t size;     /* K_STR: destination buffer size */
  double scale;    /* K_NUM: stored value = JSON value x scale */
  double hi;       /* K_NUM, K_U32: the largest value accepted, in the file's unit (every number has one:
                      parse_strict asserts it; a ceiling far above any real part or engine, so that a typo such
                      as 1e300 is refused with its key and line instead of running) */
} kspec;

enum { MAX_SPECS = 40 };

/* Reads spec s of obj (present: parse_strict checked) into dst. */
static int store(const jx *j, const cJSON *obj, const char *parent, const kspec *s, void *dst) {
  static const struct {
    double lo, hi;
    unsigned flags;
  } R[] = {[R_ANY] = {-INFINITY, INFINITY, 0},
           [R_POS] = {0, INFINITY, JX_GT},
           [R_NONNEG] = {0, INFINITY, 0},
           [R_FRAC] = {0, 1, JX_GT},
           [R_GE1] = {1, INFINITY, 0}};
  char *base = (char *)dst + s->off;
  double hi = s->hi < R[s->range].hi ? s->hi : R[s->range].hi;
  switch (s->kind) {
    case K_STR:
      return jx_str(j, obj, parent, s->key, base, s->size);
    case K_BOOL:
      return jx_bool(j, obj, parent, s->key, (bool *)base);
    case K_U32:
      return jx_u32(j, obj, parent, s->key, (uint32_t *)base, R[s->range].lo, hi, R[s->range].flags);
    case K_NUM: {
      double x = 0;
      int rc = jx_num(j, obj, parent, s->key, &x, R[s->range].lo, hi, R[s->range].flags);
      if (!rc) *(double *)base = x * s->scale;
      return rc;
    }
    case K_SPECIAL:
      return SIM_OK; /* the caller converts it */
  }
  return SIM_OK;
}

/* Checks obj's members against specs[0..n) (unknown or repeated keys fail,
 * missing required keys fail) and stores the plain kinds into dst; found[i]
 * gets the member matching specs[i] (NULL if absent), for the caller's
 * K_SPECIAL keys. */
static int parse_strict(const jx *j, const cJSON *obj, const char *parent, const kspec *specs, size_t n, void *dst,
                        const cJSON **found) {
  const char *known[MAX_SPECS + 1];
  SIM_ASSERT(n <= MAX_SPECS);
  for (size_t i = 0; i < n; i++) {
    known[i] = specs[i].key;
    SIM_ASSERT((specs[i].kind != K_NUM && specs[i].kind != K_U32) || specs[i].hi > 0); /* every number has a ceiling */
  }
  known[n] = NULL;
  int rc = jx_keys(j, obj, parent, known, found);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) {
    if (!found[i]) {
      if (!specs[i].required) continue;
      return jx_fail(j, NULL, parent, specs[i].key, "missing required key");
    }
    if ((rc = store(j, obj, parent, &specs[i], dst))) return rc;
  }
  return SIM_OK;
}

/* Copies the stem of a file name into out: "a/b/llama-3.1-8b.json" ->
 * "llama-3.1-8b"; ".../Llama-3.1-8B/config.json" -> "Llama-3.1-8B". */
static void file_stem(const char *what, char *out, size_t n) {
  const char *p = what;
  const char *sp = strrchr(p, ' '); /* "<embedded> configs/..." */
  if (sp) p = sp + 1;
  size_t len = strlen(p);
  while (len > 1 && p[len - 1] == '/') len--;
  const char *base = p, *end = p + len;
  for (const char *s = p; s < end; s++)
    if (*s == '/') base = s + 1;
  if ((size_t)(end - base) == 11 && !strncmp(base, "config.json", 11) && base > p) {
    end = base - 1; /* the directory holding an HF config.json names the model */
    base = p;
    for (const char *s = p; s < end; s++)
      if (*s == '/') base = s + 1;
  } else if (end - base > 5 && !strncmp(end - 5, ".json", 5)) {
    end -= 5;
  }
  size_t k = (size_t)(end - base);
  if (k >= n) k = n - 1;
  memcpy(out, base, k);
  out[k] = 0;
}

static void copy_str(char *dst, size_t n, const char *src) {
  size_t k = strlen(src);
  if (k >= n) k = n - 1;
  memcpy(dst, src, k);
  dst[k] = 0;
}

/* ---- models: Hugging Face config.json ----------------------------------- */

/* The weights of an llm-compressor (compressed-tensors) checkpoint, as vLLM's compressed_tensors scheme picks
 * them: the format names FP4 packings (nvfp4-pack-quantized: NVFP4; mxfp4-pack-quantized: MXFP4, run as 4-bit
 * weights like gpt-oss's); otherwise the first config group's "weights" say num_bits and type: float 8 bits is
 * FP8 (format float-quantized, e.g. RedHatAI's FP8-dynamic checkpoints), int 4 is 4-bit weights (pack-quantized,
 * W4A16: Kimi-K2.5's experts), int 8 is INT8. Anything else keeps the torch_dtype (model_from warns). */
static void compressed_tensors_weights(const cJSON *qcfg, model_cfg *m) {
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(qcfg, "format");
  const char *f = cJSON_IsString(fmt) ? fmt->valuestring : "";
  if (!strcmp(f, "nvfp4-pack-quantized")) {
    m->ckpt_quant = true, m->ckpt_wdtype = DT_FP4;
    return;
  }
  if (!strcmp(f, "mxfp4-pack-quantized")) {
    m->ckpt_quant = true, m->ckpt_wdtype = DT_INT4, m->mxfp4 = true;
    return;
  }
  const cJSON *groups = cJSON_GetObjectItemCaseSensitive(qcfg, "config_groups");
  const cJSON *g = cJSON_IsObject(groups) ? groups->child : NULL;
  const cJSON *w = cJSON_IsObject(g) ? cJSON_GetObjectItemCaseSensitive(g, "weights") : NULL;
  const cJSON *bits = cJSON_IsObject(w) ? cJSON_GetObjectItemCaseSensitive(w, "num_bits") : NULL;
  const cJSON *type = cJSON_IsObject(w) ? cJSON_GetObjectItemCaseSensitive(w, "type") : NULL;
  bool fl = cJSON_IsString(type) && !strcmp(type->valuestring, "float");
  bool in = cJSON_IsString(type) && !strcmp(type->valuestring, "int");
  double b = cJSON_IsNumber(bits) ? bits->valuedouble : 0;
  if (fl && b == 8) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP8;
  else if (in && b == 4) m->ckpt_quant = true, m->ckpt_wdtype = DT_INT4;
  else if (in && b == 8) m->ckpt_quant = true, m->ckpt_wdtype = DT_INT8;
}

/* The modules a checkpoint leaves unquantized (vLLM's modules_to_not_convert, compressed-tensors' and ModelOpt's
 * ignore, hf_quant_config's exclude_modules): naming the attention ("self_attn") keeps its projections at the
 * activation dtype. */
static void unquantized_attention(const cJSON *q, model_cfg *m) {
  static const char *const keys[] = {"modules_to_not_convert", "ignore", "exclude_modules"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    const cJSON *keep = cJSON_GetObjectItemCaseSensitive(q, keys[k]);
    if (cJSON_IsArray(keep))
      for (const cJSON *e = keep->child; e; e = e->next)
        if (cJSON_IsString(e) && strstr(e->valuestring, "self_attn")) m->attn_unquantized = true;
  }
}

/* ModelOpt: its quant_algo names the format. */
static void modelopt_algo(const cJSON *qcfg, model_cfg *m) {
  const cJSON *qa = cJSON_GetObjectItemCaseSensitive(qcfg, "quant_algo");
  if (cJSON_IsString(qa) && !strcmp(qa->valuestring, "NVFP4")) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP4;
  else if (cJSON_IsString(qa) && !strcmp(qa->valuestring, "FP8")) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP8;
}

/* ModelOpt's hf_quant_config.json beside a checkpoint whose config.json has no quantization_config (NVIDIA's
 * NVFP4 and FP8 exports, e.g. nvidia/DeepSeek-V3.1-NVFP4, nvidia/Llama-3.1-70B-Instruct-FP8): TensorRT-LLM takes
 * the checkpoint's quantization from it (ModelConfig.from_pretrained reads hf_quant_config.json), as vLLM's
 * ModelOpt loader does (its config file names). {"quantization": {"quant_algo": ...}} (or quant_algo at the top);
 * MIXED_PRECISION names an algorithm per layer in quantized_layers: the weights are taken as the most common one
 * (NVFP4 and W4A16_NVFP4: FP4; FP8), and the note says so. */
int cfg_model_quant_sidecar(model_cfg *m, const char *json, const char *what, sim_err *err) {
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(j.root, "quantization");
  if (!cJSON_IsObject(q)) q = j.root;
  const cJSON *qa = cJSON_GetObjectItemCaseSensitive(q, "quant_algo");
  if (!cJSON_IsString(qa)) {
    rc = sim_errf(err, SIM_EINPUT, "%s: quantization.quant_algo: missing (expected a ModelOpt algorithm such as "
                  "NVFP4 or FP8)", what);
  } else if (!strcmp(qa->valuestring, "MIXED_PRECISION")) {
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(q, "quantized_layers");
    unsigned fp4 = 0, fp8 = 0, other = 0;
    for (const cJSON *l = cJSON_IsObject(layers) ? layers->child : NULL; l; l = l->next) {
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(l, "quant_algo");
      const char *s = cJSON_IsString(a) ? a->valuestring : "";
      if (strstr(s, "NVFP4")) fp4++;
      else if (!strcmp(s, "FP8")) fp8++;
      else other++;
    }
    if (fp4 + fp8 == 0) {
      rc = sim_errf(err, SIM_EINPUT, "%s: quant_algo MIXED_PRECISION: quantized_layers names no NVFP4 or FP8 layer",
                    what);
    } else {
      m->ckpt_quant = true, m->ckpt_wdtype = fp4 >= fp8 ? DT_FP4 : DT_FP8;
      sim_append_note(m->unmodelled, sizeof m->unmodelled,
                      "hf_quant_config MIXED_PRECISION: the weights are taken as %s, the most common algorithm of its "
                      "quantized_layers (%u NVFP4, %u FP8, %u other)", fp4 >= fp8 ? "NVFP4" : "FP8", fp4, fp8, other);
    }
  } else {
    modelopt_algo(q, m);
    unquantized_attention(q, m);
    if (!m->ckpt_quant)
      rc = sim_errf(err, SIM_EINPUT, "%s: quant_algo %s: not a ModelOpt format servesim reads (NVFP4, FP8, "
                    "MIXED_PRECISION)", what, qa->valuestring);
  }
  jx_free(&j);
  return rc;
}

/* The checkpoint's quantization (quantization_config), the default weights when --quantization is not given,
 * as vLLM reads it; a format not read here is named in m->unmodelled. */
static void ckpt_quant_from(const cJSON *root, const cJSON *o, model_cfg *m) {
  const cJSON *qcfg = hf_get(o, "quantization_config");
  if (!qcfg) qcfg = hf_get(root, "quantization_config"); /* a multimodal wrapper's (Kimi-K2.5's NVFP4 export) */
  const cJSON *qm = cJSON_IsObject(qcfg) ? cJSON_GetObjectItemCaseSensitive(qcfg, "quant_method") : NULL;
  if (cJSON_IsString(qm)) {
    if (!strcmp(qm->valuestring, "fp8")) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP8;
    else if (!strcmp(qm->valuestring, "mxfp4")) m->ckpt_quant = true, m->ckpt_wdtype = DT_INT4, m->mxfp4 = true;
    else if (!strcmp(qm->valuestring, "modelopt_fp4")) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP4;
    else if (!strcmp(qm->valuestring, "modelopt")) modelopt_algo(qcfg, m);
    else if (!strcmp(qm->valuestring, "compressed-tensors")) compressed_tensors_weights(qcfg, m);
  } else if (cJSON_IsObject(qcfg)) { /* ModelOpt's export without quant_method: quant_algo alone */
    modelopt_algo(qcfg, m);
  }
  if (cJSON_IsObject(qcfg) && !m->ckpt_quant) /* a format not read above: say so, never silently BF16 */
    sim_append_note(m->unmodelled, sizeof m->unmodelled,
                    "quantization_config (quant_method %s): not a format servesim reads, the weights are taken as "
                    "torch_dtype unless --quantization says otherwise",
                    cJSON_IsString(qm) ? qm->valuestring : "absent");
  if (cJSON_IsObject(qcfg)) unquantized_attention(qcfg, m);
}

/* num_hidden_layers; Nemotron-3-Ultra's config has none: its layers_block_type list gives the layers
 * (transformers' NemotronHConfig derives num_hidden_layers from it); nemotron_h_from checks the two agree when
 * both are given. */
static int layers_from(const jx *j, const cJSON *o, model_cfg *m) {
  const cJSON *blocks = hf_get(o, "layers_block_type");
  bool have_layers = false;
  int rc;
  if ((rc = hf_u32(j, o, "num_hidden_layers", !blocks, &m->layers, &have_layers)) || have_layers) return rc;
  int nb = cJSON_IsArray(blocks)    ? cJSON_GetArraySize(blocks)
           : cJSON_IsString(blocks) ? (int)strlen(blocks->valuestring)
                                    : 0;
  if (nb <= 0 || nb > cfg_hf_ceiling("num_hidden_layers"))
    return jx_fail(j, blocks, NULL, "layers_block_type", "expected a non-empty list of block types (or a string), "
                   "at most %.0f, when num_hidden_layers is not given", cfg_hf_ceiling("num_hidden_layers"));
  m->layers = (uint32_t)nb;
  return SIM_OK;
}

/* The checkpoint's own dtype: "torch_dtype" (transformers < 4.56) or "dtype" (newer); absent: bfloat16. */
static int native_dtype_from(const jx *j, const cJSON *o, model_cfg *m) {
  m->native_dtype = DT_BF16;
  const char *dkey = "torch_dtype";
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, dkey);
  if (!dt || cJSON_IsNull(dt)) dt = cJSON_GetObjectItemCaseSensitive(o, dkey = "dtype");
  if (!dt || cJSON_IsNull(dt)) return SIM_OK;
  if (!cJSON_IsString(dt)) return jx_fail(j, dt, NULL, dkey, "expected a string, got %s", jx_type_name(dt));
  sim_dtype d;
  if (!dtype_parse(dt->valuestring, &d) || (d != DT_BF16 && d != DT_FP16 && d != DT_FP32))
    return jx_fail(j, dt, NULL, dkey, "unsupported dtype '%s' (expected bfloat16, float16 or float32)", dt->valuestring);
  m->native_dtype = d;
  return SIM_OK;
}

static int model_from(const jx *j, const cJSON *o, model_cfg *m) {
  const cJSON *mt = cJSON_GetObjectItemCaseSensitive(o, "model_type");
  if (!mt) return jx_fail(j, NULL, NULL, "model_type", "missing required key");
  if (!cJSON_IsString(mt)) return jx_fail(j, mt, NULL, "model_type", "expected a string, got %s", jx_type_name(mt));
  copy_str(m->arch, sizeof m->arch, mt->valuestring);

  int rc;
  bool have_kv = false, have_hd = false;
  if ((rc = hf_u32(j, o, "hidden_size", true, &m->hidden, NULL))) return rc;
  bool have_inter = false; /* optional when every layer is a mixture of experts (Qwen3.5-MoE): checked below */
  bool blocks = hf_get(o, "block_configs") != NULL; /* DeciLM: widths and KV heads by layer (cfg_blocks.c) */
  if ((rc = hf_u32(j, o, "intermediate_size", !hf_get(o, "moe_intermediate_size") && !blocks, &m->intermediate,
                   &have_inter)))
    return rc;
  if ((rc = layers_from(j, o, m))) return rc;
  if ((rc = hf_u32(j, o, "num_attention_heads", true, &m->q_heads, NULL))) return rc;
  if ((rc = hf_u32(j, o, "num_key_value_heads", false, &m->kv_heads, &have_kv))) return rc;
  if (blocks && (rc = cfg_hf_blocks(j, o, m))) return rc;
  have_kv |= blocks, have_inter |= blocks;
  if ((rc = hf_u32(j, o, "head_dim", false, &m->head_dim, &have_hd))) return rc;
  if ((rc = hf_u32(j, o, "vocab_size", true, &m->vocab, NULL))) return rc;
  if ((rc = hf_u32(j, o, "max_position_embeddings", true, &m->max_pos, NULL))) return rc;
  m->mtp_layers = 0;
  if (hf_get(o, "num_nextn_predict_layers") && /* 0 allowed: no MTP layers */
      (rc = jx_u32(j, o, NULL, "num_nextn_predict_layers", &m->mtp_layers, 0, 64, 0)))
    return rc;

  m->tied_embeddings = false;
  if ((rc = hf_bool(j, o, "tie_word_embeddings", &m->tied_embeddings, NULL))) return rc;
  bool have_bias = false;
  m->qkv_bias = false;
  if ((rc = hf_bool(j, o, "attention_bias", &m->qkv_bias, &have_bias))) return rc;
  if (!have_bias) m->qkv_bias = !strcmp(m->arch, "qwen2"); /* Qwen2 always has q/k/v biases */

  if ((rc = native_dtype_from(j, o, m))) return rc;

  /* multi-head latent attention */
  const cJSON *lora = hf_get(o, "kv_lora_rank");
  if (cJSON_IsNumber(lora) && lora->valuedouble > 0) {
    m->mla = true;
    if ((rc = hf_u32(j, o, "kv_lora_rank", true, &m->kv_lora_rank, NULL))) return rc;
    if ((rc = hf_u32(j, o, "qk_nope_head_dim", true, &m->qk_nope_dim, NULL))) return rc;
    if ((rc = hf_u32(j, o, "qk_rope_head_dim", true, &m->qk_rope_dim, NULL))) return rc;
    if ((rc = hf_u32(j, o, "v_head_dim", true, &m->v_head_dim, NULL))) return rc;
    const cJSON *ql = hf_get(o, "q_lora_rank");
    if (ql && !cJSON_IsNull(ql) && (rc = hf_u32(j, o, "q_lora_rank", true, &m->q_lora_rank, NULL))) return rc;
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim, have_hd = true;
    m->kv_heads = m->q_heads, have_kv = true; /* every head reads the one latent */
  }
  if (!have_kv) m->kv_heads = m->q_heads;
  if (m->q_heads % m->kv_heads)
    return jx_fail(j, hf_get(o, "num_key_value_heads"), NULL, "num_key_value_heads", "%u does not divide num_attention_heads %u", m->kv_heads, m->q_heads);
  if (!have_hd) {
    if (m->hidden % m->q_heads)
      return jx_fail(j, hf_get(o, "num_attention_heads"), NULL, "num_attention_heads",
                     "%u does not divide hidden_size %u and head_dim is not given", m->q_heads, m->hidden);
    m->head_dim = m->hidden / m->q_heads;
  }

  if ((rc = cfg_hf_dsv4(j, o, m))) return rc; /* DeepSeek-V4: read as MLA (cfg.h) */
  if ((rc = cfg_hf_moe(j, o, m))) return rc;
  if (!have_inter && m->moe_layers < m->layers)
    return jx_fail(j, NULL, NULL, "intermediate_size", "missing required key (%u of %u layers are dense)",
                   m->layers - m->moe_layers, m->layers);
  if (!have_inter) m->intermediate = m->expert_inter; /* no dense MLP is costed or held (every layer MoE) */
  if ((rc = cfg_hf_layer_types(j, o, m))) return rc; /* sliding-window and linear-attention layers */
  ckpt_quant_from(j->root, o, m);
  const cJSON *ed = hf_get(o, "expert_dtype"); /* DeepSeek-V4: FP4 experts beside FP8 attention */
  if (cJSON_IsString(ed) && !strcmp(ed->valuestring, "fp4")) m->ckpt_quant = true, m->ckpt_wdtype = DT_FP4;

  cfg_model_params(m);
  return SIM_OK;
}

/* "aliases": an array of at most CFG_MAX_ALIASES distinct non-empty strings,
 * each shorter than `width`, into out (rows of width bytes). */
static int parse_aliases(const jx *j, const cJSON *a, char *out, size_t width, uint32_t *n) {
  *n = 0;
  if (!a) return SIM_OK;
  if (!cJSON_IsArray(a))
    return jx_fail(j, a, NULL, "aliases", "expected an array of strings, got %s", jx_type_name(a));
  int i = 0;
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    char key[32];
    snprintf(key, sizeof key, "aliases[%d]", i);
    if (i >= CFG_MAX_ALIASES) return jx_fail(j, e, NULL, key, "at most %d aliases", CFG_MAX_ALIASES);
    if (!cJSON_IsString(e) || !e->valuestring[0] || strlen(e->valuestring) >= width)
      return jx_fail(j, e, NULL, key, "expected a non-empty string shorter than %zu bytes", width);
    for (int k = 0; k < i; k++)
      if (!strcmp(out + (size_t)k * width, e->valuestring))
        return jx_fail(j, e, NULL, key, "\"%s\" given twice", e->valuestring);
    copy_str(out + (size_t)i * width, width, e->valuestring);
  }
  *n = (uint32_t)i;
  return SIM_OK;
}

static bool has_alias(const char *name, const char *aliases, size_t width, uint32_t n, const char *label) {
  if (!strcasecmp(name, label)) return true;
  for (uint32_t i = 0; i < n; i++)
    if (!strcasecmp(aliases + (size_t)i * width, label)) return true;
  return false;
}

bool cfg_gpu_has_alias(const gpu_cfg *g, const char *name) {
  return has_alias(g->name, g->aliases[0], sizeof g->aliases[0], g->naliases, name);
}
bool cfg_model_has_alias(const model_cfg *m, const char *name) {
  return has_alias(m->name, m->aliases[0], sizeof m->aliases[0], m->naliases, name);
}
bool cfg_engine_has_alias(const engine_cfg *e, const char *name) {
  return has_alias(e->name, e->aliases[0], sizeof e->aliases[0], e->naliases, name);
}

/* Python's json module writes Infinity, -Infinity and NaN, which JSON lacks (Nemotron-H's config.json has
 * "time_step_limit": [0.0, Infinity]): a copy of text with each such token outside strings written as a number
 * of the same length that reads as infinite (1e999999) or as zero (0e0), or NULL when there is none (caller frees). */
static char *python_json_tokens(const char *text) {
  char *out = NULL;
  bool in_str = false;
  for (const char *p = text; *p; p++) {
    if (in_str) {
      if (*p == '\\' && p[1]) p++;
      else if (*p == '"') in_str = false;
      continue;
    }
    if (*p == '"') {
      in_str = true;
      continue;
    }
    bool start = p == text || strchr(" \t\r\n[:,-", p[-1]);
    size_t k = !strncmp(p, "Infinity", 8) ? 8 : !strncmp(p, "NaN", 3) ? 3 : 0;
    if (!start || !k || isalnum((unsigned char)p[k]) || p[k] == '_') continue;
    if (!out) out = sim_strdup(text);
    char *q = out + (p - text);
    if (k == 8) memcpy(q, "1e999999", 8);
    else memcpy(q, "0e0", 3); /* NaN: a key servesim reads then fails its range check */
    p += k - 1;
  }
  return out;
}

int cfg_model_parse(model_cfg *m, const char *json, const char *what, sim_err *err) {
  memset(m, 0, sizeof *m);
  jx j;
  char *fixed = python_json_tokens(json);
  int rc = jx_parse(&j, fixed ? fixed : json, what, err);
  if (rc) {
    free(fixed);
    return rc;
  }
  const cJSON *root = j.root, *o = root;
  /* multimodal wrappers keep the language model under text_config */
  const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
  if (!cJSON_GetObjectItemCaseSensitive(root, "hidden_size") && cJSON_IsObject(tc)) o = tc;
  rc = cfg_arch_check(&j, root, o, m);
  if (!rc) rc = model_from(&j, o, m);
  if (!rc) rc = parse_aliases(&j, cJSON_GetObjectItemCaseSensitive(root, "aliases"), m->aliases[0],
                              sizeof m->aliases[0], &m->naliases);
  jx_free(&j);
  free(fixed);
  if (rc) return rc;
  file_stem(what, m->name, sizeof m->name);
  copy_str(m->path, sizeof m->path, what);
  return SIM_OK;
}

/* ---- GPUs ----------------------------------------------------------------- */

#define GOFF(f) offsetof(gpu_cfg, f)
static const kspec gpu_specs[] = {
    {"name", K_STR, R_ANY, true, GOFF(name), sizeof(((gpu_cfg *)0)->name), 0, 0},
    {"full_name", K_STR, R_ANY, true, GOFF(full_name), sizeof(((gpu_cfg *)0)->full_name), 0, 0},
    {"memory_mib", K_NUM, R_POS, true, GOFF(mem_bytes), 0, MIB, 16777216},
    {"hbm_bandwidth_gb_s", K_NUM, R_POS, true, GOFF(hbm_Bps), 0, 1e9, 1e5},
    {"dense_tflops", K_SPECIAL, R_ANY, true, 0, 0, 0, 0},
    {"interconnect", K_SPECIAL, R_ANY, true, 0, 0, 0, 0},
    {"interconnect_bandwidth_gb_s", K_NUM, R_POS, true, GOFF(link_Bps), 0, 1e9, 1e5},
    {"allreduce_base_latency_us", K_NUM, R_POS, true, GOFF(link_latency_ns), 0, 1e3, 1e6},
    {"sm_count", K_U32, R_POS, true, GOFF(sm_count), 0, 0, 1e5},
    {"l2_mib", K_NUM, R_POS, true, GOFF(l2_bytes), 0, MIB, 1e5},
    {"price_usd_per_gpu_hour", K_NUM, R_POS, false, GOFF(price_per_hour), 0, 1, 1e4},
    {"source", K_STR, R_ANY, true, GOFF(source), sizeof(((gpu_cfg *)0)->source), 0, 0},
    {"aliases", K_SPECIAL, R_ANY, false, 0, 0, 0, 0},
    {"gpus_per_node", K_U32, R_POS, false, GOFF(gpus_per_node), 0, 0, 1e5},
    {"network_bandwidth_gb_s", K_NUM, R_POS, false, GOFF(net_Bps), 0, 1e9, 1e5},
    {"network_latency_us", K_NUM, R_POS, false, GOFF(net_latency_ns), 0, 1e3, 1e6},
    {"mig", K_SPECIAL, R_ANY, false, 0, 0, 0, 0},
};
enum { G_TFLOPS = 4, G_LINK = 5, G_ALIASES = 12, G_MIG = 16 };

/* dense_tflops members, stored into gpu_cfg.flops[] (FLOP/s). INT4 is
 * weight-only (dequantized into the bf16 path) and FP32 is not a serving
 * path: neither has a key. fp4: NVFP4 tensor cores (Blackwell). */
#define FOFF(d) ((size_t)(d) * sizeof(double))
static const kspec tflops_specs[] = {
    {"bf16", K_NUM, R_POS, true, FOFF(DT_BF16), 0, 1e12, 1e6},
    {"fp16", K_NUM, R_POS, true, FOFF(DT_FP16), 0, 1e12, 1e6},
    {"fp8", K_NUM, R_POS, false, FOFF(DT_FP8), 0, 1e12, 1e6},
    {"int8", K_NUM, R_POS, false, FOFF(DT_INT8), 0, 1e12, 1e6},
    {"fp4", K_NUM, R_POS, false, FOFF(DT_FP4), 0, 1e12, 1e6},
};

/* "interconnect": "nvlink" or "pcie" (GPU and instance files). */
static int parse_link(const jx *j, const cJSON *l, link_kind *out) {
  if (!cJSON_IsString(l)) return jx_fail(j, l, NULL, "interconnect", "expected a string, got %s", jx_type_name(l));
  if (!strcmp(l->valuestring, "nvlink")) *out = LINK_NVLINK;
  else if (!strcmp(l->valuestring, "pcie")) *out = LINK_PCIE;
  else return jx_fail(j, l, NULL, "interconnect", "expected \"nvlink\" or \"pcie\", got \"%s\"", l->valuestring);
  return SIM_OK;
}

int cfg_gpu_parse(gpu_cfg *g, const char *json, const char *what, sim_err *err) {
  memset(g, 0, sizeof *g);
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  const cJSON *found[SIM_ARRAY_LEN(gpu_specs)];
  const cJSON *ffound[SIM_ARRAY_LEN(tflops_specs)];
  SIM_ASSERT(!strcmp(gpu_specs[G_ALIASES].key, "aliases"));
  rc = parse_strict(&j, j.root, NULL, gpu_specs, SIM_ARRAY_LEN(gpu_specs), g, found);
  if (!rc) {
    const cJSON *t = found[G_TFLOPS];
    if (!cJSON_IsObject(t))
      rc = jx_fail(&j, t, NULL, "dense_tflops",
                   "expected an object {\"bf16\": ..., \"fp16\": ..., \"fp8\": ..., \"int8\": ...}, got %s",
                   jx_type_name(t));
    else
      rc = parse_strict(&j, t, "dense_tflops", tflops_specs, SIM_ARRAY_LEN(tflops_specs), g->flops, ffound);
  }
  if (!rc) rc = parse_link(&j, found[G_LINK], &g->link);
  if (!rc) rc = parse_aliases(&j, found[G_ALIASES], g->aliases[0], sizeof g->aliases[0], &g->naliases);
  SIM_ASSERT(!strcmp(gpu_specs[G_MIG].key, "mig"));
  if (!rc && found[G_MIG]) rc = mig_parse(&j, found[G_MIG], g);
  /* optional node facts (cfg.h): an 8-GPU node, one 400 Gb/s NIC per GPU */
  if (!g->gpus_per_node) g->gpus_per_node = 8;
  if (!(g->net_Bps > 0)) g->net_Bps = 50e9;
  if (!(g->net_latency_ns > 0)) g->net_latency_ns = 5e3;
  jx_free(&j);
  return rc;
}

/* ---- cloud instances (config/instance.h) ----------------------------------- */

#define IOFF(f) offsetof(instance_cfg, f)
static const kspec instance_specs[] = {
    {"name", K_STR, R_ANY, true, IOFF(name), sizeof(((instance_cfg *)0)->name), 0, 0},
    {"provider", K_STR, R_ANY, true, IOFF(provider), sizeof(((instance_cfg *)0)->provider), 0, 0},
    {"gpu", K_STR, R_ANY, true, IOFF(gpu), sizeof(((instance_cfg *)0)->gpu), 0, 0},
    {"gpu_count", K_U32, R_POS, true, IOFF(gpu_count), 0, 0, 1024},
    {"interconnect", K_SPECIAL, R_ANY, true, 0, 0, 0, 0},
    {"price_usd_per_hour", K_NUM, R_POS, true, IOFF(price_per_hour), 0, 1, 1e6},
    {"price_date", K_STR, R_ANY, false, IOFF(price_date), sizeof(((instance_cfg *)0)->price_date), 0, 0},
    {"price_source", K_STR, R_ANY, true, IOFF(price_source), sizeof(((instance_cfg *)0)->price_source), 0, 0},
    {"price_is_assumption", K_BOOL, R_ANY, false, IOFF(price_assumed), 0, 0, 0},
};
enum { I_GPU = 2, I_LINK = 4 };

int cfg_instance_parse(instance_cfg *in, const char *json, const char *what, sim_err *err) {
  memset(in, 0, sizeof *in);
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  const cJSON *found[SIM_ARRAY_LEN(instance_specs)];
  SIM_ASSERT(!strcmp(instance_specs[I_LINK].key, "interconnect") && !strcmp(instance_specs[I_GPU].key, "gpu"));
  rc = parse_strict(&j, j.root, NULL, instance_specs, SIM_ARRAY_LEN(instance_specs), in, found);
  if (!rc) rc = parse_link(&j, found[I_LINK], &in->link);
  if (!rc && in->gpu_count > 1024) rc = jx_fail(&j, NULL, NULL, "gpu_count", "must be <= 1024, got %u", in->gpu_count);
  if (!rc && strchr(in->gpu, ':'))
    rc = jx_fail(&j, found[I_GPU], NULL, "gpu",
                 "\"%s\": an instance holds whole GPUs (MIG slices are cut by whoever rents it: give the whole GPU)",
                 in->gpu);
  jx_free(&j);
  if (!rc) copy_str(in->path, sizeof in->path, what);
  return rc;
}

/* ---- engines -------------------------------------------------------------- */

#define EOFF(f) offsetof(engine_cfg, f)
static const kspec engine_specs[] = {
    {"name", K_STR, R_ANY, true, EOFF(name), sizeof(((engine_cfg *)0)->name), 0, 0},
    {"version", K_STR, R_ANY, false, EOFF(version), sizeof(((engine_cfg *)0)->version), 0, 0},
    {"scheduler_reserve_full_isl", K_BOOL, R_ANY, false, EOFF(reserve_full_isl), 0, 0, 0},
    {"cudagraph_mode", K_SPECIAL, R_ANY, false, 0, 0, 0, 0},
    {"source", K_STR, R_ANY, true, EOFF(source), sizeof(((engine_cfg *)0)->source), 0, 0},
    {"max_num_seqs", K_U32, R_POS, true, EOFF(max_num_seqs), 0, 0, 1e6},
    {"max_num_batched_tokens", K_U32, R_POS, true, EOFF(max_num_batched_tokens), 0, 0, 1e7},
    {"block_size", K_U32, R_POS, true, EOFF(block_size), 0, 0, 1024},
    {"gpu_memory_utilization", K_NUM, R_FRAC, true, EOFF(gpu_memory_utilization), 0, 1, 1},
    {"enable_prefix_caching", K_BOOL, R_ANY, true, EOFF(enable_prefix_caching), 0, 0, 0},
    {"enable_chunked_prefill", K_BOOL, R_ANY, true, EOFF(enable_chunked_prefill), 0, 0, 0},
    {"async_scheduling", K_BOOL, R_ANY, true, EOFF(async_scheduling), 0, 0, 0},
    {"long_prefill_token_threshold", K_U32, R_NONNEG, true, EOFF(long_prefill_token_threshold), 0, 0, 1e7},
    {"admission", K_SPECIAL, R_ANY, true, 0, 0, 0, 0},
    {"step_overhead_us", K_NUM, R_NONNEG, true, EOFF(step_overhead_ns), 0, 1e3, 1e6},
    {"per_seq_overhead_us", K_NUM, R_NONNEG, true, EOFF(per_seq_overhead_ns), 0, 1e3, 1e6},
    {"frontend_latency_us", K_NUM, R_NONNEG, false, EOFF(frontend_latency_ns), 0, 1e3, CFG_MAX_FRONTEND_LATENCY_NS / 1e3},
    {"cuda_graph_max_batch", K_U32, R_NONNEG, true, EOFF(cuda_graph_max_batch), 0, 0, 1e6},
    {"launch_overhead_us_per_layer", K_NUM, R_NONNEG, true, EOFF(launch_overhead_ns_per_layer), 0, 1e3, 1e6},
    {"elementwise_kernels_per_layer", K_NUM, R_NONNEG, true, EOFF(elementwise_kernels_per_layer), 0, 1, 1e4},
    {"kernel_floor_us", K_NUM, R_NONNEG, true, EOFF(kernel_floor_ns), 0, 1e3, 1e6},
    {"gemm_compute_eff", K_NUM, R_FRAC, true, EOFF(gemm_compute_eff), 0, 1, 1},
    {"gemm_memory_eff", K_NUM, R_FRAC, true, EOFF(gemm_memory_eff), 0, 1, 1},
    {"attn_prefill_eff", K_NUM, R_FRAC, true, EOFF(attn_prefill_eff), 0, 1, 1},
    {"attn_decode_eff", K_NUM, R_FRAC, true, EOFF(attn_decode_eff), 0, 1, 1},
    {"elementwise_eff", K_NUM, R_FRAC, true, EOFF(elementwise_eff), 0, 1, 1},
    {"allreduce_bw_eff", K_NUM, R_FRAC, true, EOFF(allreduce_bw_eff), 0, 1, 1},
    {"allreduce_latency_us", K_NUM, R_NONNEG, true, EOFF(allreduce_latency_ns), 0, 1e3, 1e6},
    {"runtime_overhead_mib", K_NUM, R_NONNEG, true, EOFF(runtime_overhead_bytes), 0, MIB, 16777216},
    {"cuda_graph_mib", K_NUM, R_NONNEG, true, EOFF(cuda_graph_bytes), 0, MIB, 16777216},
    {"activation_scale", K_NUM, R_POS, true, EOFF(activation_scale), 0, 1, 1e3},
    {"aliases", K_SPECIAL, R_ANY, false, 0, 0, 0, 0},
    {"fp8_static_activation_scale", K_BOOL, R_ANY, false, EOFF(fp8_static_act_scale), 0, 0, 0},
    {"state_memory_ratio", K_NUM, R_NONNEG, false, EOFF(state_memory_ratio), 0, 1, 1e3},
    {"max_prefill_tokens", K_U32, R_POS, false, EOFF(max_prefill_tokens), 0, 0, 1e7},
    {"schedule_conservativeness", K_NUM, R_POS, false, EOFF(schedule_conservativeness), 0, 1, 1e3},
    {"mem_fraction_static", K_BOOL, R_ANY, false, EOFF(static_mem_fraction), 0, 0, 0},
    {"stream_per_seq_us", K_NUM, R_NONNEG, false, EOFF(stream_per_seq_ns), 0, 1e3, 1e6},
};
enum { E_GRAPH_MODE = 3, E_ADMISSION = 13, E_ALIASES = 31 };

const char *graph_mode_name(graph_mode m) {
  static const char *const n[] = {"none", "decode_only", "piecewise", "full_and_piecewise"};
  return (unsigned)m < SIM_ARRAY_LEN(n) ? n[m] : "?";
}

/* "cudagraph_mode" (absent: full graphs for decode-only batches, the mode
 * servesim modelled before the key existed). */
static int parse_graph_mode(const jx *j, const cJSON *v, engine_cfg *e) {
  e->graph_mode = GRAPH_DECODE_ONLY;
  if (!v) return SIM_OK;
  if (!cJSON_IsString(v)) return jx_fail(j, v, NULL, "cudagraph_mode", "expected a string, got %s", jx_type_name(v));
  for (int m = GRAPH_NONE; m <= GRAPH_FULL_AND_PIECEWISE; m++)
    if (!strcmp(v->valuestring, graph_mode_name((graph_mode)m))) {
      e->graph_mode = (graph_mode)m;
      return SIM_OK;
    }
  return jx_fail(j, v, NULL, "cudagraph_mode",
                 "expected \"none\", \"decode_only\", \"piecewise\" or \"full_and_piecewise\", got \"%s\"",
                 v->valuestring);
}

int cfg_engine_parse(engine_cfg *e, const char *json, const char *what, sim_err *err) {
  memset(e, 0, sizeof *e);
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  const cJSON *found[SIM_ARRAY_LEN(engine_specs)];
  SIM_ASSERT(!strcmp(engine_specs[E_ADMISSION].key, "admission"));
  SIM_ASSERT(!strcmp(engine_specs[E_GRAPH_MODE].key, "cudagraph_mode"));
  SIM_ASSERT(!strcmp(engine_specs[E_ALIASES].key, "aliases"));
  rc = parse_strict(&j, j.root, NULL, engine_specs, SIM_ARRAY_LEN(engine_specs), e, found);
  if (!rc) {
    const cJSON *a = found[E_ADMISSION];
    if (!cJSON_IsString(a)) rc = jx_fail(&j, a, NULL, "admission", "expected a string, got %s", jx_type_name(a));
    else if (!strcmp(a->valuestring, "on_demand")) e->admission = ADMIT_ON_DEMAND;
    else if (!strcmp(a->valuestring, "reserve_full")) e->admission = ADMIT_RESERVE_FULL;
    else if (!strcmp(a->valuestring, "token_ratio")) e->admission = ADMIT_TOKEN_RATIO;
    else rc = jx_fail(&j, a, NULL, "admission", "expected \"on_demand\", \"reserve_full\" or \"token_ratio\", got \"%s\"",
                      a->valuestring);
  }
  if (!rc) rc = parse_graph_mode(&j, found[E_GRAPH_MODE], e);
  if (!rc) rc = parse_aliases(&j, found[E_ALIASES], e->aliases[0], sizeof e->aliases[0], &e->naliases);
  if (!rc) {
    uint32_t b = e->block_size;
    if (!cfg_block_size_ok(e, b))
      rc = jx_fail(&j, cJSON_GetObjectItemCaseSensitive(j.root, "block_size"), NULL, "block_size",
                   "must be one of %s, got %u", cfg_block_sizes_text(e), b);
  }
  jx_free(&j);
  return rc;
}
