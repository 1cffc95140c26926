/* cost_linattn.c: Gated DeltaNet recurrence kernels (see cost_linattn.h). No measured table is read yet (the
 * kernel database's linear_attention/gdn_perf is not imported): the roofline of what the kernels must move and
 * compute, with the engine's attention efficiencies, as the outputs' `cost model:` warning says.
 *
 * Decode (fused_recurrent_gated_delta_rule and causal_conv1d_update, as vLLM's and SGLang's qwen3_next.py
 * call them for one token): per sequence and layer the state S (v_heads x k_dim x v_dim, lin_state_dtype) is
 * read and written once (decay, k^T S, the rank-one update, q S: about 6 k_dim v_dim FLOP per head on CUDA
 * cores, under one FLOP per byte: memory-bound on every GPU), and the convolution state ((kernel - 1) x
 * channels) likewise; 2 kernels.
 * Prefill (the chunked form of the delta rule, flash-linear-attention's chunk_gated_delta_rule, chunks of 64
 * tokens, and causal_conv1d_fn): per token and value head about 2 (64 (2 k_dim + v_dim) + 2 k_dim v_dim)
 * FLOP on tensor cores (the intra-chunk products and the state's contribution and update), the state read and
 * written once per chunk of a sequence, and q, k, v, the gate and the output streamed once; 7 kernels (the
 * convolution and six of the chunked rule). The chunks of one sequence are processed in order (each chunk's
 * state update needs the previous one's): a call lasts at least its longest sequence's chunks x one chunk
 * step, LIN_CHUNK_STEP_NS, a latency no datasheet gives. It is read off the kernel database's gdn_perf
 * tables (AIConfigurator, Qwen3.5 shapes, one sequence of 32768 tokens, i.e. 512 chunks): 3.07 us per chunk
 * on H100 (vLLM 0.24.0's flashinfer kernel and SGLang 0.5.14's), 3.23 / 2.84 us on H200, 2.48 / 2.66 us on
 * B200, 2.29 / 2.93 us on GB200, the same at 8 and 64 value heads. 3 us is taken for every GPU (Blackwell's
 * chunks are up to a quarter shorter). Checked against the same tables: one 32768-token sequence at 8 value
 * heads 1.57 ms measured on H200 vs 1.54 ms here; decode of 1024 sequences at 8 value heads 276 us measured
 * (recurrence + convolution) vs 253 us here, of 256 at 64 heads 543 vs 506 us. */
#include "hw/cost_linattn.h"

#include "hw/cost_state.h"

enum { LIN_CHUNK = 64, LIN_DECODE_KERNELS = 2, LIN_PREFILL_KERNELS = 7 };
#define LIN_CHUNK_STEP_NS 3000.0 /* one chunk of one sequence, in order: measured, see above */

static double state_bytes(const cost_model *c) {
  const model_shard *s = &c->shard;
  return s->lin_state_elems * dtype_bytes(c->model->lin_state_dtype) + s->lin_conv_elems * act_b(c);
}

double cost__lin_decode(const cost_model *c, uint32_t batch) {
  if (!batch || !c->model->lin_layers) return 0;
  const engine_cfg *e = c->engine;
  double bytes = (double)batch * 2.0 * state_bytes(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff), floor = LIN_DECODE_KERNELS * c->kernel_floor_ns;
  return tm > floor ? tm : floor;
}

double cost__lin_prefill(const cost_model *c, uint64_t tokens, uint32_t seqs, uint32_t longest, cost_bound *bound) {
  *bound = BOUND_COMPUTE;
  if (!tokens || !c->model->lin_layers) return 0;
  const model_shard *s = &c->shard;
  const engine_cfg *e = c->engine;
  double kd = c->model->lin_k_dim, vd = c->model->lin_v_dim;
  double flops = (double)tokens * s->lin_v_heads * 2.0 * (LIN_CHUNK * (2.0 * kd + vd) + 2.0 * kd * vd);
  double peak = c->gpu->flops[c->deploy->act_dtype];
  double tc = peak > 0 ? ns_of(flops, peak * e->attn_prefill_eff) : 0;
  double io = (double)tokens * (s->lin_conv_ch + 2.0 * s->lin_v_heads * vd) * act_b(c); /* q, k, v in; z, out */
  double tm = ns_of(io + (double)seqs * 2.0 * state_bytes(c), c->gpu->hbm_Bps * e->attn_decode_eff);
  double seq = ceil((double)longest / LIN_CHUNK) * LIN_CHUNK_STEP_NS; /* the chunks in order */
  double floor = LIN_PREFILL_KERNELS * c->kernel_floor_ns, t = tc > tm ? tc : tm;
  if (tm > tc) *bound = BOUND_MEMORY;
  if (seq > t) t = seq, *bound = BOUND_COMPUTE; /* latency of dependent steps: not HBM-bound */
  return t > floor ? t : floor;
}
