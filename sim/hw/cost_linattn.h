/* cost_linattn.h: the recurrence of a hybrid model's linear-attention layers (Gated DeltaNet, model_cfg lin_*;
 * Mamba-2, model_cfg mamba)
 * for one layer of a step: Gated DeltaNet from the kernel database's measured gdn_perf tables where attached
 * (cost_set_gdn_tables), else from first principles: the GPU file's datasheet rates and the engine's attention
 * efficiencies. A part that cost.c calls; it calls nothing of cost.c. The layers' projections are GEMMs and
 * priced by cost.c like the others. */
#ifndef SIM_COST_LINATTN_H
#define SIM_COST_LINATTN_H

#include "hw/cost_types.h"

/* The decode call of `batch` sequences: each reads and writes its recurrent and convolution state once. */
double cost__lin_decode(const cost_model *c, uint32_t batch);
/* The prefill call over `tokens` tokens of `seqs` chunks (one varlen call), the longest of `longest` tokens:
 * the chunked delta rule's tensor-core work, each chunk's state read and written, and the longest sequence's
 * 64-token chunks one after another. */
double cost__lin_prefill(const cost_model *c, uint64_t tokens, uint32_t seqs, uint32_t longest, cost_bound *bound);

/* DeepSeek sparse attention (model_cfg dsa_*; cost_linattn.c too: the other attention that is not a plain
 * KV read). The context tokens the MLA attention reads: each query its dsa_topk best, so a decode call of
 * `batch` sequences over ctx_total tokens reads at most batch x topk (exact when every context is above the
 * top-k or every one below); and the share of a prefill chunk's dense attention work it keeps. */
uint64_t cost__dsa_decode_ctx(const cost_model *c, uint32_t batch, uint64_t ctx_total);
double cost__dsa_prefill_share(const cost_model *c, uint32_t chunk, uint32_t ctx);
/* The indexer of one layer: its FP8 scores of every cached key for each query (tensor cores), its key cache
 * read, the score matrix written and read by the top-k selection. Decode: `batch` queries over ctx_total keys
 * in all; prefill: a chunk after ctx cached tokens. */
double cost__dsa_index_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total);
double cost__dsa_index_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx);

#endif
