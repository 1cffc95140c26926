/* cost_attn.h: the attention terms of the cost model (cost_attn.c): one decode call over a batch, one prefill
 * chunk, and the same in a sliding-window layer, from the attached tables (cost_select.h) or the roofline. A
 * part that cost.c calls; it calls nothing of cost.c. */
#ifndef SIM_COST_ATTN_H
#define SIM_COST_ATTN_H

#include "hw/cost_types.h"

/* One decode call of `batch` sequences over ctx_total tokens; one prefill chunk. */
double cost__attn_decode_eval(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src,
                              cost_bound *bound);
double cost__attn_prefill_eval(const cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src, cost_bound *bound);
/* The same calls in a sliding-window layer: from the measured tables of the model's window when a
 * companion holds them (cost_set_window_tables), else the full-attention call at the windowed work (decode: the
 * context capped at the window; a chunk: `full_ns`, its full-attention time, scaled by its windowed share). */
double cost__attn_window_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src);
double cost__attn_window_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx, double full_ns, cost_src *src);
/* The factor from the model's attention shapes (head_dim, num_key_value_heads: the measured calls' and the
 * roofline's) to a layer kind's own (model_cfg.full_* / swa_*: Gemma 4's full layers, MiMo's sliding-window
 * ones): decode (memory-bound) scales with the KV elements a token holds on one GPU, prefill (compute-bound)
 * with the head dim (the same query heads); 1 where the kind has the model's shapes. cost_init keeps the four
 * factors in cost_model.attn_kind_f for the step. */
double cost__attn_kind_factor(const cost_model *c, bool sliding, bool decode);

/* The same for `plan`, tests and reports (cost.h's components: one GPU, one layer's call; src may be NULL): a
 * decode call of `batch` sequences attending to ctx_tokens_total tokens in all, and one prefill chunk alone
 * (its own attention call). */
double cost_attn_decode_ns(cost_model *c, uint32_t batch, uint64_t ctx_tokens_total, cost_src *src);
double cost_attn_prefill_ns(cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src);

#endif
