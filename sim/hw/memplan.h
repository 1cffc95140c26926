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
 * Pipeline parallelism (pp stages): each stage holds its layers (vLLM's
 * split), the first the embedding, the last the final norm, LM head and the
 * sampler's logits; each computes its own pool for its layers and the
 * replica's pool is the smallest in blocks (a block holds a token's KV of
 * every layer, one stage's share on each of its GPUs).
 *
 * Speculative decoding with an EAGLE, EAGLE-3 or MTP head (config/specdec.h) adds the head to the last stage:
 * its decoder layer (the target's shape: the layer vLLM's llama_eagle.py / llama_eagle3.py / deepseek_mtp.py
 * builds; EAGLE-3's QKV projection takes the embedding and hidden state side by side, 2 x hidden wide), its fc
 * projecting the target's hidden states (EAGLE 2H -> H, EAGLE-3 3H -> H, MTP's eh_proj 2H -> H, replicated),
 * its norms, and an EAGLE-3 head's own LM head at draft_vocab_size (the embedding and, otherwise, the LM head
 * are the target's, shared). EAGLE heads are published in bf16 (the activation dtype here); an MTP layer is
 * part of the checkpoint, in its dtype. Its one attention layer keeps KV in the same pool: vLLM V1 registers
 * the drafter's layers with the KV cache, so a block holds one layer more.
 *
 * A plan "fits" only if kv_bytes > 0 and the pool holds one max_model_len
 * sequence (vLLM refuses to start otherwise); memplan_compute returns
 * SIM_EINPUT with the numbers when it does not. */
#ifndef SIM_MEMPLAN_H
#define SIM_MEMPLAN_H

/* The largest KV pool servesim models, in tokens (2^29; at page size 1 also its blocks, under the block
 * manager's bound of 2^30): a degenerate but valid model (a few bytes of KV per token) or a GPU file with
 * petabytes of memory would otherwise ask for more blocks than the block manager indexes. No real deployment
 * comes near it (a 1B model on a 141 GB GPU holds a few million tokens). */
#define MEMPLAN_MAX_KV_TOKENS 536870912.0

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
  bool kv_capped;             /* the memory holds more than MEMPLAN_MAX_KV_TOKENS: the pool is cut there */
  uint64_t kv_tokens;         /* kv_blocks x block_tokens */
  uint32_t max_model_len;     /* tokens */
  double max_concurrency_at_max_len; /* kv_tokens / max_model_len, like vLLM's log line */
  double weights_total_bytes; /* whole model, all GPUs */
  double draft_weights_bytes; /* per GPU, the speculative draft head's, included in weights_bytes (and in the last
                                 pipeline stage's); 0 without an EAGLE, EAGLE-3 or MTP head */
  uint32_t draft_kv_layers;   /* the draft head's attention layers, in kv_bytes_per_token (last stage) */
  /* linear-attention (recurrent) states of a hybrid model (0 / UINT32_MAX slots without): per sequence, set
     aside, and the sequences that get one, which caps the running batch (engine state_memory_ratio) */
  double state_bytes_per_seq, state_bytes;
  uint32_t state_slots;
  double window_bytes; /* the sliding-window layers' windows of max_num_seqs sequences, set aside (0 without) */
  /* pipeline parallelism: each stage (a TP group of consecutive layers) sizes its own pool and the engine
     uses the smallest; the per-GPU fields above describe binding_stage */
  uint32_t pp;                          /* stages (1 without pipeline parallelism) */
  uint32_t binding_stage;               /* the stage with the fewest blocks (or whose weights do not fit) */
  uint32_t stage_layers[CFG_MAX_PP];    /* layers of each stage (vLLM's split: shard_pp_layers) */
  double stage_weights_bytes[CFG_MAX_PP]; /* per GPU */
  uint32_t stage_kv_blocks[CFG_MAX_PP]; /* blocks each stage's memory would hold */
  bool fits;
} mem_plan;

/* d must be resolved (cfg_resolve). Fills p in every case; returns SIM_EINPUT
 * with a message giving the numbers when the deployment cannot start. */
/* The plan as a JSON object named key (run results and `plan --json` write the same block). */
struct jw;
void memplan_write_json(struct jw *j, const char *key, const mem_plan *p);

int memplan_compute(mem_plan *p, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e,
                    const deploy_cfg *d, sim_err *err);
/* Weights of the whole model in the deployment's dtypes, bytes. */
double memplan_weight_bytes(const model_cfg *m, const deploy_cfg *d);
/* The weights one token reads: all of a dense model's; of a mixture of
 * experts, all but the routed experts it does not use (experts - top-k per
 * MoE layer). */
double memplan_active_weight_bytes(const model_cfg *m, const deploy_cfg *d);
double memplan_kv_bytes_per_token(const model_cfg *m, const deploy_cfg *d);
/* Recurrent-state bytes one sequence holds on a GPU for the linear-attention layers among [first, first + n). */
double memplan_state_bytes_per_seq(const model_cfg *m, const deploy_cfg *d, uint32_t first_layer, uint32_t layers);

#endif
