/* settings.c: the table of deployment settings and the loops over it (see
 * settings.h). A row's order is its order in echoes, help texts and sweep
 * grids (the grid index varies the later axes fastest). */
#include "config/settings.h"

#include "config/specdec.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* ---- the choices ------------------------------------------------------------------------------------- */

static bool dtype_parse_set(deploy_cfg *d, const char *t) {
  sim_dtype x;
  if (!strcmp(t, "auto")) return d->act_dtype_set = false, true;
  if (!dtype_parse(t, &x) || (x != DT_BF16 && x != DT_FP16)) return false;
  d->act_dtype = x;
  d->act_dtype_set = true;
  return true;
}
static const char *dtype_show(const deploy_cfg *d) { return d->act_dtype_set ? dtype_name(d->act_dtype) : "auto"; }
static const char *dtype_echo(const deploy_cfg *d) { return dtype_name(d->act_dtype); }
static bool dtype_given(const deploy_cfg *d) { return d->act_dtype_set; }

/* --quantization: the weights' dtype, "none" = the activations' (needs the activation dtype when given) */
static bool quant_parse(deploy_cfg *d, const char *t) {
  sim_dtype w;
  if (!cfg_parse_quantization(t, d->act_dtype_set ? d->act_dtype : DT_BF16, &w)) return false;
  d->weight_dtype = w;
  d->weight_dtype_set = strcasecmp(t, "none") != 0;
  return true;
}
static const char *quant_show(const deploy_cfg *d) {
  return d->weight_dtype_set && d->weight_dtype != d->act_dtype ? dtype_name(d->weight_dtype) : "none";
}
static const char *quant_echo(const deploy_cfg *d) { return dtype_name(d->weight_dtype); }
static bool quant_given(const deploy_cfg *d) { return d->weight_dtype_set; }

static bool kv_parse(deploy_cfg *d, const char *t) {
  sim_dtype x;
  if (!strcmp(t, "auto")) return d->kv_dtype_set = false, true;
  if (!dtype_parse(t, &x) || (x != DT_FP8 && x != DT_BF16 && x != DT_FP16)) return false;
  d->kv_dtype = x;
  d->kv_dtype_set = true;
  return true;
}
static const char *kv_show(const deploy_cfg *d) { return d->kv_dtype_set ? dtype_name(d->kv_dtype) : "auto"; }
static const char *kv_echo(const deploy_cfg *d) { return dtype_name(d->kv_dtype); }
static bool kv_given(const deploy_cfg *d) { return d->kv_dtype_set; }

static bool ar_parse(deploy_cfg *d, const char *t) { return cfg_parse_allreduce(t, &d->allreduce); }
static const char *ar_show(const deploy_cfg *d) { return ar_source_name(d->allreduce); }
static bool ar_given(const deploy_cfg *d) { return d->allreduce != AR_AUTO; }

static bool moe_parse(deploy_cfg *d, const char *t) { return moe_routing_parse(t, &d->moe_routing); }
static const char *moe_show(const deploy_cfg *d) { return moe_routing_name(d->moe_routing); }
static bool moe_given(const deploy_cfg *d) { return d->moe_routing != MOE_BALANCED; }

static bool mode_parse(deploy_cfg *d, const char *t) {
  if (strcmp(t, "agg") && strcmp(t, "disagg")) return false;
  d->disagg = !strcmp(t, "disagg");
  return true;
}
static const char *mode_show(const deploy_cfg *d) { return d->disagg ? "disagg" : "agg"; }
static bool mode_given(const deploy_cfg *d) { return d->disagg; }

static bool router_parse(deploy_cfg *d, const char *t) { return route_policy_parse(t, &d->router); }
static const char *router_show(const deploy_cfg *d) { return route_policy_name(d->router); }
static bool router_given(const deploy_cfg *d) { return d->router != ROUTE_ROUND_ROBIN; }

static bool policy_parse(deploy_cfg *d, const char *t) {
  if (strcmp(t, "fcfs") && strcmp(t, "lpm")) return false;
  d->schedule_lpm = !strcmp(t, "lpm");
  return true;
}
static const char *policy_show(const deploy_cfg *d) { return d->schedule_lpm ? "lpm" : "fcfs"; }
static bool policy_given(const deploy_cfg *d) { return d->schedule_lpm; }

/* speculative decoding (config/specdec.h): the whole --speculative-config JSON, and its method and k apart (sweep
   axes); the JSON row counts as given when it holds more than those two */
static bool specjson_given(const deploy_cfg *d) {
  return d->spec_model[0] || d->spec_draft_tp || d->spec_draft_vocab || d->spec_disable_bs || d->spec_n_rates ||
         d->spec_accept_length >= 0 || d->spec_dataset[0];
}
static const char *specjson_echo(const deploy_cfg *d) {
  static _Thread_local char buf[1024];
  specdec_json_text(d, buf, sizeof buf);
  return buf;
}
static const char *specjson_show(const deploy_cfg *d) { /* as a shell word */
  static _Thread_local char buf[1040];
  snprintf(buf, sizeof buf, "'%s'", specjson_echo(d));
  return buf;
}
static bool specjson_parse(deploy_cfg *d, const char *t) {
  char why[8];
  return specdec_parse(d, t, why, sizeof why);
}
static bool specm_parse(deploy_cfg *d, const char *t) { return spec_method_parse(t, &d->spec_method); }
static const char *specm_show(const deploy_cfg *d) { return spec_method_name(d->spec_method); }
static bool specm_given(const deploy_cfg *d) { return d->spec_method != SPEC_NONE; }

/* ---- the table ----------------------------------------------------------------------------------------- */

#define OFF(f) offsetof(deploy_cfg, f)
#define EOFF(f) offsetof(engine_cfg, f)
#define CHOICE(p, s, e, g, c) .parse = p, .show = s, .echo = e, .given = g, .choices = c

static const setting SETTINGS[] = {
    {.key = "tensor_parallel_size", .flag = "tensor-parallel-size", .alias = "tp", .kind = SK_U32, .off = OFF(tp),
     .lo = 1, .hi = 64, .def = SD_ONE, .use = SET_SWEEP | SET_ROW, .label = "tp", .meta = "N",
     .help = "GPUs per replica (tensor parallelism)", .deflt = "1"},
    {.key = "pipeline_parallel_size", .flag = "pipeline-parallel-size", .alias = "pp", .kind = SK_U32, .off = OFF(pp),
     .lo = 1, .hi = CFG_MAX_PP, .def = SD_ONE, .use = SET_SWEEP | SET_ROW, .label = "pp", .meta = "N",
     .help = "pipeline stages per replica, each a TP group holding consecutive layers (vLLM's split); a replica "
             "holds tp x pp GPUs",
     .deflt = "1"},
    {.key = "data_parallel_size", .flag = "data-parallel-size", .alias = "dp", .kind = SK_U32, .off = OFF(dp),
     .lo = 1, .hi = CFG_MAX_DP, .def = SD_ONE, .use = SET_SWEEP | SET_ROW, .label = "dp", .meta = "N",
     .help = "engine ranks per replica, each with its own scheduler and KV cache (vLLM's attention data "
             "parallelism); a mixture of experts' MoE layers span all dp x tp GPUs; a replica holds dp x tp GPUs",
     .deflt = "1"},
    {.key = "enable_expert_parallel", .flag = "enable-expert-parallel", .kind = SK_BOOL, .off = OFF(expert_parallel),
     .def = SD_FIXED, .use = SET_SWEEP, .label = "ep:",
     .help = "mixture-of-experts layers: whole experts split over the TP ranks (vLLM's flag) instead of a slice of "
             "every expert on each",
     .deflt = "off"},
    {.key = "moe_expert_parallel_size", .flag = "moe-expert-parallel-size", .alias = "ep-size", .kind = SK_U32,
     .off = OFF(moe_ep), .lo = 1, .hi = 4096, .def = SD_RULE, .use = SET_SWEEP, .label = "ep=", .meta = "N",
     .help = "mixture-of-experts layers: their dp x tp GPUs as N groups of whole experts, each expert sliced over "
             "dp x tp / N GPUs (TensorRT-LLM's moe_expert_parallel_size, SGLang's --ep-size; vLLM only runs N = dp x "
             "tp, its --enable-expert-parallel)",
     .deflt = "dp x tp with enable_expert_parallel, else 1"},
    {.key = "replicas", .flag = "replicas", .kind = SK_U32, .off = OFF(replicas), .lo = 1, .hi = 100000, .def = SD_ONE,
     .use = SET_SWEEP, .label = "x", .meta = "N", .help = "replicas behind the router", .deflt = "1"},
    {.key = "dtype", .flag = "dtype", .kind = SK_CHOICE, .off = OFF(act_dtype), .def = SD_RULE, .meta = "auto|bf16|fp16",
     .help = "activation dtype", .deflt = "the model's (bf16 unless it is fp16)",
     CHOICE(dtype_parse_set, dtype_show, dtype_echo, dtype_given, "auto, bf16, fp16")},
    {.key = "quantization", .flag = "quantization", .out_key = "weight_dtype", .kind = SK_CHOICE,
     .off = OFF(weight_dtype), .def = SD_RULE, .use = SET_SWEEP | SET_ROW, .label = "w:", .meta = "M",
     .help = "weights: none, fp8, int8, int4 (awq, gptq), nvfp4 (W4A4 on Blackwell FP4 tensor cores, else "
             "weight-only)",
     .deflt = "the checkpoint's own quantization, else none",
     CHOICE(quant_parse, quant_show, quant_echo, quant_given, "none, fp8, int8, int4, awq, gptq, nvfp4")},
    {.key = "kv_cache_dtype", .flag = "kv-cache-dtype", .kind = SK_CHOICE, .off = OFF(kv_dtype), .def = SD_RULE,
     .use = SET_SWEEP | SET_ROW, .label = "kv:", .meta = "auto|fp8", .help = "KV cache dtype",
     .deflt = "auto: the activation dtype", CHOICE(kv_parse, kv_show, kv_echo, kv_given, "auto, fp8, bf16, fp16")},
    {.key = "max_num_seqs", .flag = "max-num-seqs", .kind = SK_U32, .off = OFF(max_num_seqs), .lo = 1, .hi = 1e6,
     .def = SD_RULE, .use = SET_SWEEP | SET_ROW, .label = "seqs=", .meta = "N", .help = "max sequences per step",
     .deflt = "the engine version's (engver.c), by GPU"},
    {.key = "max_num_batched_tokens", .flag = "max-num-batched-tokens", .kind = SK_U32,
     .off = OFF(max_num_batched_tokens), .lo = 1, .hi = 1e7, .def = SD_RULE, .use = SET_SWEEP | SET_ROW,
     .label = "tokens=", .meta = "N", .help = "token budget per step",
     .deflt = "the engine version's (engver.c), by GPU; at least max_model_len without chunked prefill"},
    {.key = "block_size", .flag = "block-size", .kind = SK_U32, .off = OFF(block_size), .lo = 1, .hi = 1024,
     .def = SD_ENGINE, .eng_off = EOFF(block_size), .use = SET_SWEEP, .label = "block=", .meta = "N",
     .help = "KV block size in tokens (8, 16, 32, 64 or 128)", .deflt = "the engine file's"},
    {.key = "max_model_len", .flag = "max-model-len", .kind = SK_U32, .off = OFF(max_model_len), .lo = 1, .hi = 1e8,
     .def = SD_RULE, .use = SET_SWEEP, .label = "len=", .meta = "N", .help = "max prompt + output tokens",
     .deflt = "the model's max_position_embeddings"},
    {.key = "long_prefill_token_threshold", .flag = "long-prefill-token-threshold", .kind = SK_U32,
     .off = OFF(long_prefill_token_threshold), .lo = 1, .hi = 1e7, .def = SD_ENGINE,
     .eng_off = EOFF(long_prefill_token_threshold), .use = SET_SWEEP, .label = "chunk=", .meta = "N",
     .help = "most prompt tokens one request prefills in a step (vLLM's flag; its scheduler caps each prefill "
             "chunk at it)",
     .deflt = "the engine file's (0: no cap)"},
    {.key = "gpu_memory_utilization", .flag = "gpu-memory-utilization", .kind = SK_F64,
     .off = OFF(gpu_memory_utilization), .lo = 0, .hi = 1, .lo_open = true, .def = SD_ENGINE,
     .eng_off = EOFF(gpu_memory_utilization), .use = SET_SWEEP, .label = "mem=", .meta = "F",
     .help = "fraction of GPU memory the engine uses", .deflt = "the engine file's"},
    {.key = "enable_prefix_caching", .flag = "enable-prefix-caching", .kind = SK_TRI,
     .off = OFF(enable_prefix_caching), .def = SD_ENGINE, .eng_off = EOFF(enable_prefix_caching),
     .help = "prefix caching", .deflt = "the engine file's"},
    {.key = "enable_chunked_prefill", .flag = "enable-chunked-prefill", .kind = SK_TRI,
     .off = OFF(enable_chunked_prefill), .def = SD_ENGINE, .eng_off = EOFF(enable_chunked_prefill),
     .help = "chunked prefill", .deflt = "the engine file's"},
    {.key = "async_scheduling", .flag = "async-scheduling", .kind = SK_TRI, .off = OFF(async_scheduling),
     .def = SD_ENGINE, .eng_off = EOFF(async_scheduling),
     .help = "schedule the next step while the current one runs (vLLM's batch queue of 2)",
     .deflt = "the engine version's; off with pipeline parallelism"},
    {.key = "allreduce", .flag = "allreduce", .kind = SK_CHOICE, .off = OFF(allreduce), .def = SD_FIXED,
     .meta = "auto|table|link",
     .help = "all-reduce cost: auto = the profile's measured table, unless it is below a third of the GPU file's "
             "link (GPUs without peer-to-peer on the measured machine), then the link; table = the measurement "
             "whatever it says (your GPUs are connected like the measured ones); link = the GPU file's link "
             "bandwidth and latency",
     .deflt = "auto", CHOICE(ar_parse, ar_show, NULL, ar_given, "auto, table, link")},
    {.key = "gpus_per_node", .flag = "gpus-per-node", .kind = SK_U32, .off = OFF(gpus_per_node), .lo = 1, .hi = 1024,
     .def = SD_RULE, .use = SET_SWEEP, .label = "node=", .meta = "N",
     .help = "GPUs per node; a larger TP group spans nodes and all-reduces over the network",
     .deflt = "the GPU file's (8; 72 for an NVL72 rack)"},
    {.key = "moe_routing", .flag = "moe-routing", .kind = SK_CHOICE, .off = OFF(moe_routing), .def = SD_FIXED,
     .use = SET_SWEEP, .label = "routing:", .meta = "R",
     .help = "expert load of mixture-of-experts layers, as the kernel database measured it: balanced, "
             "power_law_1.01 (AIConfigurator's estimate), power_law_1.2",
     .deflt = "balanced", CHOICE(moe_parse, moe_show, NULL, moe_given, "balanced, power_law_1.01, power_law_1.2")},
    {.key = "mode", .flag = "mode", .kind = SK_CHOICE, .off = OFF(disagg), .def = SD_FIXED, .use = SET_SWEEP | SET_DISAGG,
     .label = "mode:", .meta = "agg|disagg",
     .help = "agg: each replica's engine does prefill and decode; disagg: prefill workers and decode workers apart, "
             "the prompt's KV sent from one to the other (Dynamo / AIConfigurator's disaggregated serving, "
             "docs/DISAGG.md)",
     .deflt = "agg", CHOICE(mode_parse, mode_show, NULL, mode_given, "agg, disagg")},
    {.key = "prefill_workers", .flag = "prefill-workers", .kind = SK_U32, .off = OFF(prefill_workers), .lo = 1,
     .hi = 4096, .def = SD_ONE, .use = SET_SWEEP | SET_DISAGG, .label = "P", .meta = "N",
     .help = "--mode disagg: prefill workers (the x of AIConfigurator's xPyD)", .deflt = "1"},
    {.key = "prefill_tp", .flag = "prefill-tp", .kind = SK_U32, .off = OFF(prefill_tp), .lo = 1, .hi = 64,
     .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "ptp", .meta = "N",
     .help = "--mode disagg: tensor parallelism of each prefill worker", .deflt = "tensor_parallel_size"},
    {.key = "prefill_dp", .flag = "prefill-dp", .kind = SK_U32, .off = OFF(prefill_dp), .lo = 1, .hi = CFG_MAX_DP,
     .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "pdp", .meta = "N",
     .help = "--mode disagg: attention data-parallel ranks of each prefill worker (its MoE layers over all of them)",
     .deflt = "data_parallel_size"},
    {.key = "prefill_max_num_seqs", .flag = "prefill-max-num-seqs", .kind = SK_U32, .off = OFF(prefill_max_num_seqs),
     .lo = 1, .hi = 1e6, .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "pseqs=", .meta = "N",
     .help = "--mode disagg: max sequences per step of a prefill worker", .deflt = "max_num_seqs"},
    {.key = "prefill_max_num_batched_tokens", .flag = "prefill-max-num-batched-tokens", .kind = SK_U32,
     .off = OFF(prefill_max_num_batched_tokens), .lo = 1, .hi = 1e7, .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG,
     .label = "ptokens=", .meta = "N", .help = "--mode disagg: token budget per step of a prefill worker",
     .deflt = "max_num_batched_tokens"},
    {.key = "decode_workers", .flag = "decode-workers", .kind = SK_U32, .off = OFF(decode_workers), .lo = 1,
     .hi = 4096, .def = SD_ONE, .use = SET_SWEEP | SET_DISAGG, .label = "D", .meta = "N",
     .help = "--mode disagg: decode workers (the y of xPyD)", .deflt = "1"},
    {.key = "decode_tp", .flag = "decode-tp", .kind = SK_U32, .off = OFF(decode_tp), .lo = 1, .hi = 64,
     .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "dtp", .meta = "N",
     .help = "--mode disagg: tensor parallelism of each decode worker", .deflt = "tensor_parallel_size"},
    {.key = "decode_dp", .flag = "decode-dp", .kind = SK_U32, .off = OFF(decode_dp), .lo = 1, .hi = CFG_MAX_DP,
     .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "ddp", .meta = "N",
     .help = "--mode disagg: attention data-parallel ranks of each decode worker (its MoE layers over all of them)",
     .deflt = "data_parallel_size"},
    {.key = "decode_max_num_seqs", .flag = "decode-max-num-seqs", .kind = SK_U32, .off = OFF(decode_max_num_seqs),
     .lo = 1, .hi = 1e6, .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG, .label = "dseqs=", .meta = "N",
     .help = "--mode disagg: max sequences per step of a decode worker (AIConfigurator's decode_batch_size)",
     .deflt = "max_num_seqs"},
    {.key = "decode_max_num_batched_tokens", .flag = "decode-max-num-batched-tokens", .kind = SK_U32,
     .off = OFF(decode_max_num_batched_tokens), .lo = 1, .hi = 1e7, .def = SD_RULE, .use = SET_SWEEP | SET_DISAGG,
     .label = "dtokens=", .meta = "N", .help = "--mode disagg: token budget per step of a decode worker",
     .deflt = "max_num_batched_tokens"},
    {.key = "max_local_prefill_length", .flag = "max-local-prefill-length", .kind = SK_U32,
     .off = OFF(max_local_prefill_length), .lo = 0, .hi = 1e7, .def = SD_FIXED,
     .use = SET_SWEEP | SET_DISAGG | SET_GIVEN, .label = "local<=", .meta = "N",
     .help = "--mode disagg: conditional disaggregation: a prompt with at most N tokens outside the chosen decode "
             "worker's prefix cache is prefilled on that decode worker, no KV transfer (Dynamo's disaggregated "
             "router; TensorRT-LLM's conditional_disagg_config also needs a prefix hit); 0: every prompt goes to a "
             "prefill worker",
     .deflt = "0 (off)"},
    {.key = "schedule_policy", .flag = "schedule-policy", .kind = SK_CHOICE, .off = OFF(schedule_lpm),
     .def = SD_FIXED, .use = SET_SWEEP | SET_GIVEN, .label = "policy:", .meta = "fcfs|lpm",
     .help = "SGLang's waiting-queue order: fcfs, or lpm (longest radix-cache prefix first, in-batch prefix sharing "
             "deprioritized, fcfs above 128 waiting; schedule_policy.py); the other engines schedule fcfs",
     .deflt = "fcfs", CHOICE(policy_parse, policy_show, NULL, policy_given, "fcfs, lpm")},
    {.key = "enable_mixed_chunk", .flag = "enable-mixed-chunk", .kind = SK_BOOL, .off = OFF(mixed_chunk),
     .def = SD_FIXED, .use = SET_SWEEP | SET_GIVEN, .label = "mix:",
     .help = "SGLang's mixed chunked prefill: a step that prefills also decodes every running request, whose tokens "
             "come off the step's prefill budget (scheduler.py, schedule_policy.py PrefillAdder); needs chunked "
             "prefill; vLLM and TensorRT-LLM always mix",
     .deflt = "off"},
    {.key = "speculative_config", .flag = "speculative-config", .kind = SK_CHOICE, .off = OFF(spec_method),
     .def = SD_FIXED, .use = SET_GIVEN, .meta = "JSON",
     .help = "speculative decoding as vLLM's flag: {\"method\": eagle|eagle3|mtp|ngram, \"num_speculative_tokens\": k, "
             "\"model\", \"draft_tensor_parallel_size\", \"draft_vocab_size\" (an EAGLE-3 head's), "
             "\"disable_by_batch_size\" (TensorRT-LLM's max_concurrency), "
             "\"acceptance_rates\": [per position] or \"acceptance_length\", \"dataset\"}; acceptance from the "
             "bundled published measurements unless given (docs/SPECDEC.md)",
     .deflt = "off", CHOICE(specjson_parse, specjson_show, specjson_echo, specjson_given, "a JSON object"),
     .parse_why = specdec_parse},
    {.key = "speculative_method", .flag = "speculative-method", .kind = SK_CHOICE, .off = OFF(spec_method),
     .def = SD_FIXED, .use = SET_SWEEP | SET_ROW | SET_GIVEN, .label = "spec:", .meta = "M",
     .help = "speculative_config.method as a setting of its own (a sweep axis): none, eagle, eagle3, mtp, ngram",
     .deflt = "none", CHOICE(specm_parse, specm_show, NULL, specm_given,
                             "none, eagle, eagle3, mtp, deepseek_mtp, ngram, draft_model")},
    {.key = "num_speculative_tokens", .flag = "num-speculative-tokens", .kind = SK_U32,
     .off = OFF(num_speculative_tokens), .lo = 0, .hi = SPEC_MAX_K, .def = SD_FIXED,
     .use = SET_SWEEP | SET_ROW | SET_GIVEN, .label = "k=", .meta = "K",
     .help = "speculative_config.num_speculative_tokens as a setting of its own (a sweep axis; 0: no speculation)",
     .deflt = "0 (off)"},
    {.key = "router", .flag = "router", .kind = SK_CHOICE, .off = OFF(router), .def = SD_FIXED, .use = SET_SWEEP,
     .label = "router:", .meta = "P", .help = "round_robin, least_outstanding, least_kv", .deflt = "round_robin",
     CHOICE(router_parse, router_show, NULL, router_given, "round_robin, least_outstanding, least_kv")},
};

#undef OFF
#undef EOFF
#undef CHOICE

size_t settings_count(void) { return SIM_ARRAY_LEN(SETTINGS); }
const setting *settings_at(size_t i) { return i < SIM_ARRAY_LEN(SETTINGS) ? &SETTINGS[i] : NULL; }
size_t settings_index(const setting *s) { return (size_t)(s - SETTINGS); }

const setting *settings_by_key(const char *key) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++)
    if (!strcmp(key, SETTINGS[i].key)) return &SETTINGS[i];
  return NULL;
}

const setting *settings_by_flag(const char *flag) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++)
    if (!strcmp(flag, SETTINGS[i].flag) || (SETTINGS[i].alias && !strcmp(flag, SETTINGS[i].alias))) return &SETTINGS[i];
  return NULL;
}

/* ---- one value ----------------------------------------------------------------------------------------- */

static uint32_t get_u32(const setting *s, const deploy_cfg *d) {
  uint32_t v;
  memcpy(&v, (const char *)d + s->off, sizeof v);
  return v;
}
static double get_f64(const setting *s, const deploy_cfg *d) {
  double v;
  memcpy(&v, (const char *)d + s->off, sizeof v);
  return v;
}
static int8_t get_tri(const setting *s, const deploy_cfg *d) { return *((const int8_t *)d + s->off); }
static bool get_bool(const setting *s, const deploy_cfg *d) {
  bool v;
  memcpy(&v, (const char *)d + s->off, sizeof v);
  return v;
}

bool setting_given(const setting *s, const deploy_cfg *d) {
  switch (s->kind) {
    case SK_U32: return get_u32(s, d) != 0;
    case SK_F64: return get_f64(s, d) >= 0;
    case SK_TRI: return get_tri(s, d) >= 0;
    case SK_BOOL: return get_bool(s, d);
    case SK_CHOICE: return s->given(d);
  }
  return false;
}

static bool in_range(const setting *s, double v) { return (s->lo_open ? v > s->lo : v >= s->lo) && v <= s->hi; }

static bool parse_switch(const char *t, bool *on) {
  if (!strcmp(t, "on") || !strcmp(t, "true") || !strcmp(t, "1")) return *on = true, true;
  if (!strcmp(t, "off") || !strcmp(t, "false") || !strcmp(t, "0")) return *on = false, true;
  return false;
}

int setting_set_text(const setting *s, deploy_cfg *d, const char *text, const char *who, sim_err *err) {
  char *dst = (char *)d + s->off;
  switch (s->kind) {
    case SK_U32: {
      uint64_t u;
      if (!sim_parse_u64(text, &u) || u > UINT32_MAX || !in_range(s, (double)u))
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not an integer in [%.10g, %.10g]", who, text, s->lo, s->hi);
      uint32_t v = (uint32_t)u;
      memcpy(dst, &v, sizeof v);
      return SIM_OK;
    }
    case SK_F64: {
      double v;
      if (!sim_parse_double(text, &v) || !isfinite(v) || !in_range(s, v))
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not a number in %c%g, %g]", who, text, s->lo_open ? '(' : '[',
                        s->lo, s->hi);
      memcpy(dst, &v, sizeof v);
      return SIM_OK;
    }
    case SK_TRI:
    case SK_BOOL: {
      bool on;
      if (!parse_switch(text, &on)) return sim_errf(err, SIM_EINPUT, "%s: '%s' is not on or off (true/false, 1/0)", who, text);
      if (s->kind == SK_TRI) *(int8_t *)dst = on ? 1 : 0;
      else memcpy(dst, &on, sizeof on);
      return SIM_OK;
    }
    case SK_CHOICE:
      if (s->parse_why) {
        char why[512];
        if (!s->parse_why(d, text, why, sizeof why)) return sim_errf(err, SIM_EINPUT, "%s: %s", who, why);
        return SIM_OK;
      }
      if (!s->parse(d, text)) return sim_errf(err, SIM_EINPUT, "%s: unknown value '%s' (%s)", who, text, s->choices);
      return SIM_OK;
  }
  return sim_errf(err, SIM_EINTERNAL, "setting %s: bad kind", s->key);
}

void setting_text(const setting *s, const deploy_cfg *d, char *buf, size_t n) {
  switch (s->kind) {
    case SK_U32: snprintf(buf, n, "%u", get_u32(s, d)); return;
    case SK_F64: snprintf(buf, n, "%g", get_f64(s, d)); return;
    case SK_TRI: snprintf(buf, n, "%s", get_tri(s, d) > 0 ? "on" : "off"); return;
    case SK_BOOL: snprintf(buf, n, "%s", get_bool(s, d) ? "on" : "off"); return;
    case SK_CHOICE: snprintf(buf, n, "%s", s->echo ? s->echo(d) : s->show(d)); return;
  }
}

void setting_json(const setting *s, const deploy_cfg *d, jw *w) {
  const char *k = s->out_key ? s->out_key : s->key;
  switch (s->kind) {
    case SK_U32: jw_u64(w, k, get_u32(s, d)); return;
    case SK_F64: jw_num(w, k, get_f64(s, d)); return;
    case SK_TRI: jw_bool(w, k, get_tri(s, d) > 0); return;
    case SK_BOOL: jw_bool(w, k, get_bool(s, d)); return;
    case SK_CHOICE: jw_str(w, k, s->echo ? s->echo(d) : s->show(d)); return;
  }
}

/* ---- scenario files ------------------------------------------------------------------------------------ */

static int read_one(const jx *j, const cJSON *obj, const char *where, const setting *s, deploy_cfg *d) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, s->key);
  if (!v) return SIM_OK;
  char *dst = (char *)d + s->off;
  switch (s->kind) {
    case SK_U32: return jx_u32(j, obj, where, s->key, (uint32_t *)(void *)dst, s->lo, s->hi, 0);
    case SK_F64: {
      double x = -1;
      int rc = jx_num(j, obj, where, s->key, &x, s->lo, s->hi, s->lo_open ? JX_GT : 0);
      if (!rc) memcpy(dst, &x, sizeof x);
      return rc;
    }
    case SK_TRI:
    case SK_BOOL: {
      bool b = false;
      int rc = jx_bool(j, obj, where, s->key, &b);
      if (rc) return rc;
      if (s->kind == SK_TRI) *(int8_t *)dst = b ? 1 : 0;
      else memcpy(dst, &b, sizeof b);
      return SIM_OK;
    }
    case SK_CHOICE: {
      if (s->parse_why) { /* a JSON object, or its text */
        char *text = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v), why[512];
        bool ok = s->parse_why(d, text ? text : v->valuestring ? v->valuestring : "", why, sizeof why);
        cJSON_free(text);
        return ok ? SIM_OK : jx_fail(j, v, where, s->key, "%s", why);
      }
      char buf[64] = "";
      int rc = jx_str(j, obj, where, s->key, buf, sizeof buf);
      if (rc) return rc;
      if (!s->parse(d, buf)) return jx_fail(j, v, where, s->key, "unknown value '%s' (%s)", buf, s->choices);
      return SIM_OK;
    }
  }
  return jx_fail(j, v, where, s->key, "internal error: bad setting kind");
}

int settings_read_json(const jx *j, const cJSON *obj, const char *where, deploy_cfg *d) {
  const char *known[SIM_ARRAY_LEN(SETTINGS) + 1];
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++) known[i] = SETTINGS[i].key;
  known[SIM_ARRAY_LEN(SETTINGS)] = NULL;
  int rc = jx_keys(j, obj, where, known, NULL);
  /* dtype before quantization: "none" means the activation dtype (the table's order) */
  for (size_t i = 0; !rc && i < SIM_ARRAY_LEN(SETTINGS); i++) rc = read_one(j, obj, where, &SETTINGS[i], d);
  return rc;
}

/* ---- resolution ---------------------------------------------------------------------------------------- */

int settings_check(const deploy_cfg *d, sim_err *err) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++) {
    const setting *s = &SETTINGS[i];
    if ((s->kind != SK_U32 && s->kind != SK_F64) || !setting_given(s, d)) continue;
    double v = s->kind == SK_U32 ? get_u32(s, d) : get_f64(s, d);
    if (!in_range(s, v))
      return sim_errf(err, SIM_EINPUT, "%s %g is out of range %s%g..%g", s->key, v, s->lo_open ? "(" : "", s->lo,
                      s->hi);
  }
  return SIM_OK;
}

void settings_fill(deploy_cfg *d, const engine_cfg *e, set_default rule) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++) {
    const setting *s = &SETTINGS[i];
    if (s->def != rule || setting_given(s, d)) continue;
    char *dst = (char *)d + s->off;
    const char *src = e ? (const char *)e + s->eng_off : NULL;
    if (rule == SD_ONE && s->kind == SK_U32) {
      uint32_t one = 1;
      memcpy(dst, &one, sizeof one);
    } else if (rule == SD_ENGINE && src) {
      if (s->kind == SK_TRI) {
        bool b;
        memcpy(&b, src, sizeof b);
        *(int8_t *)dst = b ? 1 : 0;
      } else {
        memcpy(dst, src, s->kind == SK_F64 ? sizeof(double) : sizeof(uint32_t));
      }
    }
  }
}

/* ---- echoes -------------------------------------------------------------------------------------------- */

void settings_json_echo(const deploy_cfg *d, unsigned use, jw *w) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++)
    if ((!use || (SETTINGS[i].use & use)) && (d->disagg || !(SETTINGS[i].use & SET_DISAGG)) &&
        (!(SETTINGS[i].use & SET_GIVEN) || setting_given(&SETTINGS[i], d)))
      setting_json(&SETTINGS[i], d, w);
}

/* CSV columns are the same in every row: a setting echoed only when given (SET_GIVEN) has none */
void settings_csv_header(unsigned use, FILE *f) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++)
    if ((!use || (SETTINGS[i].use & use)) && !(use && (SETTINGS[i].use & SET_GIVEN))) fprintf(f, ",%s", SETTINGS[i].out_key ? SETTINGS[i].out_key : SETTINGS[i].key);
}

void settings_csv_row(const deploy_cfg *d, unsigned use, FILE *f) {
  char buf[1040];
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++)
    if ((!use || (SETTINGS[i].use & use)) && !(use && (SETTINGS[i].use & SET_GIVEN))) {
      setting_text(&SETTINGS[i], d, buf, sizeof buf);
      fprintf(f, ",%s", buf);
    }
}

void settings_flags_text(const deploy_cfg *d, char *buf, size_t n, size_t *k) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(SETTINGS); i++) {
    const setting *s = &SETTINGS[i];
    if (!setting_given(s, d) || *k >= n) continue;
    char v[1040];
    if (s->kind == SK_TRI || s->kind == SK_BOOL) {
      bool on = s->kind == SK_TRI ? get_tri(s, d) > 0 : get_bool(s, d);
      *k += (size_t)snprintf(buf + *k, n - *k, " --%s%s", on ? "" : "no-", s->flag);
      continue;
    }
    if (s->kind == SK_CHOICE) snprintf(v, sizeof v, "%s", s->show(d));
    else setting_text(s, d, v, sizeof v);
    *k += (size_t)snprintf(buf + *k, n - *k, " --%s %s", s->alias ? s->alias : s->flag, v);
  }
  if (*k > n) *k = n;
}
