/* cost_draft.h: speculative decoding's draft model (deploy_cfg.spec_draft, method draft_model): its forward passes
 * in a step, priced at its own shapes through the same tables as the target's layers (cost_gemm.h, cost_attn.h,
 * cost_comm.h). A part that cost.c calls (spec_draft); it calls nothing of cost.c. */
#ifndef SIM_COST_DRAFT_H
#define SIM_COST_DRAFT_H

#include "hw/cost_types.h"

/* The draft's passes of a step with b->spec_seqs speculating sequences, added to out's OP_SPEC_DRAFT and bounds. */
void cost__draft_model(cost_model *c, const batch_desc *b, bool graphed, step_cost *out);

#endif
