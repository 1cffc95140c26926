/* cost.h: the cost model: how long one engine step takes for a given batch.
 *
 * One step is one fused forward over all scheduled tokens T (prefill chunks +
 * one token per decode), on one GPU of a TP group (all GPUs of the group do
 * the same work in parallel). Per layer, at TP t:
 *   GEMMs with M = T: QKV [H -> (qh + 2 kvh) hd / t], O [qh hd / t -> H],
 *     gate+up [H -> 2 I / t], down [I / t -> H]
 *   attention: prefill chunks ~ chunk x (ctx + chunk/2) x heads x hd FLOPs
 *     (compute-bound); decodes read every cached K and V (bandwidth-bound)
 *   2 all-reduces of T x H activations when t > 1:
 *     latency + 2 (t-1)/t x bytes / (link bandwidth x efficiency)
 *   norms, RoPE, activation, residual: a few passes over T x H, memory-bound
 * Once per step: LM head GEMM over the sequences that sample, engine CPU
 * overhead per step and per sequence (overlapping the GPU when the engine
 * schedules asynchronously), kernel launches unless a decode-only batch of at
 * most cuda_graph_max_batch sequences replays a CUDA graph (padded to the next
 * capture size 1, 2, 4, 8, 16, 24, 32, ... 512 like vLLM).
 *
 * Sources of each operation's time, in order of preference: (1) a measured
 * profile of this GPU; (2) a measured profile of another GPU scaled by the
 * datasheet ratio of the bound resource; (3) the roofline from the datasheet
 * with the engine's efficiency factors. Every report says which served each
 * operation (cost_model.src_count).
 *
 * Roofline of one GEMM: t_c = 2 M N K / (peak(dtype) x gemm_compute_eff),
 * t_m = bytes(weights + activations) / (HBM x gemm_memory_eff),
 * t = (t_c^p + t_m^p)^(1/p) with p = gemm_blend (p -> inf is the sharp
 * roofline max(t_c, t_m); finite p models the slow region near the ridge).
 * Weight-only INT4/INT8 compute in the activation dtype after dequantizing.
 *
 * Speed: the T-dependent part of a step (GEMMs, all-reduces, elementwise for
 * all layers) is memoized per T in an array sized max_num_batched_tokens + the
 * capture sizes, so a step costs O(number of prefill chunks).
 * The cost model knows nothing of requests: it sees a batch_desc only.
 * Ownership: cost_init/cost_deinit on caller storage; the model, gpu, engine,
 * deploy and profile pointers are borrowed and must outlive it. Not
 * thread-safe (memo tables): one cost_model per simulation. */
#ifndef SIM_COST_H
#define SIM_COST_H

#include "config/cfg.h"
#include "hw/prof.h"

typedef enum cost_op {
  OP_GEMM_QKV = 0,
  OP_GEMM_O,
  OP_GEMM_GATEUP,
  OP_GEMM_DOWN,
  OP_LM_HEAD,
  OP_ATTN_PREFILL,
  OP_ATTN_DECODE,
  OP_ALLREDUCE,
  OP_ELEMENTWISE,
  OP_CPU_OVERHEAD, /* engine CPU time not hidden behind the GPU */
  OP_LAUNCH,       /* kernel launches (eager mode) */
  OP_COUNT
} cost_op;

typedef enum cost_src { SRC_PROFILE = 0, SRC_PROFILE_SCALED, SRC_ROOFLINE, SRC_COUNT } cost_src;

/* What bound each nanosecond of a step: the gates of a GPU plan. */
typedef enum cost_bound {
  BOUND_COMPUTE = 0, /* tensor cores */
  BOUND_MEMORY,      /* HBM bandwidth */
  BOUND_COMM,        /* interconnect */
  BOUND_CPU,         /* engine overhead, launches */
  BOUND_COUNT
} cost_bound;

typedef struct prefill_chunk {
  uint32_t chunk_tokens; /* new tokens computed this step, >= 2 (single tokens count as decodes) */
  uint32_t ctx_tokens;   /* tokens already in the KV cache before this chunk */
} prefill_chunk;

/* One step's batch, as the scheduler describes it. */
typedef struct batch_desc {
  uint32_t num_tokens;        /* T: all tokens computed this step */
  uint32_t num_seqs;          /* sequences in the step */
  uint32_t num_decode;        /* sequences computing exactly one token */
  uint64_t decode_ctx_tokens; /* sum over those of the tokens they attend to (cached + 1) */
  uint32_t num_sample;        /* sequences that sample a token at the end of the step */
  uint32_t num_prefill;       /* chunks of >= 2 tokens */
  const prefill_chunk *prefills;
} batch_desc;

typedef struct step_cost {
  double total_ns;              /* the step's share of wall time in a steady stream of such steps:
                                   gpu + cpu, or max(gpu, cpu) when the engine schedules asynchronously */
  double gpu_ns;                /* GPU time: from the step's start to its end on the device */
  double cpu_ns;                /* host work to schedule and prepare it (before it can start) */
  double op_ns[OP_COUNT];       /* contribution of each op (sums to total_ns) */
  double bound_ns[BOUND_COUNT]; /* same time, by what bound it (sums to total_ns) */
} step_cost;

typedef struct cost_memo {
  double ns;                    /* T-dependent part of a step for all layers */
  double op_ns[OP_COUNT];
  double bound_ns[BOUND_COUNT];
  uint8_t src[OP_COUNT];        /* cost_src that served each GEMM op at this T (for src_count) */
  bool valid;
} cost_memo;

typedef struct cost_model {
  const model_cfg *model;
  const gpu_cfg *gpu;
  const engine_cfg *engine;
  const deploy_cfg *deploy;
  const prof *profile;        /* measured on this GPU, or NULL */
  const prof *scaled_profile; /* measured on another GPU (scaled), or NULL */
  const gpu_cfg *scaled_gpu;  /* the GPU scaled_profile was measured on */
  cost_memo *memo;            /* [0 .. memo_len) by T */
  size_t memo_len;
  uint64_t src_count[OP_COUNT][SRC_COUNT]; /* how often each source served each op: counted by
                                              cost_step, once per op per step (prefill attention once
                                              per chunk); analytic ops count as SRC_ROOFLINE */
} cost_model;

int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err);
/* Attach profiles (either may be NULL). scaled_gpu: the datasheet of the GPU
 * the scaled profile was measured on. Clears the memo. */
void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu);
void cost_deinit(cost_model *c);

/* The hot path: fills *out for one step. */
void cost_step(cost_model *c, const batch_desc *b, step_cost *out);

/* Components, for `plan`, tests and reports. Times in ns for one GPU and ONE
 * layer's call (the LM head: its one call per step); they do not touch
 * src_count. src and bound may be NULL. */
double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound);
double cost_allreduce_ns(const cost_model *c, uint32_t tokens);
double cost_attn_decode_ns(cost_model *c, uint32_t batch, uint64_t ctx_tokens_total, cost_src *src);
double cost_attn_prefill_ns(cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src);
/* Convenience: a step of `batch` decodes each with context `ctx`. */
double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out);
/* Convenience: a step that prefills one prompt of `tokens` (one chunk, ctx 0). */
double cost_prefill_step_ns(cost_model *c, uint32_t tokens, step_cost *out);

const char *cost_op_name(cost_op op);
const char *cost_src_name(cost_src s);
const char *cost_bound_name(cost_bound b);
/* The CUDA-graph capture size a decode batch of n sequences is padded to
 * (n itself when above the largest capture size). */
uint32_t cost_graph_pad(uint32_t n, uint32_t max_capture);

#endif
