/* cost_types.h: the values the cost model (cost.h) exchanges with its callers and its parts: the operations and
 * sources a step's time is broken down by, a step's batch as the scheduler describes it, and a step's cost. The
 * model itself is opaque here (its state: hw/cost_state.h, private to sim/hw/cost*.c). */
#ifndef SIM_COST_TYPES_H
#define SIM_COST_TYPES_H

#include "config/cfg.h"

typedef struct cost_model cost_model;

typedef enum cost_op {
  OP_GEMM_QKV = 0,
  OP_GEMM_O,
  OP_GEMM_GATEUP,
  OP_GEMM_DOWN,
  OP_LM_HEAD,      /* LM head GEMM and the sampler */
  OP_ATTN_PREFILL,
  OP_ATTN_DECODE,
  OP_ALLREDUCE,
  OP_ELEMENTWISE,  /* norms, RoPE, activation, residual, embedding */
  OP_CPU_OVERHEAD, /* engine host work not hidden behind the GPU */
  OP_LAUNCH,       /* GPU time added because the host launches kernels (piecewise or eager) */
  OP_PP_SEND,      /* pipeline parallelism: activations sent from one stage to the next */
  OP_MOE,          /* mixture-of-experts blocks: routed experts (fused), router, shared experts */
  OP_SPEC_DRAFT,   /* speculative decoding: the draft's forward passes (EAGLE head, MTP layer); JSON shows it only
                      when a run drafted */
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
  uint32_t moe_peer_tokens;   /* attention data parallelism: the tokens the replica's other DP ranks feed
                                 the same MoE layers in this step (their steps of the same lockstep group
                                 step, serve/cluster.c); 0 otherwise */
  uint8_t dp_mode;            /* a lockstep DP group's agreed execution: 0 = this batch's own (mode_of);
                                 else 1 + the CUDA-graph mode the ranks agreed on (0 eager, 1 piecewise, 2
                                 full: the least any rank can run, as vLLM's coordinate_batch_across_dp
                                 takes the minimum), never above the batch's own */
  uint32_t dp_pad;            /* with a graph mode agreed: the token count every rank pads to (the largest
                                 rank's graph size); 0 = its own */
  uint32_t spec_seqs;         /* speculative decoding: decode sequences verifying drafts (counted in num_decode; each
                                 computes 1 + its drafts tokens, counted in num_tokens) */
  uint32_t spec_tokens;       /* their draft tokens: logits computed for each (LM head, rejection sampler) */
} batch_desc;

typedef struct step_cost {
  double total_ns;              /* the step's share of wall time in a steady stream of such steps:
                                   gpu + cpu, or max(gpu, cpu) when the engine schedules asynchronously;
                                   with pipeline parallelism: one batch's time through every stage + cpu */
  double gpu_ns;                /* GPU time: from the step's start to its end on the device (with pipeline
                                   parallelism: the sum of stage_ns and send_ns) */
  double stage_ns[CFG_MAX_PP];  /* each pipeline stage's GPU time (stage_ns[0] = gpu_ns without PP) */
  double send_ns[CFG_MAX_PP];   /* send_ns[s]: stage s's activations reaching stage s + 1 */
  double cpu_ns;                /* host work to schedule and prepare it (before it can start) */
  double op_ns[OP_COUNT];       /* contribution of each op (sums to total_ns) */
  double bound_ns[BOUND_COUNT]; /* same time, by what bound it (sums to total_ns) */
} step_cost;

#endif
