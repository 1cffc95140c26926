/* cfg.c: finding named configs (disk, $SERVESIM_DATA_DIR, embedded), loading
 * them, and resolving a deployment against its model, GPU and engine.
 *
 * Name resolution order (cfg_find), first match wins:
 *   1. the argument is an existing regular file: read it from disk (for models
 *      a directory holding config.json also works, like a HF checkout);
 *   2. the argument contains '/': it must be an embedded relative path
 *      ("configs/gpus/h200.json"), else it is an unknown file;
 *   3. a bare name (".json" suffix optional): configs/<dir>/<name>.json under
 *      $SERVESIM_DATA_DIR when set, then among the embedded files; the name is
 *      tried as given, then lower-cased ("H200" finds h200).
 *   4. a name a known file declares among its "aliases" (a Hugging Face id such as
 *      meta-llama/Llama-3.1-70B-Instruct, a GPU's device string): that file; an
 *      id with a quantization suffix ("-FP8") is refused, naming --quantization.
 * Unknown names fail with SIM_EINPUT listing the known names of that kind and
 * the closest one ("did you mean").
 *
 * cfg_resolve fills every unset deploy_cfg field (defaults from the engine and
 * the model) and then validates the combination. It is idempotent: resolving
 * a resolved deploy_cfg again changes nothing. Error messages name fields the
 * way vLLM's flags spell them (tensor_parallel_size, max_model_len, ...). */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "config/cfg.h"
#include "config/cfg_names.h"
#include "config/settings.h"
#include "config/mig.h"
#include "config/engver.h"
#include "config/specdec.h"
#include "core/embed.h"

#define EMBED_PREFIX "<embedded> "

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && !strcmp(s + n - k, suf);
}

/* ---- finding ---------------------------------------------------------------- */

static int unknown(cfg_kind kind, const char *arg, sim_err *err) {
  char known[640], near[128];
  cfg_list(kind, known, sizeof known);
  cfg_suggest(kind, arg, near, sizeof near);
  return sim_errf(err, SIM_EINPUT, "unknown %s '%s'%s%s%s (known %ss: %s; or give the path of a JSON file)",
                  cfg_kind_word(kind), arg, near[0] ? ": did you mean '" : "", near, near[0] ? "'?" : "",
                  cfg_kind_word(kind), known[0] ? known : "none");
}

/* The quantization a checkpoint id names in its suffix ("...-FP8", "...-AWQ"), as --quantization spells it;
 * NULL when it names none. */
static const char *id_quantization(const char *id) {
  static const struct {
    const char *tag, *method;
  } tags[] = {{"nvfp4", "nvfp4"}, {"-fp4", "nvfp4"}, {"-fp8", "fp8"},   {"-awq", "awq"},   {"-gptq", "gptq"},
              {"w4a16", "int4"},  {"-int4", "int4"}, {"w8a8", "int8"}, {"-int8", "int8"}, {"mxfp4", "int4"}};
  char low[256];
  size_t i = 0;
  for (; id[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)id[i]);
  low[i] = 0;
  const char *base = strrchr(low, '/');
  base = base ? base : low;
  for (size_t k = 0; k < SIM_ARRAY_LEN(tags); k++)
    if (strstr(base, tags[k].tag)) return tags[k].method;
  return NULL;
}

static int find(cfg_kind kind, const char *arg, char *out, size_t n, bool *embedded, sim_err *err);

/* A name no file has that a known file declares as an alias (a Hugging Face id, a GPU's device string): that
 * file. A quantized checkpoint's id names the architecture only, so it is refused with the flag to give. */
static int find_alias(cfg_kind kind, const char *arg, char *out, size_t n, bool *embedded, sim_err *err) {
  char name[256];
  if (!cfg_alias_name(kind, arg, name, sizeof name)) return unknown(kind, arg, err);
  const char *q = kind == CFG_MODEL ? id_quantization(arg) : NULL;
  if (q)
    return sim_errf(err, SIM_EINPUT,
                    "%s is a %s checkpoint of the bundled model %s, whose file holds the architecture only: give "
                    "--model %s --quantization %s, or the checkpoint's own config.json (its quantization_config is "
                    "read)", arg, q, name, name, q);
  return find(kind, name, out, n, embedded, err);
}

static int put_path(char *out, size_t n, const char *p, sim_err *err) {
  if (strlen(p) >= n) return sim_errf(err, SIM_EINPUT, "%s: path too long", p);
  memcpy(out, p, strlen(p) + 1);
  return SIM_OK;
}

/* cfg_find plus whether the result is an embedded file. */
static int find(cfg_kind kind, const char *arg, char *out, size_t n, bool *embedded, sim_err *err) {
  *embedded = false;
  if (!arg || !*arg) {
    char known[640];
    cfg_list(kind, known, sizeof known);
    return sim_errf(err, SIM_EINPUT, "no %s given (known %ss: %s)", cfg_kind_word(kind), cfg_kind_word(kind), known);
  }
  if (sim_is_file(arg)) return put_path(out, n, arg, err);
  if (kind == CFG_MODEL && sim_is_dir(arg)) {
    char p[1024];
    snprintf(p, sizeof p, "%s/config.json", arg);
    if (sim_is_file(p)) return put_path(out, n, p, err);
    return sim_errf(err, SIM_EINPUT, "%s: a directory without config.json", arg);
  }
  if (strchr(arg, '/')) {
    if (sim_embed_find(arg)) {
      *embedded = true;
      return put_path(out, n, arg, err);
    }
    char known[640], name[256];
    if (cfg_alias_name(kind, arg, name, sizeof name)) return find_alias(kind, arg, out, n, embedded, err);
    cfg_list(kind, known, sizeof known);
    return sim_errf(err, SIM_EINPUT, "%s: no such %s file (known %ss: %s)", arg, cfg_kind_word(kind), cfg_kind_word(kind),
                    known);
  }
  char name[256];
  size_t len = strlen(arg);
  if (ends_with(arg, ".json")) len -= 5;
  if (len == 0 || len >= sizeof name) return unknown(kind, arg, err);
  memcpy(name, arg, len);
  name[len] = 0;
  const char *dd = getenv("SERVESIM_DATA_DIR");
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) { /* second try: lower case */
      bool changed = false;
      for (char *s = name; *s; s++) {
        char lo = (char)tolower((unsigned char)*s);
        changed |= lo != *s;
        *s = lo;
      }
      if (!changed) break;
    }
    char rel[512], p[1536];
    snprintf(rel, sizeof rel, "configs/%s/%s.json", cfg_kind_dir(kind), name);
    if (dd && *dd) {
      snprintf(p, sizeof p, "%s/%s", dd, rel);
      if (sim_is_file(p)) return put_path(out, n, p, err);
    }
    if (sim_embed_find(rel)) {
      *embedded = true;
      return put_path(out, n, rel, err);
    }
  }
  return find_alias(kind, arg, out, n, embedded, err);
}

int cfg_find(cfg_kind kind, const char *name_or_path, char *path_out, size_t n, sim_err *err) {
  bool emb;
  return find(kind, name_or_path, path_out, n, &emb, err);
}

/* Finds and reads a config; *what gets "<path>" or "<embedded> <path>". */
static int load_text(cfg_kind kind, const char *arg, char **text, char *what, size_t wn, sim_err *err) {
  char path[1024];
  bool emb;
  int rc = find(kind, arg, path, sizeof path, &emb, err);
  if (rc) return rc;
  if (emb) {
    const sim_embedded_file *f = sim_embed_find(path);
    SIM_ASSERT(f);
    *text = sim_malloc(f->len + 1);
    memcpy(*text, f->data, f->len + 1);
    snprintf(what, wn, EMBED_PREFIX "%s", path);
    return SIM_OK;
  }
  snprintf(what, wn, "%s", path);
  return sim_read_file(path, text, NULL, err);
}

int cfg_read(cfg_kind kind, const char *name_or_path, char **text, char *what, size_t wn, sim_err *err) {
  return load_text(kind, name_or_path, text, what, wn, err);
}

int cfg_model_load(model_cfg *m, const char *name_or_path, sim_err *err) {
  char *text, what[1100];
  int rc = load_text(CFG_MODEL, name_or_path, &text, what, sizeof what, err);
  if (rc) return rc;
  rc = cfg_model_parse(m, text, what, err);
  free(text);
  if (rc || m->ckpt_quant || !strncmp(what, EMBED_PREFIX, strlen(EMBED_PREFIX))) return rc;
  /* a ModelOpt checkpoint's quantization beside its config */
  char side[1200];
  size_t n = strlen(what);
  const char *slash = strrchr(what, '/');
  const char *base = slash ? slash + 1 : what;
  if (!strcmp(base, "config.json")) snprintf(side, sizeof side, "%.*shf_quant_config.json", (int)(base - what), what);
  else if (n > 5 && !strcmp(what + n - 5, ".json")) snprintf(side, sizeof side, "%.*s.hf_quant_config.json", (int)(n - 5), what);
  else return SIM_OK;
  if (!sim_is_file(side)) return SIM_OK;
  if ((rc = sim_read_file(side, &text, NULL, err))) return rc;
  rc = cfg_model_quant_sidecar(m, text, side, err);
  free(text);
  return rc;
}

int cfg_gpu_load(gpu_cfg *g, const char *name_or_path, sim_err *err) {
  char *text, what[1100], whole[1024], profile[64];
  if (mig_split(name_or_path, whole, sizeof whole, profile, sizeof profile)) { /* "h200:3g.71gb": a MIG slice */
    gpu_cfg *w = sim_malloc(sizeof *w);
    int rc = cfg_gpu_load(w, whole, err);
    if (!rc) rc = mig_slice(g, w, profile, err);
    free(w);
    return rc ? sim_err_prefix(err, "--gpu %s", name_or_path) : SIM_OK;
  }
  int rc = load_text(CFG_GPU, name_or_path, &text, what, sizeof what, err);
  if (rc) return rc;
  rc = cfg_gpu_parse(g, text, what, err);
  free(text);
  return rc;
}

int cfg_engine_load(engine_cfg *e, const char *name_or_path, sim_err *err) {
  char *text, what[1100], name[1024];
  /* NAME@VERSION: the engine file, then that version's facts (engver.h); a
   * path that exists as given is never split */
  snprintf(name, sizeof name, "%s", name_or_path);
  char *at = strrchr(name, '@');
  const char *version = NULL;
  if (at && !sim_is_file(name_or_path)) {
    *at = 0;
    version = at + 1;
  }
  int rc = load_text(CFG_ENGINE, name, &text, what, sizeof what, err);
  if (rc) return rc;
  rc = cfg_engine_parse(e, text, what, err);
  free(text);
  if (!rc) rc = engver_check(e, err);
  if (!rc && version) rc = engver_apply(e, version, err);
  return rc;
}

/* ---- deployment ------------------------------------------------------------- */

void deploy_init(deploy_cfg *d) {
  memset(d, 0, sizeof *d);
  d->act_dtype = d->weight_dtype = d->kv_dtype = DT_BF16;
  d->gpu_memory_utilization = -1;
  d->enable_prefix_caching = -1;
  d->enable_chunked_prefill = -1;
  d->async_scheduling = -1;
  d->router = ROUTE_ROUND_ROBIN;
  d->spec_accept_length = -1;
}


/* cfg_resolve's parts: parallelism (TP, DP, EP, PP, nodes, replicas), precision (activations, weights, KV
 * cache), and the scheduler and memory knobs (engine-version defaults). */
/* The TP sizes the table allows that fit a model's heads: dividing the attention heads, and dividing the KV
 * heads or a multiple of them (vLLM replicates KV heads then), as "1, 2, 4, 8". */
static void tp_sizes_that_fit(const model_cfg *m, char *buf, size_t n) {
  const setting *s = settings_by_key("tensor_parallel_size");
  size_t k = 0;
  buf[0] = 0;
  for (uint32_t t = (uint32_t)s->lo; t <= (uint32_t)s->hi && k < n; t++)
    if (m->q_heads % t == 0 && (m->kv_heads % t == 0 || t % m->kv_heads == 0))
      k += (size_t)snprintf(buf + k, n - k, "%s%u", k ? ", " : "", t);
}

static int resolve_parallel(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, sim_err *err) {
  if (g->mig_parent[0] && (d->tp > 1 || d->pp > 1 || d->dp > 1))
    return sim_errf(err, SIM_EINPUT,
                    "%s is a MIG slice: slices share no NVLink, so tensor, pipeline and data parallelism across them "
                    "are not modelled (tensor_parallel_size %u, pipeline_parallel_size %u, data_parallel_size %u); "
                    "run one replica per slice (--replicas N) or use a larger slice",
                    g->name, d->tp, d->pp, d->dp);
  char fit[160];
  tp_sizes_that_fit(m, fit, sizeof fit);
  if (m->q_heads % d->tp)
    return sim_errf(err, SIM_EINPUT, "tensor_parallel_size %u does not divide num_attention_heads %u of %s (TP sizes "
                    "that fit its heads: %s)", d->tp, m->q_heads, m->name, fit);
  if (m->kv_heads % d->tp && d->tp % m->kv_heads)
    return sim_errf(err, SIM_EINPUT,
                    "tensor_parallel_size %u neither divides num_key_value_heads %u of %s nor is a multiple of it (TP "
                    "sizes that fit its heads: %s)", d->tp, m->kv_heads, m->name, fit);
  /* vLLM's MambaMixer2 splits the heads and the B/C groups over TP (a single group is replicated) */
  if (m->mamba && (m->mamba_heads % d->tp || (m->mamba_groups % d->tp && m->mamba_groups != 1)))
    return sim_errf(err, SIM_EINPUT,
                    "tensor_parallel_size %u does not divide mamba_num_heads %u and n_groups %u of %s (the Mamba-2 "
                    "layers split both over TP)", d->tp, m->mamba_heads, m->mamba_groups, m->name);
  if (!d->gpus_per_node) d->gpus_per_node = g->gpus_per_node ? g->gpus_per_node : 8;
  if (d->tp > d->gpus_per_node && d->tp % d->gpus_per_node)
    return sim_errf(err, SIM_EINPUT,
                    "tensor_parallel_size %u spans nodes of %u GPUs but is not a multiple of it (a TP group takes "
                    "whole nodes; set --gpus-per-node if your nodes hold more)",
                    d->tp, d->gpus_per_node);
  if (d->expert_parallel && !m->experts)
    return sim_errf(err, SIM_EINPUT, "enable_expert_parallel: %s has no experts (a dense model)", m->name);
  if (d->expert_parallel && !d->moe_ep && m->experts % deploy_ep(d))
    return sim_errf(err, SIM_EINPUT,
                    "enable_expert_parallel: data_parallel_size x tensor_parallel_size = %u does not divide the %u "
                    "experts of %s",
                    deploy_ep(d), m->experts, m->name);
  if (!d->moe_ep) d->moe_ep = deploy_ep(d); /* resolved: the MoE layers' EP degree, 1 without experts parallel */
  {
    uint32_t moe_gpus = d->tp * d->dp;
    if (d->moe_ep > 1 && !m->experts)
      return sim_errf(err, SIM_EINPUT, "moe_expert_parallel_size %u: %s has no experts (a dense model)", d->moe_ep,
                      m->name);
    if (d->expert_parallel && d->moe_ep != moe_gpus)
      return sim_errf(err, SIM_EINPUT,
                      "enable_expert_parallel puts whole experts on all %u data-parallel x tensor-parallel ranks, "
                      "moe_expert_parallel_size %u asks for %u groups: give one of them",
                      moe_gpus, d->moe_ep, d->moe_ep);
    if (moe_gpus % d->moe_ep)
      return sim_errf(err, SIM_EINPUT,
                      "moe_expert_parallel_size %u does not divide the %u GPUs of the MoE layers (data_parallel_size "
                      "x tensor_parallel_size)", d->moe_ep, moe_gpus);
    if (m->experts && m->experts % d->moe_ep)
      return sim_errf(err, SIM_EINPUT, "moe_expert_parallel_size %u does not divide the %u experts of %s", d->moe_ep,
                      m->experts, m->name);
  }
  if (d->pp > m->layers)
    return sim_errf(err, SIM_EINPUT, "pipeline_parallel_size %u exceeds num_hidden_layers %u of %s (a stage holds at "
                    "least one layer)", d->pp, m->layers, m->name);
  if (d->pp > 1 && d->tp < d->gpus_per_node && d->gpus_per_node % d->tp)
    return sim_errf(err, SIM_EINPUT,
                    "tensor_parallel_size %u does not divide gpus_per_node %u: with pipeline parallelism a stage's "
                    "TP group must not straddle two nodes",
                    d->tp, d->gpus_per_node);
  if (d->dp > 1 && d->pp > 1)
    return sim_errf(err, SIM_EINPUT, "data_parallel_size %u with pipeline_parallel_size %u: not modelled (data "
                    "parallelism here is vLLM's attention data parallelism of one pipeline stage)", d->dp, d->pp);
  if (d->dp > 1 && d->tp * d->dp > d->gpus_per_node && (d->tp * d->dp) % d->gpus_per_node)
    return sim_errf(err, SIM_EINPUT,
                    "data_parallel_size %u x tensor_parallel_size %u = %u GPUs spans nodes of %u but is not a multiple "
                    "of it", d->dp, d->tp, d->dp * d->tp, d->gpus_per_node);
  if (d->pp > 1 && d->async_scheduling > 0)
    return sim_errf(err, SIM_EINPUT,
                    "async_scheduling is not supported with pipeline_parallel_size %u > 1 (vLLM refuses the "
                    "combination: engine/arg_utils.py); drop --async-scheduling",
                    d->pp);
  if (d->pp > 1) d->async_scheduling = 0; /* vLLM disables it: config/vllm.py */
  return SIM_OK;
}

static int resolve_precision(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, sim_err *err) {
  if (!d->act_dtype_set)
    d->act_dtype = (m->native_dtype == DT_BF16 || m->native_dtype == DT_FP16) ? m->native_dtype : DT_BF16;
  else if (d->act_dtype != DT_BF16 && d->act_dtype != DT_FP16)
    return sim_errf(err, SIM_EINPUT, "dtype %s is not supported: activations run in bf16 or fp16 (for %s weights use quantization)",
                    dtype_name(d->act_dtype), dtype_name(d->act_dtype));
  if (g->flops[d->act_dtype] <= 0)
    return sim_errf(err, SIM_EINPUT, "dtype %s is not supported by %s", dtype_name(d->act_dtype), g->name);
  if (!d->weight_dtype_set) d->weight_dtype = m->ckpt_quant ? m->ckpt_wdtype : d->act_dtype; /* vLLM: the checkpoint's */
  switch (d->weight_dtype) {
    case DT_BF16:
    case DT_FP16:
      if (d->weight_dtype != d->act_dtype)
        return sim_errf(err, SIM_EINPUT, "quantization: unquantized weights run in the activation dtype %s, not %s",
                        dtype_name(d->act_dtype), dtype_name(d->weight_dtype));
      break;
    case DT_FP8:
    case DT_INT8:
      /* vLLM runs FP8 checkpoints weight-only where the GPU has no FP8 tensor cores (A100: FP8 Marlin, W8A16;
         docs/features/quantization/fp8.md), priced as a weight-only GEMM (hw/cost.c); TensorRT-LLM does not */
      if (d->weight_dtype == DT_FP8 && g->flops[DT_FP8] <= 0 && !strcmp(e->name, "vllm")) break;
      if (g->flops[d->weight_dtype] <= 0) {
        sim_dtype other = d->weight_dtype == DT_FP8 ? DT_INT8 : DT_FP8;
        return sim_errf(err, SIM_EINPUT,
                        "quantization %s needs %s tensor cores, which %s (%s) lacks; use %s%sint4 (awq/gptq) or a GPU "
                        "with %s support",
                        dtype_name(d->weight_dtype), dtype_name(d->weight_dtype), g->name, g->full_name,
                        g->flops[other] > 0 ? dtype_name(other) : "", g->flops[other] > 0 ? ", " : "",
                        dtype_name(d->weight_dtype));
      }
      break;
    case DT_INT4:
      break; /* weight-only: dequantized into the activation-dtype GEMM, any GPU */
    case DT_FP4:
      break; /* NVFP4: W4A4 on FP4 tensor cores (Blackwell), else weight-only (vLLM's FP4 Marlin), any GPU */
    default:
      return sim_errf(err, SIM_EINPUT, "quantization %s is not supported (none, fp8, int8, int4, awq, gptq, nvfp4)",
                      dtype_name(d->weight_dtype));
  }
  if (!d->kv_dtype_set) d->kv_dtype = d->act_dtype;
  if (d->kv_dtype != d->act_dtype && d->kv_dtype != DT_FP8)
    return sim_errf(err, SIM_EINPUT, "kv_cache_dtype %s is not supported (auto = dtype %s, or fp8)",
                    dtype_name(d->kv_dtype), dtype_name(d->act_dtype));
  return SIM_OK;
}

static int resolve_knobs(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, sim_err *err) {
  uint32_t def_tokens, def_seqs;
  engver_batch_defaults(e, g, &def_tokens, &def_seqs);
  if (!d->max_num_seqs) d->max_num_seqs = def_seqs;
  bool util_given = d->gpu_memory_utilization >= 0;
  settings_fill(d, e, SD_ENGINE); /* block size, memory fraction, prefix caching, chunking, async: the engine file's */
  if (d->schedule_lpm && !engver_is_sglang(e))
    return sim_errf(err, SIM_EINPUT, "schedule_policy lpm is SGLang's (--engine sglang); %s schedules its waiting "
                    "queue first come, first served", e->name);
  if (d->mixed_chunk && !engver_is_sglang(e))
    return sim_errf(err, SIM_EINPUT, "enable_mixed_chunk is SGLang's (--engine sglang); %s mixes prefill chunks and "
                    "decodes in one step always", e->name);
  if (d->mixed_chunk && !d->enable_chunked_prefill)
    return sim_errf(err, SIM_EINPUT, "enable_mixed_chunk needs chunked prefill (SGLang: is_mixed_chunk = "
                    "chunked_prefill_size is not None and enable_mixed_chunk); drop --no-enable-chunked-prefill");
  if (!d->max_model_len) d->max_model_len = m->max_pos;
  if (d->max_model_len > m->max_pos)
    return sim_errf(err, SIM_EINPUT, "max_model_len %u exceeds max_position_embeddings %u of %s", d->max_model_len,
                    m->max_pos, m->name);
  if (!d->max_num_batched_tokens) {
    d->max_num_batched_tokens = def_tokens;
    if (engver_is_sglang(e) && d->dp > 1) /* DP attention: chunked_prefill_size // dp_size (engver_sglang.c) */
      d->max_num_batched_tokens = SIM_MAX(def_tokens / d->dp, 1u);
    /* vLLM: without chunking the default budget grows to hold a whole prompt */
    if (!d->enable_chunked_prefill && d->max_num_batched_tokens < d->max_model_len)
      d->max_num_batched_tokens = d->max_model_len;
  } else if (!d->enable_chunked_prefill && d->max_num_batched_tokens < d->max_model_len) {
    return sim_errf(err, SIM_EINPUT,
                    "max_num_batched_tokens %u is smaller than max_model_len %u while chunked prefill is disabled "
                    "(a whole prompt must fit one step): raise max_num_batched_tokens, lower max_model_len or "
                    "enable chunked prefill",
                    d->max_num_batched_tokens, d->max_model_len);
  }
  if (!d->max_num_seqs) return sim_errf(err, SIM_EINPUT, "max_num_seqs must be >= 1");
  if (e->admission == ADMIT_TOKEN_RATIO && (!e->max_prefill_tokens || !(e->schedule_conservativeness > 0)))
    return sim_errf(err, SIM_EINPUT, "engine %s: admission token_ratio needs max_prefill_tokens and "
                    "schedule_conservativeness in its file", e->name);
  /* SGLang: mem_fraction_static from GPU memory, TP x PP and the prefill chunk (engver.h) */
  if (!util_given && e->static_mem_fraction)
    d->gpu_memory_utilization = engver_mem_fraction_static(
        e, g, d->tp * d->dp, d->pp, d->dp, d->enable_chunked_prefill ? d->max_num_batched_tokens : e->max_prefill_tokens);
  if (!cfg_block_size_ok(e, d->block_size))
    return sim_errf(err, SIM_EINPUT, "block_size %u is not one of %s (engine %s)", d->block_size,
                    cfg_block_sizes_text(e), e->name);
  if (!(d->gpu_memory_utilization > 0 && d->gpu_memory_utilization <= 1))
    return sim_errf(err, SIM_EINPUT, "gpu_memory_utilization %g is not in (0, 1]", d->gpu_memory_utilization);
  if ((unsigned)d->router > ROUTE_LEAST_KV) return sim_errf(err, SIM_EINPUT, "router: unknown policy %d", (int)d->router);
  return SIM_OK;
}

/* --mode disagg: each pool's shape filled from the deployment's own where not given, then checked as a deployment
 * of its own (its TP against the model's heads and the nodes), and the KV re-sharding between the pools: a decode
 * rank's KV heads must come from whole prefill ranks' (or the reverse), so the larger TP must be a multiple of the
 * smaller (vLLM's NixlConnector refuses other heterogeneous TP layouts: it needs tp_ratio to be an integer). */
static int resolve_disagg(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, sim_err *err) {
  if (!d->disagg) return SIM_OK; /* an aggregated deployment keeps its pool fields unset (check_agg_pools) */
  if (!d->prefill_tp) d->prefill_tp = d->tp;
  if (!d->decode_tp) d->decode_tp = d->tp;
  if (!d->prefill_dp) d->prefill_dp = d->dp;
  if (!d->decode_dp) d->decode_dp = d->dp;
  if (!d->prefill_max_num_seqs) d->prefill_max_num_seqs = d->max_num_seqs;
  if (!d->prefill_max_num_batched_tokens) d->prefill_max_num_batched_tokens = d->max_num_batched_tokens;
  if (!d->decode_max_num_seqs) d->decode_max_num_seqs = d->max_num_seqs;
  if (!d->decode_max_num_batched_tokens) d->decode_max_num_batched_tokens = d->max_num_batched_tokens;
  if (d->pp > 1)
    return sim_errf(err, SIM_EINPUT,
                    "--mode disagg with pipeline_parallel_size %u: not modelled (the pools are --prefill-workers x "
                    "--prefill-tp x --prefill-dp and the decode pool's alike; pipeline stages inside a pool are not)",
                    d->pp);
  if (d->replicas > 1) { /* R xPyD groups: pools R times over behind one router each, as Dynamo scales its pools
                            (one frontend routes over every prefill worker and every decode worker) */
    if ((uint64_t)d->prefill_workers * d->replicas > 4096 || (uint64_t)d->decode_workers * d->replicas > 4096)
      return sim_errf(err, SIM_EINPUT, "--mode disagg: replicas %u x %uP%uD: more than 4096 workers in a pool",
                      d->replicas, d->prefill_workers, d->decode_workers);
    d->prefill_workers *= d->replicas, d->decode_workers *= d->replicas;
    d->replicas = 1;
  }
  for (int k = 0; k < 2; k++) {
    deploy_cfg p;
    deploy_pool(d, k == 1, &p);
    if (resolve_parallel(&p, m, g, err)) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      return sim_errf(err, SIM_EINPUT, "--mode disagg, %s pool: %s", k ? "decode" : "prefill", why);
    }
  }
  uint32_t lo = d->prefill_tp < d->decode_tp ? d->prefill_tp : d->decode_tp;
  uint32_t hi = d->prefill_tp < d->decode_tp ? d->decode_tp : d->prefill_tp;
  if (hi % lo)
    return sim_errf(err, SIM_EINPUT,
                    "--mode disagg: prefill_tp %u and decode_tp %u: the KV cache cannot be re-sharded between them "
                    "(the larger TP must be a multiple of the smaller: %u %% %u = %u)",
                    d->prefill_tp, d->decode_tp, hi, lo, hi % lo);
  return SIM_OK;
}

void deploy_pool(const deploy_cfg *d, bool decode, deploy_cfg *out) {
  *out = *d;
  out->disagg = false;
  out->tp = decode ? d->decode_tp : d->prefill_tp;
  out->dp = decode ? d->decode_dp : d->prefill_dp;
  out->replicas = decode ? d->decode_workers : d->prefill_workers;
  out->max_num_seqs = decode ? d->decode_max_num_seqs : d->prefill_max_num_seqs;
  out->max_num_batched_tokens = decode ? d->decode_max_num_batched_tokens : d->prefill_max_num_batched_tokens;
  /* expert parallelism over all the deployment's ranks stays over all the pool's */
  if (d->moe_ep > 1 && d->moe_ep == d->tp * d->dp) out->moe_ep = out->tp * out->dp;
}

/* A pool setting given to an aggregated deployment would be ignored without a word: refused instead (a value of 1
 * where 1 is the default is what the user gets anyway). Checked before anything is filled in. */
static int check_agg_pools(const deploy_cfg *d, sim_err *err) {
  if (d->disagg || d->resolved) return SIM_OK;
  for (size_t i = 0; i < settings_count(); i++) {
    const setting *st = settings_at(i);
    if (!(st->use & SET_DISAGG) || !strcmp(st->key, "mode") || !setting_given(st, d)) continue;
    char v[64];
    setting_text(st, d, v, sizeof v);
    if (st->def == SD_ONE && !strcmp(v, "1")) continue;
    return sim_errf(err, SIM_EINPUT, "%s %s (--%s) is a setting of a disaggregated deployment, and this one is "
                    "aggregated: add --mode disagg (scenario \"mode\": \"disagg\") or drop it", st->key, v, st->flag);
  }
  return SIM_OK;
}

int cfg_resolve(deploy_cfg *d, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, sim_err *err) {
  int rc = check_agg_pools(d, err);
  if (rc) return rc;
  settings_fill(d, e, SD_ONE); /* parallel sizes and replicas: 1 */
  rc = settings_check(d, err);
  /* vLLM's experts go whole over all ranks or are sliced over all of them (FusedMoEParallelConfig) */
  if (!rc && d->moe_ep > 1 && d->moe_ep != d->tp * d->dp && !strcmp(e->name, "vllm"))
    rc = sim_errf(err, SIM_EINPUT,
                  "moe_expert_parallel_size %u over %u GPUs: vLLM runs expert parallelism over all data-parallel x "
                  "tensor-parallel ranks only (--enable-expert-parallel); a MoE TP x EP split is TensorRT-LLM's or "
                  "SGLang's", d->moe_ep, d->tp * d->dp);
  if (!rc) rc = resolve_parallel(d, m, g, err);
  if (!rc) rc = resolve_precision(d, m, g, e, err);
  if (!rc) rc = resolve_knobs(d, m, g, e, err);
  if (!rc) rc = resolve_disagg(d, m, g, err);
  if (!rc) rc = specdec_resolve(d, m, e, err);
  /* SGLang's PD mode has no conditional path: every request is bootstrapped on a prefill worker
     (disaggregation/prefill.py, decode.py) */
  if (!rc && d->disagg && d->max_local_prefill_length && engver_is_sglang(e))
    rc = sim_errf(err, SIM_EINPUT, "max_local_prefill_length %u: SGLang's PD disaggregation prefills every request on "
                  "a prefill worker (conditional disaggregation is Dynamo's and TensorRT-LLM's)",
                  d->max_local_prefill_length);
  d->resolved = rc == SIM_OK;
  return rc;
}

void deploy_layout_text(const deploy_cfg *d, char *buf, size_t n) {
  if (d->disagg) { /* the pools, AIConfigurator's xPyD */
    snprintf(buf, n, "%uP%uD: prefill %u x TP%u%s%.0u, decode %u x TP%u%s%.0u", d->prefill_workers, d->decode_workers,
             d->prefill_workers, d->prefill_tp, d->prefill_dp > 1 ? " x DP" : "", d->prefill_dp > 1 ? d->prefill_dp : 0,
             d->decode_workers, d->decode_tp, d->decode_dp > 1 ? " x DP" : "", d->decode_dp > 1 ? d->decode_dp : 0);
    return;
  }
  uint32_t tp = d->tp ? d->tp : 1, pp = d->pp ? d->pp : 1, g = d->gpus_per_node ? d->gpus_per_node : 8;
  uint32_t gpus = tp * pp * deploy_dp(d);
  size_t k = deploy_dp(d) > 1 ? (size_t)snprintf(buf, n, "DP%u x TP%u", deploy_dp(d), tp)
                              : (size_t)snprintf(buf, n, "TP%u", tp);
  uint32_t ep = deploy_ep(d), moe_tp = tp * deploy_dp(d) / (ep ? ep : 1);
  if (ep > 1 && moe_tp > 1 && k < n) k += (size_t)snprintf(buf + k, n - k, " (MoE TP%u x EP%u)", moe_tp, ep);
  else if (ep > 1 && k < n) k += (size_t)snprintf(buf + k, n - k, " (EP%u)", ep);
  if (pp > 1 && k < n) k += (size_t)snprintf(buf + k, n - k, " x PP%u", pp);
  if (gpus > g && k < n) snprintf(buf + k, n - k, " over %u nodes of %u", (gpus + g - 1) / g, g);
}

/* ---- names ------------------------------------------------------------------ */

bool cfg_parse_quantization(const char *s, sim_dtype act, sim_dtype *weight_out) {
  static const struct {
    const char *name;
    int dt; /* -1: the activation dtype */
  } tab[] = {{"none", -1},        {"fp8", DT_FP8},         {"int8", DT_INT8},
             {"int4", DT_INT4},   {"awq", DT_INT4},        {"gptq", DT_INT4},
             {"awq_marlin", DT_INT4}, {"gptq_marlin", DT_INT4}, {"nvfp4", DT_FP4},
             {"fp4", DT_FP4},     {"modelopt_fp4", DT_FP4}};
  if (!s) return false;
  for (size_t i = 0; i < SIM_ARRAY_LEN(tab); i++)
    if (!strcasecmp(s, tab[i].name)) {
      *weight_out = tab[i].dt < 0 ? act : (sim_dtype)tab[i].dt;
      return true;
    }
  return false;
}

const char *route_policy_name(route_policy r) {
  switch (r) {
    case ROUTE_ROUND_ROBIN: return "round_robin";
    case ROUTE_LEAST_OUTSTANDING: return "least_outstanding";
    case ROUTE_LEAST_KV: return "least_kv";
  }
  return "?";
}

const char *moe_routing_name(moe_routing r) {
  switch (r) {
    case MOE_POWER_LAW_101: return "power_law_1.01";
    case MOE_BALANCED: return "balanced";
    case MOE_POWER_LAW_12: return "power_law_1.2";
  }
  return "?";
}

bool moe_routing_parse(const char *s, moe_routing *out) {
  for (int r = MOE_BALANCED; r <= MOE_POWER_LAW_12; r++)
    if (s && !strcmp(s, moe_routing_name((moe_routing)r))) {
      *out = (moe_routing)r;
      return true;
    }
  return false;
}

static const char *const ar_names[] = {"auto", "table", "link"};

bool cfg_parse_allreduce(const char *s, ar_source *out) {
  for (int a = AR_AUTO; s && a <= AR_LINK; a++)
    if (!strcmp(s, ar_names[a])) {
      *out = (ar_source)a;
      return true;
    }
  return false;
}

const char *ar_source_name(ar_source a) { return a >= AR_AUTO && a <= AR_LINK ? ar_names[a] : "?"; }

bool route_policy_parse(const char *s, route_policy *out) {
  static const struct {
    const char *name;
    route_policy r;
  } tab[] = {{"round_robin", ROUTE_ROUND_ROBIN},
             {"rr", ROUTE_ROUND_ROBIN},
             {"least_outstanding", ROUTE_LEAST_OUTSTANDING},
             {"lor", ROUTE_LEAST_OUTSTANDING},
             {"least_outstanding_requests", ROUTE_LEAST_OUTSTANDING},
             {"least_kv", ROUTE_LEAST_KV}};
  if (!s) return false;
  char norm[64];
  size_t n = strlen(s);
  if (n >= sizeof norm) return false;
  for (size_t i = 0; i <= n; i++) norm[i] = s[i] == '-' ? '_' : (char)tolower((unsigned char)s[i]);
  for (size_t i = 0; i < SIM_ARRAY_LEN(tab); i++)
    if (!strcmp(norm, tab[i].name)) {
      *out = tab[i].r;
      return true;
    }
  return false;
}
