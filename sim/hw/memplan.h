/* memplan.h: per-GPU memory plan of one replica and the KV pool it leaves.
 *
 *   budget      = device memory x gpu_memory_utilization
 *   kv_bytes    = budget - weights - activation peak - CUDA graph pool - runtime overhead
 *   kv_blocks   = floor(kv_bytes / bytes_per_block) - 1   (vLLM reserves one null block)
 * Weights per GPU: the linear layers in the weight dtype (INT4 adds one 16-bit
 * scale per 128 weights), embeddings, LM head and norms in the activation
 * dtype, divided by TP (vLLM shards the vocabulary too).
 * KV bytes per token per GPU: 2 (K and V) x layers x max(1, kv_heads / tp) x
 * head_dim x KV dtype bytes.
 * Activation peak: the profile run of a max_num_batched_tokens forward plus
 * the sampler's logits for max_num_seqs sequences (fp32), times the engine's
 * activation_scale.
 *
 * A plan "fits" only if kv_bytes > 0 and the pool holds one max_model_len
 * sequence (vLLM refuses to start otherwise); memplan_compute returns
 * SIM_EINPUT with the numbers when it does not. */
#ifndef SIM_MEMPLAN_H
#define SIM_MEMPLAN_H

#include "config/cfg.h"

typedef struct mem_plan {
  double device_bytes;        /* device memory per GPU */
  double budget_bytes;        /* device x gpu_memory_utilization */
  double weights_bytes;       /* per GPU */
  double activation_bytes;    /* peak of the profile forward, per GPU */
  double cuda_graph_bytes;    /* per GPU */
  double runtime_bytes;       /* per GPU */
  double kv_bytes;            /* left for the KV pool, per GPU (may be negative when it does not fit) */
  double kv_bytes_per_token;  /* per GPU */
  double kv_bytes_per_block;  /* per GPU */
  uint32_t block_tokens;
  uint32_t kv_blocks;         /* usable blocks (null block excluded); 0 when it does not fit */
  uint64_t kv_tokens;         /* kv_blocks x block_tokens */
  uint32_t max_model_len;     /* tokens */
  double max_concurrency_at_max_len; /* kv_tokens / max_model_len, like vLLM's log line */
  double weights_total_bytes; /* whole model, all GPUs */
  bool fits;
} mem_plan;

/* d must be resolved (cfg_resolve). Fills p in every case; returns SIM_EINPUT
 * with a message giving the numbers when the deployment cannot start. */
int memplan_compute(mem_plan *p, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e,
                    const deploy_cfg *d, sim_err *err);
/* Weights of the whole model in the deployment's dtypes, bytes. */
double memplan_weight_bytes(const model_cfg *m, const deploy_cfg *d);
double memplan_kv_bytes_per_token(const model_cfg *m, const deploy_cfg *d);

#endif
