/* cost_linattn.h: the recurrence of a hybrid model's linear-attention layers (Gated DeltaNet, model_cfg lin_*)
 * for one layer of a step, from first principles: the GPU file's datasheet rates and the engine's attention
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

#endif
