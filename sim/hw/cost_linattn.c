/* cost_linattn.c: Gated DeltaNet and Mamba-2 (below) recurrence kernels (see cost_linattn.h).
 * Gated DeltaNet from the kernel database's gdn_perf tables where a profile of this GPU holds the deployment's
 * per-GPU shape (cost_set_gdn_tables; the run's `cost model:` line names the profile): a decode call of `batch`
 * sequences is the table's generation cell (batch, 1) -- causal_conv1d_update plus the fused recurrent rule, as
 * measured --, a prefill call of `tokens` over `seqs` chunks its context cell (seqs, ceil(tokens / seqs)):
 * causal_conv1d_fn plus the chunked rule over `seqs` prompts of equal length (a varlen call of unequal chunks
 * taken at their mean length; a chunk after cached tokens as a prompt, its initial state's one read not
 * added). Elsewhere (no profile, another shape; Mamba-2 always: kernel-db's mamba2_perf is not imported) the
 * roofline of what the kernels must move and compute, with the engine's attention efficiencies, as follows.
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
  double ns;
  if (c->gdn_prof && prof_gdn_ns(c->gdn_prof, &c->gdn_gen, batch, 1, &ns)) return ns; /* measured, see above */
  const engine_cfg *e = c->engine;
  double bytes = (double)batch * 2.0 * state_bytes(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff), floor = LIN_DECODE_KERNELS * c->kernel_floor_ns;
  return tm > floor ? tm : floor;
}

/* ---- Mamba-2 (model_cfg mamba: Nemotron-H) --------------------------------------------------------------------
 * Decode (causal_conv1d_update and selective_state_update, vLLM's MambaMixer2 for one token): per sequence and
 * layer the SSM state (heads x head_dim x state, lin_state_dtype) and the convolution state are read and written
 * once, about 6 FLOP per state element on CUDA cores: memory-bound on every GPU, cost__lin_decode's formula
 * above, 2 kernels.
 * Prefill (causal_conv1d_fn and the SSD chunked scan of mamba_chunk_scan_combined: _chunk_cumsum, _bmm_chunk
 * (C B^T), _chunk_state, _state_passing, _chunk_scan; 6 kernels), from the SSD algorithm (Dao & Gu 2024,
 * "Transformers are SSMs", section 6), chunks of Q = chunk_size tokens, P = head_dim, N = state, per token:
 *   tensor-core FLOP   heads (2 Q P            the intra-chunk (C B^T masked) x
 *                              + 4 N P)         the chunk's state B^T x and the output's C state
 *                      + groups 2 Q N           C B^T, one per group
 *   HBM bytes          act_b (2 conv_ch         the convolution's input and output
 *                             + conv_ch + heads  the scan's x, B, C and dt
 *                             + heads P)         its output
 *   and per chunk the chunk states heads P N: written in FP32 by _chunk_state, read and written (the passed
 *   states, activation dtype) by _state_passing, read by _chunk_scan: (2 x 4 + 2 act_b) bytes an element; per
 *   sequence the final state written and the initial one read. Chunks: at most tokens / Q + one partial chunk
 *   per sequence. The chunks of one sequence meet only in _state_passing, an elementwise recurrence over the
 *   chunk states whose serial latency is not modelled (no table measures it: kernel-db's mamba2_perf holds the
 *   convolution kernels only). Not bound by a datasheet figure other than peak FLOP/s and HBM bandwidth, with
 *   the engine's attention efficiencies. */
enum { MAMBA_PREFILL_KERNELS = 6 };

static double mamba_prefill(const cost_model *c, uint64_t tokens, uint32_t seqs, cost_bound *bound) {
  const model_shard *s = &c->shard;
  const model_cfg *m = c->model;
  const engine_cfg *e = c->engine;
  double Q = m->mamba_chunk, P = m->mamba_head_dim, N = m->ssm_state, h = s->lin_v_heads, g = s->lin_k_heads;
  double T = (double)tokens;
  double flops = T * (h * (2.0 * Q * P + 4.0 * N * P) + g * 2.0 * Q * N);
  double peak = c->gpu->flops[c->deploy->act_dtype];
  double tc = peak > 0 ? ns_of(flops, peak * e->attn_prefill_eff) : 0;
  double chunks = ceil(T / Q) + seqs - 1.0;
  if (chunks > T) chunks = T;
  double io = T * (3.0 * s->lin_conv_ch + h + h * P) * act_b(c);
  double cs = chunks * h * P * N * (2.0 * 4.0 + 2.0 * act_b(c));
  double tm = ns_of(io + cs + (double)seqs * 2.0 * state_bytes(c), c->gpu->hbm_Bps * e->attn_decode_eff);
  double t = tc > tm ? tc : tm, floor = MAMBA_PREFILL_KERNELS * c->kernel_floor_ns;
  *bound = tm > tc ? BOUND_MEMORY : BOUND_COMPUTE;
  return t > floor ? t : floor;
}

double cost__lin_prefill(const cost_model *c, uint64_t tokens, uint32_t seqs, uint32_t longest, cost_bound *bound) {
  *bound = BOUND_COMPUTE;
  if (!tokens || !c->model->lin_layers) return 0;
  if (c->model->mamba) return mamba_prefill(c, tokens, seqs, bound);
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
  uint32_t len = (uint32_t)((tokens + seqs - 1) / seqs);
  double ns;
  if (c->gdn_prof && prof_gdn_ns(c->gdn_prof, &c->gdn_ctx, seqs, len, &ns)) return ns; /* measured, see above */
  if (seq > t) t = seq, *bound = BOUND_COMPUTE; /* latency of dependent steps: not HBM-bound */
  return t > floor ? t : floor;
}

/* ---- DeepSeek sparse attention ------------------------------------------------------------------------------
 * The indexer (vLLM's deepseek_v2.py Indexer, DeepSeek-V3.2's inference code): per query token, index_n_heads
 * FP8 dot products of index_head_dim with every cached index key (DeepGEMM's fp8_mqa_logits /
 * fp8_paged_mqa_logits), weighted and summed over heads into one FP32 score per key, then a top-k of
 * index_topk. Its weights are replicated on every TP rank (every rank scores its queries' whole context). */

uint64_t cost__dsa_decode_ctx(const cost_model *c, uint32_t batch, uint64_t ctx_total) {
  uint64_t k = c->model->dsa_topk;
  if (!k) return ctx_total;
  uint64_t cap = (uint64_t)batch * k;
  return ctx_total < cap ? ctx_total : cap;
}

/* Sum over the chunk's queries i = 0 .. chunk-1 of min(ctx + i + 1, topk). */
static double dsa_work(double chunk, double ctx, double k) {
  double n1 = k - ctx; /* queries whose whole context fits in the top-k */
  if (n1 < 0) n1 = 0;
  if (n1 > chunk) n1 = chunk;
  return chunk_work(n1, ctx) + (chunk - n1) * k;
}

double cost__dsa_prefill_share(const cost_model *c, uint32_t chunk, uint32_t ctx) {
  double k = c->model->dsa_topk, dense = chunk_work(chunk, ctx);
  if (!k || dense <= 0) return 1.0;
  return dsa_work(chunk, ctx, k) / dense;
}

static double index_ns(const cost_model *c, double pairs, double keys_read) {
  const model_cfg *m = c->model;
  const engine_cfg *e = c->engine;
  double peak = c->gpu->flops[DT_FP8] > 0 ? c->gpu->flops[DT_FP8] : c->gpu->flops[c->deploy->act_dtype];
  double tc = ns_of(2.0 * m->dsa_heads * m->dsa_head_dim * pairs, peak * e->attn_prefill_eff);
  double bytes = keys_read * cfg_model_dsa_cache_bytes(m) + pairs * 4.0 * 2.0; /* the scores, out and back in */
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff), floor = 2.0 * c->kernel_floor_ns;
  double t = tc > tm ? tc : tm;
  return t > floor ? t : floor;
}

double cost__dsa_index_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total) {
  if (!c->model->dsa_topk || !batch) return 0;
  return index_ns(c, (double)ctx_total, (double)ctx_total);
}

double cost__dsa_index_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx) {
  if (!c->model->dsa_topk || !chunk) return 0;
  return index_ns(c, chunk_work(chunk, ctx), (double)ctx + chunk);
}
