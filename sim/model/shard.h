/* shard.h: a dense transformer's per-GPU shapes under tensor parallelism:
 * the one place they are computed. The cost model (hw/cost.c), the memory
 * plan (hw/memplan.c), the calibration plan (kernels/kern_plan.c) and the
 * reports all use these numbers, so a GEMM timed by `calibrate`, the weights
 * the memory plan counts and the GEMM the cost model looks up are the same
 * shape with the same rounding.
 *
 * At TP t (vLLM's ColumnParallel/RowParallel/VocabParallel layers):
 *   q_heads   = ceil(q / t)                (t divides q in a valid deployment)
 *   kv_heads  = max(1, kv / t)             KV heads are replicated when t > kv
 *   inter     = ceil(I / t)                each of gate and up
 *   vocab     = ceil(round_up(V, 64) / t)  vLLM pads the vocabulary to 64
 *                                          before sharding it
 *   GEMMs C[M, N] = A[M, K] W[N, K]^T, M = tokens:
 *     QKV      N = (q_heads + 2 kv_heads) head_dim, K = H
 *     O        N = H,                             K = q_heads head_dim
 *     GATE_UP  N = 2 inter (inter: an ungated MLP), K = H
 *     DOWN     N = H,                             K = inter
 *     LM_HEAD  N = vocab,                         K = H
 * KV cache per token per layer: 2 kv_heads head_dim elements.
 * attn_output_gate (Qwen3.5): QKV N also holds the gate, q_heads head_dim more.
 * Ownership: plain values. */
#ifndef SIM_SHARD_H
#define SIM_SHARD_H

#include "config/cfg.h"

typedef enum shard_gemm { SG_QKV = 0, SG_O, SG_GATE_UP, SG_DOWN, SG_LM_HEAD, SG_COUNT } shard_gemm;

#define SHARD_VOCAB_PAD 64u /* vLLM's VocabParallelEmbedding pads the vocabulary to a multiple of 64 */

typedef struct model_shard {
  uint32_t tp;       /* tensor-parallel degree */
  uint32_t hidden;   /* H, elements (not sharded) */
  uint32_t head_dim; /* elements */
  uint32_t q_heads;  /* query heads on one GPU */
  uint32_t kv_heads; /* KV heads on one GPU (replicated when tp > kv heads) */
  uint32_t inter;    /* intermediate size on one GPU (each of gate and up) */
  uint32_t vocab;    /* LM-head rows on one GPU (padded vocabulary / tp) */
  uint32_t n[SG_COUNT], k[SG_COUNT]; /* GEMM shapes on one GPU (the FFN rows: a dense layer's MLP) */
  /* mixture of experts (shard_init; 0 for dense models): vLLM's FusedMoE
     without expert parallelism splits every expert's intermediate size over
     the TP ranks, like a dense MLP; the router (gate) is replicated */
  uint32_t experts, topk;  /* routed experts, experts per token */
  uint32_t dp;             /* attention data-parallel ranks the MoE layers span with the TP ranks (1 = none) */
  uint32_t ep;             /* expert parallelism (vLLM --enable-expert-parallel: the dp x tp ranks hold whole
                              experts, experts / ep each, instead of a 1/(dp tp) slice of every expert); 1 = none */
  uint32_t moe_tp;         /* the MoE layer's tensor parallelism: dp x tp without expert parallelism, else 1 */
  uint32_t local_experts;  /* experts whose weights one GPU holds: experts / ep */
  uint32_t expert_inter;   /* one expert's intermediate size on one GPU: ceil(I_e / moe_tp) */
  uint32_t shared_inter;   /* the shared experts' intermediate size on one GPU: ceil(I_s / tp) */
  uint32_t expert_hidden;  /* the width the routed experts run at: moe_latent_size (Nemotron-3), else H */
  uint32_t moe_latent;     /* moe_latent_size (0 = none): fc1_latent_proj (N = latent, K = H) and fc2_latent_proj
                              (N = H, K = latent), replicated on every rank (vLLM ReplicatedLinear) */
  double expert_mats;      /* matrices of one expert: 3 (gate, up, down), 2 ungated (Nemotron-3's relu2 experts) */
  /* multi-head latent attention (vLLM's MLA): the latent KV cache (kv_lora_rank + qk_rope_dim per token and
     layer) is the same on every TP rank, replicated; q_a/kv_a projections are replicated (SG_QKV holds
     them: N = q_lora + kv_lora + rope, K = H), q_b and kv_b split the heads; SG_O is o_proj (K = heads_g v) */
  bool mla;
  uint32_t mla_kv;         /* KV-cache elements per token and layer: kv_lora_rank + qk_rope_dim */
  uint32_t kv_lora, v_dim; /* latent rank, value head dim */
  uint32_t qb_n, qb_k;     /* q_b_proj (or the direct q_proj when there is no q_lora): N = heads_g (nope + rope) */
  uint32_t kvb_n, kvb_k;   /* kv_b_proj: N = heads_g (nope + v), K = kv_lora */
  /* Gated DeltaNet layers (model_cfg lin_*; 0 without): heads split over TP like attention heads. Mamba-2
     layers (model_cfg mamba) use the same fields: lin_v_heads its heads, lin_k_heads its groups per GPU,
     in_proj N = 2 heads hd + 2 groups state + heads, conv channels heads hd + 2 groups state, the state
     heads hd state */
  uint32_t lin_k_heads, lin_v_heads; /* per GPU: ceil(heads / tp) */
  uint32_t lin_in_n, lin_in_k;       /* in_proj: N = 2 kh k_dim + 2 vh v_dim + 2 vh, K = H */
  uint32_t lin_out_n, lin_out_k;     /* out_proj: N = H, K = vh v_dim */
  uint32_t lin_conv_ch;              /* short-convolution channels: 2 kh k_dim + vh v_dim */
  double lin_state_elems;            /* recurrent state per sequence and layer: vh k_dim v_dim */
  double lin_conv_elems;             /* convolution state per sequence and layer: (kernel - 1) conv_ch */
} model_shard;

/* From raw dimensions (tp 0 means 1). */
void shard_from_dims(model_shard *s, uint32_t hidden, uint32_t intermediate, uint32_t q_heads, uint32_t kv_heads,
                     uint32_t head_dim, uint32_t vocab, uint32_t tp);
void shard_init(model_shard *s, const model_cfg *m, uint32_t tp);
/* One GPU's rows of an LM head of `vocab` tokens under tensor parallelism tp (vLLM's ParallelLMHead: the vocabulary
 * padded to SHARD_VOCAB_PAD, then split): the target's, and an EAGLE-3 draft head's reduced vocabulary. */
uint32_t shard_vocab(uint32_t vocab, uint32_t tp);
/* shard_init with expert parallelism over ep ranks (ep 0 or 1: none; the
 * experts' intermediate size is then not split). */
void shard_init_ep(model_shard *s, const model_cfg *m, uint32_t tp, uint32_t ep);
/* The same with dp attention data-parallel ranks (0 or 1: none): the MoE
 * layers span dp x tp GPUs (vLLM FusedMoEParallelConfig: tp_size x dp_size
 * flattened; ep must then be 1 or dp x tp); attention, dense MLPs and the
 * shared experts stay at tp. */
void shard_init_dp(model_shard *s, const model_cfg *m, uint32_t tp, uint32_t dp, uint32_t ep);
/* KV-cache elements per token per layer on one GPU (K and V; MLA: the latent). */
static inline uint32_t shard_kv_elems(const model_shard *s) { return s->mla ? s->mla_kv : 2 * s->kv_heads * s->head_dim; }
const char *shard_gemm_name(shard_gemm g);

/* Layers of pipeline stage `rank` of `pp` (vLLM get_pp_indices,
 * model_executor/models/utils.py): layers / pp each; the remainder r goes one
 * each to the r stages before the last (partitions[-2], [-3], ...): the last
 * stage also holds the final norm and the LM head, the first the embedding.
 * Stage ranks are 0 .. pp-1; pp 0 means 1. */
uint32_t shard_pp_layers(uint32_t layers, uint32_t pp, uint32_t rank); /* "qkv", "o", "gate_up", "down", "lm_head" */

#endif
