/* plan.h: `servesim plan`: the arithmetic of one deployment, before any
 * simulation: the gates of a GPU plan.
 *
 *   can it start (memory capacity)  per-GPU memory plan (hw/memplan.h): weights,
 *                                   activation peak, CUDA graphs, runtime, the KV
 *                                   pool; the largest batch of `context_tokens`
 *                                   sequences it holds:
 *                                     blocks_per_seq = ceil(context / block_size)
 *                                     batch_mem = floor(kv_blocks / blocks_per_seq)
 *                                     max_batch = min(batch_mem, max_num_seqs,
 *                                                     max_num_batched_tokens)
 *   is it fed (HBM bandwidth)       the classic check: one sequence at
 *                                   target_tps tokens/s reads every weight
 *                                   target_tps times a second:
 *                                     weight_read = weights_total x target_tps
 *                                   against tp x the GPU's HBM bandwidth
 *   is it computed (tensor cores)   the prefill of a `prompt_tokens` prompt (in
 *                                   chunks of max_num_batched_tokens), the
 *                                   TTFT floor of an idle replica
 *   does it scale (interconnect)    the all-reduce share of the decode steps
 * Step times come from the cost model (hw/cost.h): decode at batch 1 and at
 * max_batch with every sequence at `context_tokens`; each says which bound
 * holds the largest share of its time.
 * Worked check (tests/unit/test_plan.c): Llama-3.1-70B in BF16 is 70.55 B x 2
 * = 141.1 GB of weights: ceil(141.1 / 85.5) = 2 H100s (81,559 MiB each) just
 * to hold them; 50 tokens/s for one sequence is 141.1 GB x 50 = 7.06 TB/s of
 * weight reads, more than one H100's 3.35 TB/s (3 GPUs' worth).
 *
 * Ownership: plan_result is a plain value (configs copied in); the cost
 * model used to fill it is built and freed inside plan_analyze. */
#ifndef SIM_PLAN_H
#define SIM_PLAN_H

#include <stdio.h>

#include "hw/cost.h"
#include "hw/memplan.h"
#include "runner/scenario.h"

typedef struct plan_opts {
  uint32_t context_tokens; /* tokens per sequence for the batch and decode figures (0 = 2048) */
  uint32_t prompt_tokens;  /* prompt for the prefill figure (0 = 1024) */
  double target_tps;       /* tokens/s one sequence should see, for the bandwidth check (0 = 50) */
} plan_opts;

typedef struct plan_step {
  uint32_t micro;          /* decode with pipeline parallelism: sequences per micro-batch (else = batch) */
  uint32_t batch;          /* sequences in the step (prefill: 1) */
  uint32_t ctx_tokens;     /* decode: context of every sequence; prefill: prompt tokens */
  uint32_t chunks;         /* steps it took (prefill chunks; decode: 1) */
  double ns;               /* time of the step (decode) or of the whole prefill, ns */
  double tokens_per_s;     /* tokens computed per second (decode: batch / step) */
  double seq_tokens_per_s; /* decode: tokens/s one sequence sees (1 / step) */
  step_cost cost;          /* breakdown (prefill: summed over chunks) */
  cost_bound bound;        /* the bound with the largest share of the time */
  double bound_share;      /* that share, [0, 1] */
} plan_step;

enum { PLAN_MAX_LAYOUTS = 8 };

typedef struct plan_layout {
  uint32_t tp, pp, nodes;   /* nodes the replica's GPUs fill */
  bool valid;               /* the combination resolves (heads divide, whole nodes, ...) */
  bool fits;                /* its memory plan starts */
  char why[160];            /* why not, when !valid or !fits (short) */
  uint64_t kv_tokens;
  uint32_t ref_batch;       /* the batch of decode_ref: this plan's max_batch, capped by its own memory */
  plan_step decode1, decode_ref;
} plan_layout;

enum { PLAN_GATE_CAPACITY = 0, PLAN_GATE_BANDWIDTH, PLAN_GATE_COMPUTE, PLAN_GATE_INTERCONNECT, PLAN_GATES };

typedef struct plan_gate {
  const char *name;   /* "can it start (memory capacity)", ... */
  const char *status; /* "ok", "fails", "binds" or "minor" */
  char detail[1100];  /* the numbers, one sentence */
} plan_gate;

typedef struct plan_result {
  model_cfg model;
  gpu_cfg gpu;
  engine_cfg engine;
  deploy_cfg deploy;        /* resolved */
  plan_opts opts;           /* with defaults filled in */
  char cost_source[1400];   /* what served the step times (profsel.h) */
  char block_fp8[256];      /* block-FP8 checkpoints: which GEMM grid serves the linears and why ("" otherwise) */
  char ungated_moe[256];    /* Nemotron-3's ungated experts: what priced the routed experts ("" otherwise) */
  char graphs[256];         /* CUDA-graph mode and capture sizes (cost_graph_sizes_text) */
  mem_plan mem;
  bool fits;                /* the engine can start */
  char refusal[1024];       /* why not (memplan's message with the numbers), "" when it fits */
  uint32_t blocks_per_seq;  /* KV blocks one context_tokens sequence needs */
  uint64_t max_batch_memory;/* such sequences the KV pool holds */
  uint32_t max_batch;       /* largest decode batch: min(memory, max_num_seqs, max_num_batched_tokens) */
  const char *batch_limit;  /* what sets max_batch: "memory capacity (KV cache)", "max_num_seqs", ... */
  plan_step decode1;        /* decode, batch 1 */
  plan_step decode_max;     /* decode, batch max_batch (zeroed when max_batch is 0) */
  plan_step prefill;        /* one prompt of prompt_tokens, chunked */
  /* speculative decoding (deploy num_speculative_tokens > 0): the verify steps of decode1 and decode_max, their
     tokens/s at the expected tokens per step (1 + the sum of the acceptance rates) */
  double spec_tokens_per_step;
  plan_step spec1, spec_max;
  /* the classic check */
  double params;            /* model parameters */
  double weights_total_bytes;  /* whole model in the deployment's dtypes */
  double weights_active_bytes; /* what one token reads (a mixture of experts: its top-k experts only) */
  uint32_t min_gpus_weights;   /* ceil(weights_total / device memory) */
  double weight_read_Bps;      /* weights_total x target_tps */
  uint32_t min_gpus_bandwidth; /* ceil(weight_read / HBM bandwidth of one GPU) */
  double deploy_hbm_Bps;       /* tp x HBM bandwidth */
  /* One all-reduce of a full step (max_num_batched_tokens x H) as costed
   * (measured table unless --allreduce link) and by the link formula, as
   * bus bandwidth 2 (t-1)/t x bytes / time; ar_measured says the first came
   * from a measured table. */
  double ar_busbw_Bps, ar_link_busbw_Bps;
  bool ar_measured;
  /* --allreduce auto's check of the measured table (cost_allreduce_check);
   * ar_chk_valid: a table has the case. */
  ar_check ar_chk;
  bool ar_chk_valid;
  /* A TP group spanning nodes: how many, and one all-reduce of a batch-1
   * decode step (1 token): its whole time and the network's part of it. */
  uint32_t nodes;
  double ar1_ns, ar1_network_ns;
  double decode1_node_ns; /* the batch-1 decode step at TP = gpus_per_node (one node), for comparison */
  /* Layouts of the same GPUs (tp x pp = this deployment's), when the replica
   * spans nodes or pipelines: each costed like this plan (its own memory
   * plan and cost model, vLLM's defaults for it: no async scheduling with
   * PP). Decode with PP: b sequences spread over min(pp, b) micro-batches of
   * ceil(b / pp) (vLLM's batch queue keeps one batch per stage); a
   * sequence's token takes one trip through every stage (plan_step.ns), the
   * replica makes b tokens per trip. */
  uint32_t pp_network_hops;     /* pipeline sends that leave a node */
  double pp_send1_ns, pp_send_max_ns; /* all sends of one token's trip: batch 1, the largest batch's micro-batch */
  uint32_t n_layouts;
  plan_layout layouts[PLAN_MAX_LAYOUTS];
  int this_layout;          /* index of this deployment in layouts, -1 if not listed */
  plan_gate gates[PLAN_GATES];
} plan_result;

/* Loads the scenario's model, GPU and engine, resolves the deployment and
 * fills *out. Returns SIM_EINPUT for bad names or combinations (message names
 * the field); a deployment that cannot start is NOT an error here: out->fits
 * is false and out->refusal holds the numbers. */
int plan_analyze(plan_result *out, const scenario *sc, const plan_opts *opts, sim_err *err);

/* The human-readable plan. */
void plan_print(const plan_result *p, FILE *f);
/* The plan as JSON (fixed number format, deterministic). */
int plan_write_json(const plan_result *p, FILE *f, sim_err *err);

#endif
