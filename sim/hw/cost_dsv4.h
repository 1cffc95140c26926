/* cost_dsv4.h: DeepSeek-V4's compressed attention (model_cfg dsv4: CSA and HCA layers) for one layer of a step,
 * from first principles: what each query reads (its window of uncompressed tokens and the compressed entries),
 * the CSA indexer's scoring, and the compressors' projections. The attention kernel itself is priced by cost.c
 * as MLA over those entries; this says how many. A part that cost.c calls; it calls nothing of cost.c. */
#ifndef SIM_COST_DSV4_H
#define SIM_COST_DSV4_H

#include "hw/cost_types.h"

/* The entries a decode call of `batch` sequences over ctx_total cached tokens reads in one layer of compression
 * `ratio` (csa_ratio or hca_ratio): each sequence its window (sliding_window tokens) and its ctx / ratio
 * compressed entries, of which a CSA layer reads csa_topk at most (bounds as for DSA: exact when every context
 * is on the same side of the bounds). */
uint64_t cost__dsv4_decode_ctx(const cost_model *c, uint32_t batch, uint64_t ctx_total, uint32_t ratio);
/* The share of a prefill chunk's dense causal attention work (chunk queries after ctx cached tokens) that one
 * layer of compression `ratio` keeps. */
double cost__dsv4_prefill_share(const cost_model *c, uint32_t chunk, uint32_t ctx, uint32_t ratio);
/* A CSA layer's indexer: dsa_heads x dsa_head_dim dot products (at the FP8 tensor-core rate, DeepGEMM's
 * fp8_paged_mqa_logits) of each query with every compressed index
 * key (ctx / csa_ratio of them), the keys read, the scores written and read by the top-k. */
double cost__dsv4_index_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total);
double cost__dsv4_index_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx);
/* The compressors' projections (and CSA's indexer queries) of every compressed layer for T tokens: GEMMs of
 * K = hidden (the value and gate streams, cfg_model_dsv4_layer_params) and K = q_lora_rank (the indexer's
 * queries), whole on every rank; *bound: the larger part's. */
double cost__dsv4_proj_ns(const cost_model *c, uint32_t T, cost_bound *bound);

#endif
