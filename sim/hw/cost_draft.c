/* cost_draft.c: a draft model's forward passes (cost_draft.h). */
#include "hw/cost_draft.h"

#include <math.h>

#include "hw/cost_attn.h"
#include "hw/cost_comm.h"
#include "hw/cost_gemm.h"
#include "hw/cost_state.h"

/* One forward of a draft model (deploy_cfg.spec_draft, a dense transformer of full-attention layers split over the
 * target's TP ranks) over M tokens, B of them decoding over `ctx` tokens of context together: its GEMMs at its own
 * shard shapes from the same measured tables (QKV with its heads, O, gate/up, down per layer; the LM head), its
 * decode attention as the target's decode call scaled by the ratio of KV elements a token reads per layer (decode
 * attention streams the cache: cost__attn_kind_factor's rule), two all-reduces per layer of its hidden size (the
 * target's message scaled by the hidden sizes), and its norms, activations and residual adds as elementwise kernels.
 * The prompt tokens a first pass covers attend with the decode call's rate too (not measured apart). */
static double draft_forward(cost_model *c, uint32_t M, uint32_t B, uint64_t ctx, bool graphed, double *bound,
                                  cost_src *src) {
  const deploy_cfg *d = c->deploy;
  uint32_t t = tp_of(c), H = d->spec_draft.hidden, hd = d->spec_draft.head_dim;
  uint32_t qh = d->spec_draft.q_heads / t, kvh = d->spec_draft.kv_heads >= t ? d->spec_draft.kv_heads / t : 1;
  uint32_t I = d->spec_draft.inter / t;
  double L = d->spec_draft.layers, ns = 0, g;
  cost_src s;
  cost_bound bd;
#define GEMM(op, n, kk)                                              \
  g = cost__gemm_shape_eval(c, op, M, n, kk, false, &s, &bd) * L;    \
  bound[bd] += g, ns += g
  GEMM(OP_GEMM_QKV, (qh + 2 * kvh) * hd, H);
  GEMM(OP_GEMM_O, H, qh * hd);
  GEMM(OP_GEMM_GATEUP, 2 * I, H);
  GEMM(OP_GEMM_DOWN, H, I);
#undef GEMM
  *src = s;
  g = cost__gemm_shape_eval(c, OP_LM_HEAD, B, shard_vocab(d->spec_draft.vocab, t), H, false, &s, &bd) +
      cost__kernels_ns(c, 1, (double)B * d->spec_draft.vocab * 4.0); /* the LM head of each draft position, its argmax */
  bound[bd] += g, ns += g;
  double kv_t = (double)c->shard.kv_heads * c->shard.head_dim, kv_d = (double)kvh * hd;
  if (B && kv_t > 0) {
    g = cost__attn_decode_eval(c, B, ctx, &s, &bd) * kv_d / kv_t * L;
    bound[bd] += g, ns += g;
  }
  if (t > 1) {
    uint32_t msg = (uint32_t)ceil((double)M * H / c->model->hidden);
    g = 2.0 * L * cost__allreduce_eval(c, msg ? msg : 1, graphed, &s);
    bound[BOUND_COMM] += g, ns += g;
  }
  g = cost__kernels_ns(c, c->engine->elementwise_kernels_per_layer * L, (double)M * L * act_b(c) * (8.0 * H + 3.0 * I + 2.0 * (qh + kvh) * hd));
  bound[BOUND_MEMORY] += g, ns += g;
  return ns;
}

/* vLLM's draft-model proposer (v1/spec_decode/draft_model.py, over eagle.py's propose loop): the first pass runs the
 * draft over every token the step computed (the prompt chunks included, so the draft's own cache fills), the
 * num_speculative_tokens - 1 later passes over one token per speculating sequence, each ending in the draft's LM
 * head and a greedy argmax. */
void cost__draft_model(cost_model *c, const batch_desc *b, bool graphed, step_cost *out) {
  uint32_t k = c->deploy->num_speculative_tokens, B = b->spec_seqs;
  uint64_t ctx = b->decode_ctx_tokens * B / (b->num_decode ? b->num_decode : 1); /* the speculating ones' share */
  double bound[BOUND_COUNT] = {0}, total = 0;
  cost_src s = SRC_ROOFLINE;
  for (uint32_t p = 0; p < k; p++) {
    uint32_t M = p == 0 ? b->num_tokens : B, Mg = graphed ? cost__graph_size(c, M) : M;
    total += draft_forward(c, Mg, B, ctx + (uint64_t)p * B, graphed, bound, &s);
  }
  out->op_ns[OP_SPEC_DRAFT] += total;
  for (int q = 0; q < BOUND_COUNT; q++) out->bound_ns[q] += bound[q];
  c->src_count[OP_SPEC_DRAFT][s]++;
}
