/* cost_decstep.h: whole decode-only steps, memoized (cost_decstep.c), a part of the cost model that cost.c
 * calls; it calls nothing of cost.c. */
#ifndef SIM_COST_DECSTEP_H
#define SIM_COST_DECSTEP_H

#include "hw/cost_types.h"

/* Whole decode-only steps, memoized (cost_decstep.c): cost_step asks the table first (true: *out filled), else
 * computes the step and offers it with the key the ask made. */
typedef struct cost_dec_key {
  uint64_t tag;           /* batch | mean kv_len << 32; 0: not a step the table keeps */
  uint8_t bound;
  uint64_t before[OP_COUNT][SRC_COUNT]; /* src_count before the step (a miss) */
} cost_dec_key;
void cost__dec_step_init(cost_model *c);
bool cost__dec_step_get(cost_model *c, const batch_desc *b, step_cost *out, cost_dec_key *k);
void cost__dec_step_put(cost_model *c, const cost_dec_key *k, const step_cost *out);

#endif
