/* cost_impl.h: what the cost model's files (cost.c, cost_attn.c, cost_decstep.c,
 * cost_comm.c) share and nothing else includes: units, the deployment's
 * sizes, and the terms one file computes for another. */
#ifndef SIM_COST_IMPL_H
#define SIM_COST_IMPL_H

#include "hw/cost.h"

static inline uint32_t tp_of(const cost_model *c) { return c->shard.tp; }
static inline double act_b(const cost_model *c) { return dtype_bytes(c->deploy->act_dtype); }
static inline double kv_b(const cost_model *c) { return dtype_bytes(c->deploy->kv_dtype); }
static inline double ns_of(double work, double rate) { return work / rate * 1e9; }
/* A step's op times added in op order, zeros skipped (x + 0 is x): the same sum, a shorter chain of additions. */
static inline double cost__sum_ops(const double *v) {
  double s = 0;
  for (int op = 0; op < OP_COUNT; op++)
    if (v[op] != 0) s += v[op];
  return s;
}
/* Attention work of a chunk of c tokens after x cached ones: token i attends
 * to x + i + 1 tokens. */
static inline double chunk_work(double c, double x) { return c * x + c * (c + 1.0) / 2.0; }

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

/* A time measured on another GPU type scaled to this one by the datasheet
 * ratio of the bound resource (cost.c). */
bool cost__scale_other(const cost_model *c, cost_bound b, double peak_here, double peak_there, double *ns);
/* One decode call of `batch` sequences over ctx_total tokens; one prefill chunk (cost_attn.c). */
double cost__attn_decode_eval(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src,
                              cost_bound *bound);
double cost__attn_prefill_eval(const cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src, cost_bound *bound);
/* The same calls in a sliding-window layer (cost_attn.c): from the measured tables of the model's window when a
 * companion holds them (cost_set_window_tables), else the full-attention call at the windowed work (decode: the
 * context capped at the window; a chunk: `full_ns`, its full-attention time, scaled by its windowed share). */
double cost__attn_window_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src);
double cost__attn_window_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx, double full_ns, cost_src *src);
/* One TP all-reduce of `tokens` x H activations as the deployment costs it; the DP group's dispatch and
 * combine of Tg tokens (cost_comm.c). */
double cost__allreduce_eval(const cost_model *c, uint32_t tokens, bool graphed, cost_src *src);
double cost__dp_collective_ns(const cost_model *c, uint32_t Tg, cost_src *src);

/* The floors a profile measures (cost_select.c): kernel_floor_ns from its 1 x 128 x 128 GEMM in the
 * activation dtype, attn_floor_ns from its 2-token single-sequence decode call. */
void cost__floors_from(cost_model *c, const prof *p);
/* What one FP8 per-tensor (W8A8) GEMM call of profile p's table spends quantizing its input beyond the one
 * elementwise kernel of a static activation scale (cost_select.c); 0 when p has no such table or the
 * difference is not positive. */
double cost__fp8_requant_ns(const cost_model *c, const prof *p);

/* Marks the memoized T-dependent parts and decode-attention lookups stale (cost_select.c), after a change of
 * the tables that serve them. */
void cost__memo_clear(cost_model *c);

#endif
