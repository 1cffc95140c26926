/* cost.c: the cost model: the time of one engine step from its batch_desc.
 *
 * Everything here is per GPU of a TP group of size t (all GPUs of the group do
 * the same work in parallel). Times are double ns; the caller rounds.
 *
 * Per layer, with qh_g = q_heads / t and kvh_g = max(1, kv_heads / t) (vLLM
 * replicates KV heads when t > kv_heads), I_g = ceil(I / t):
 *   GEMMs, M = T:  QKV  N = (qh_g + 2 kvh_g) hd, K = H
 *                  O    N = H,                  K = qh_g hd
 *                  gate+up N = 2 I_g,           K = H
 *                  down N = H,                  K = I_g
 *   Once per step: LM head N = ceil(round_up(V, 64) / t), K = H, M = num_sample,
 *   always in the activation dtype (vLLM does not quantize it).
 *
 * GEMM roofline (SRC_ROOFLINE):
 *   t_c = 2 M N K / (peak x gemm_compute_eff x wo_factor)
 *   t_m = (N K wbytes + M K in_bytes + M N act_bytes [+ N act_bytes bias])
 *         / (HBM x gemm_memory_eff)
 *   t   = (t_c^p + t_m^p)^(1/p), p = gemm_blend (p >= SHARP_BLEND: max)
 *   The op's time is attributed to BOUND_COMPUTE when t_c >= t_m, else to
 *   BOUND_MEMORY (the roofline of THIS GPU at this shape decides, whatever
 *   source served the time).
 * Compute paths by weight dtype (deploy->weight_dtype):
 *   bf16/fp16   peak = flops[act], weights dtype_bytes(w), inputs act bytes
 *   fp8, int8   W8A8 when the GPU has native tensor cores for it (flops[w] > 0):
 *               peak = flops[w], inputs quantized to 1 byte per element (the
 *               per-token quantization is charged to ELEMENTWISE, see below);
 *               otherwise weight-only (like int4 below, 1 byte per weight)
 *   int4        weight-only: peak = flops[act] x WO_COMPUTE_FACTOR, weights
 *               0.5 + 2/128 bytes (group-128 16-bit scales)
 *   WO_COMPUTE_FACTOR = 0.8: Marlin-style dequantizing kernels reach about
 *   80% of the bf16 tensor-core rate at large M (dequantization in the main
 *   loop); at small M they stream weights at full bandwidth, so the memory
 *   side keeps gemm_memory_eff.
 *
 * Attention, per layer (p-norm blend and bound attribution as for GEMMs):
 *   decode (batch b, sum of contexts C, kv_b = KV dtype bytes):
 *     t_m = (C x 2 x kvh_g x hd x kv_b + b x 2 x qh_g x hd x act_b) / (HBM x attn_decode_eff)
 *     t_c = 4 x qh_g x hd x C / (flops[act] x attn_prefill_eff)
 *   prefill chunk c after ctx cached tokens:
 *     t_c = 4 x qh_g x hd x c x (ctx + (c + 1) / 2) / (flops[act] x attn_prefill_eff)
 *     t_m = ((ctx + c) x 2 x kvh_g x hd x kv_b + c x 2 x qh_g x hd x act_b)
 *           / (HBM x attn_decode_eff)
 *   With a profile: prof_attn_decode_ns(batch, kv_len = round(C / b)) and
 *   prof_attn_prefill_ns(chunk, ctx); a scaled profile is scaled by the HBM
 *   ratio (decode) or the flops[act] ratio (prefill).
 *
 * All-reduce (BOUND_COMM), 2 per layer when t > 1, one call of S = T x H x
 * act_b bytes. Engines pick the algorithm by message size (vLLM's custom
 * all-reduce: one-shot for small messages, two-shot above; TensorRT-LLM's
 * AUTO strategy likewise; NCCL ring for large ones), so the cost is the
 * cheaper of the two families, with bw = link_Bps x allreduce_bw_eff,
 * sw = allreduce_latency_ns (engine: software cost of a call) and
 * hop = link_latency_ns (GPU: one synchronization with a peer over the
 * fabric; 0 if the config has none):
 *   one-shot: every GPU reads its t-1 peers' buffers and reduces locally:
 *             sw + (t-1) hop + (t-1) S / bw
 *   ring / two-shot (reduce-scatter + all-gather, bandwidth-optimal):
 *             sw + 2 (t-1) hop + 2 (t-1)/t S / bw
 *   cost = min(one-shot, ring). Small messages (decode) are latency-bound
 *   and grow with t through the per-peer handshakes; mid-size ones (a decode
 *   batch of 64-256 tokens: 1-4 MB) pay one-shot's t-1 copies until ring
 *   wins; prefill-size messages run at the ring's bus bandwidth.
 * PCIe GPUs use their own link_Bps and latency through the same formula.
 *
 * Elementwise (BOUND_MEMORY), bytes per token per layer, / (HBM x elementwise_eff):
 *   act_b x (8 H             two fused residual-add + RMSNorm: read x, read
 *                            residual, write residual, write normed (4 H each)
 *            + 3 I_g         SiLU(gate) x up: read 2 I_g, write I_g
 *            + 2 (qh_g + kvh_g) hd   RoPE on q and k, read + write
 *            + 2 kvh_g hd)   KV-cache write: read new k, v
 *   + 2 kvh_g hd kv_b        ... and write them into the paged cache
 *   + (act_b + 1) qh_g hd    W8A8 only: quantize the attention output for
 *                            the O GEMM (the inputs of QKV, gate+up and down are
 *                            quantized inside the RMSNorm and SiLU kernels by
 *                            vLLM's fusion passes, so they add no pass)
 *   plus once per step 4 H act_b per token (embedding gather, final norm).
 *
 * Once per step:
 *   LM head GEMM (M = num_sample) + sampling: SAMPLER_PASSES passes over
 *   num_sample x V fp32 logits (vLLM gathers the full vocabulary), memory-bound.
 *   The logits gather across TP is not modelled (small next to the LM head).
 *   CPU: step_overhead_ns + per_seq_overhead_ns x num_seqs. With
 *   engine->async_scheduling the CPU work of step k+1 overlaps the GPU work of
 *   step k: the step lasts max(gpu, cpu) and OP_CPU_OVERHEAD gets only the
 *   part not hidden, max(0, cpu - gpu). Without it, the step is gpu + cpu.
 *   Launch: launch_overhead_ns_per_layer x layers, added to the GPU time
 *   (kernels wait to be issued), unless the batch replays a CUDA graph: a
 *   decode-only batch (num_prefill == 0) of 1..cuda_graph_max_batch sequences.
 *   A graphed batch runs the T-dependent part (GEMMs, all-reduces,
 *   elementwise) at T padded to cost_graph_pad(T); attention and the LM head
 *   see the real sequences (vLLM computes logits outside the graph).
 *
 * Memo: memo[T] holds the T-dependent part of a step for all layers (the four
 * layer GEMMs, both all-reduces, elementwise and the per-step passes over T),
 * filled lazily, for T < memo_len = max(max_num_batched_tokens, max_num_seqs,
 * 512) + 1. Larger T is computed directly (same numbers, not stored). Profile
 * availability depends on the shape only, so the GEMM sources are stored per
 * memo entry (cost_memo.src) and counted on every step.
 * Invariant: op_ns and bound_ns of a step_cost each sum to total_ns (up to
 * rounding of double additions). */
#include "hw/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WO_COMPUTE_FACTOR 0.8 /* weight-only (dequantizing) GEMMs vs the activation-dtype peak */
#define INT4_GROUP 128.0      /* weights per 16-bit scale */
#define SHARP_BLEND 64.0      /* gemm_blend at or above this: the sharp max(t_c, t_m) */
#define SAMPLER_PASSES 3.0    /* fp32 passes over the logits: cast/temperature, softmax, sample */
#define VOCAB_PAD 64u         /* vLLM pads the vocabulary to a multiple of 64 before sharding */
#define MEMO_MIN 512u

/* ---- shapes ----------------------------------------------------------------- */

static uint32_t tp_of(const cost_model *c) { return c->deploy->tp ? c->deploy->tp : 1; }
static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t qh_g(const cost_model *c) { return div_up(c->model->q_heads, tp_of(c)); }
static uint32_t kvh_g(const cost_model *c) {
  uint32_t k = c->model->kv_heads / tp_of(c);
  return k ? k : 1;
}
static uint32_t inter_g(const cost_model *c) { return div_up(c->model->intermediate, tp_of(c)); }
static uint32_t vocab_g(const cost_model *c) {
  uint32_t v = div_up(c->model->vocab, VOCAB_PAD) * VOCAB_PAD;
  return div_up(v, tp_of(c));
}
static double act_b(const cost_model *c) { return dtype_bytes(c->deploy->act_dtype); }
static double kv_b(const cost_model *c) { return dtype_bytes(c->deploy->kv_dtype); }

static bool is_gemm(cost_op op) { return op <= OP_LM_HEAD; }

static void gemm_shape(const cost_model *c, cost_op op, uint32_t *N, uint32_t *K) {
  const model_cfg *m = c->model;
  switch (op) {
  case OP_GEMM_QKV: *N = (qh_g(c) + 2 * kvh_g(c)) * m->head_dim, *K = m->hidden; break;
  case OP_GEMM_O: *N = m->hidden, *K = qh_g(c) * m->head_dim; break;
  case OP_GEMM_GATEUP: *N = 2 * inter_g(c), *K = m->hidden; break;
  case OP_GEMM_DOWN: *N = m->hidden, *K = inter_g(c); break;
  case OP_LM_HEAD: *N = vocab_g(c), *K = m->hidden; break;
  default: SIM_ASSERT(!"not a GEMM op");
  }
}

/* How a GEMM computes on GPU g: dtypes (profile keys), peak FLOP/s, bytes. */
typedef struct gemm_path {
  sim_dtype wdt, adt; /* weight dtype, dtype the activations enter the GEMM in */
  double peak;        /* FLOP/s before efficiency, incl. WO_COMPUTE_FACTOR */
  double w_bytes;     /* per weight, incl. INT4 scales */
  double in_bytes;    /* per input activation element */
} gemm_path;

static gemm_path path_for(const cost_model *c, const gpu_cfg *g, cost_op op) {
  sim_dtype act = c->deploy->act_dtype, w = c->deploy->weight_dtype;
  gemm_path p = {act, act, g->flops[act], dtype_bytes(act), dtype_bytes(act)};
  if (op == OP_LM_HEAD) return p;
  p.wdt = w;
  switch (w) {
  case DT_FP8:
  case DT_INT8:
    p.w_bytes = 1.0;
    if (g->flops[w] > 0) { /* W8A8 on native tensor cores */
      p.adt = w;
      p.peak = g->flops[w];
      p.in_bytes = 1.0;
    } else {
      p.peak = g->flops[act] * WO_COMPUTE_FACTOR;
    }
    break;
  case DT_INT4:
    p.w_bytes = 0.5 + 2.0 / INT4_GROUP;
    p.peak = g->flops[act] * WO_COMPUTE_FACTOR;
    break;
  default: /* bf16 / fp16 / fp32: unquantized */
    p.w_bytes = dtype_bytes(w);
    break;
  }
  return p;
}

static bool w8a8(const cost_model *c) {
  sim_dtype w = c->deploy->weight_dtype;
  return (w == DT_FP8 || w == DT_INT8) && c->gpu->flops[w] > 0;
}

/* ---- roofline helpers --------------------------------------------------------- */

/* (t_c^p + t_m^p)^(1/p), normalised by the larger term so large p cannot overflow. */
static double blend(const cost_model *c, double tc, double tm) {
  double hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc, p = c->engine->gemm_blend;
  if (hi <= 0) return 0;
  if (p >= SHARP_BLEND) return hi;
  double r = lo / hi;
  /* integer p without pow(): this runs several times per simulated step */
  if (p == 2.0) return hi * sqrt(1.0 + r * r);
  if (p == 3.0) return hi * cbrt(1.0 + r * r * r);
  if (p == 4.0) return hi * sqrt(sqrt(1.0 + (r * r) * (r * r)));
  return hi * pow(1.0 + pow(r, p), 1.0 / p);
}

static double ns_of(double work, double rate) { return work / rate * 1e9; }

/* One GEMM of one layer (or the LM head). Never touches src_count. */
static double gemm_eval(const cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  SIM_ASSERT(is_gemm(op));
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  if (M == 0) return 0;
  uint32_t N, K;
  gemm_shape(c, op, &N, &K);
  const engine_cfg *e = c->engine;
  gemm_path p = path_for(c, c->gpu, op);
  double m = M, n = N, k = K;
  double bytes = n * k * p.w_bytes + m * k * p.in_bytes + m * n * act_b(c);
  if (op == OP_GEMM_QKV && c->model->qkv_bias) bytes += n * act_b(c);
  double tc = ns_of(2.0 * m * n * k, p.peak * e->gemm_compute_eff);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->gemm_memory_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  double ns;
  if (c->profile && prof_gemm_ns(c->profile, p.wdt, p.adt, M, N, K, &ns)) {
    *src = SRC_PROFILE;
    return ns;
  }
  if (c->scaled_profile && c->scaled_gpu && prof_gemm_ns(c->scaled_profile, p.wdt, p.adt, M, N, K, &ns)) {
    gemm_path o = path_for(c, c->scaled_gpu, op);
    double ratio = *bound == BOUND_COMPUTE ? o.peak / p.peak : c->scaled_gpu->hbm_Bps / c->gpu->hbm_Bps;
    if (isfinite(ratio) && ratio > 0) {
      *src = SRC_PROFILE_SCALED;
      return ns * ratio;
    }
  }
  return blend(c, tc, tm);
}

static double attn_decode_eval(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src,
                               cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  if (batch == 0) return 0;
  const model_cfg *m = c->model;
  const engine_cfg *e = c->engine;
  double hd = m->head_dim, C = (double)ctx_total;
  double bytes = C * 2.0 * kvh_g(c) * hd * kv_b(c) + (double)batch * 2.0 * qh_g(c) * hd * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  double tc = ns_of(4.0 * qh_g(c) * hd * C, c->gpu->flops[c->deploy->act_dtype] * e->attn_prefill_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  uint64_t len64 = (ctx_total + batch / 2) / batch;
  uint32_t kv_len = len64 < 1 ? 1 : len64 > UINT32_MAX ? UINT32_MAX : (uint32_t)len64;
  double ns;
  if (c->profile &&
      prof_attn_decode_ns(c->profile, c->deploy->kv_dtype, batch, kv_len, qh_g(c), kvh_g(c), m->head_dim, &ns)) {
    *src = SRC_PROFILE;
    return ns;
  }
  if (c->scaled_profile && c->scaled_gpu &&
      prof_attn_decode_ns(c->scaled_profile, c->deploy->kv_dtype, batch, kv_len, qh_g(c), kvh_g(c), m->head_dim,
                          &ns)) {
    double ratio = c->scaled_gpu->hbm_Bps / c->gpu->hbm_Bps;
    if (isfinite(ratio) && ratio > 0) {
      *src = SRC_PROFILE_SCALED;
      return ns * ratio;
    }
  }
  return blend(c, tc, tm);
}

static double attn_prefill_eval(const cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src,
                                cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_COMPUTE;
  if (chunk == 0) return 0;
  const model_cfg *m = c->model;
  const engine_cfg *e = c->engine;
  sim_dtype act = c->deploy->act_dtype;
  double hd = m->head_dim, ch = chunk, cx = ctx;
  double flops = 4.0 * qh_g(c) * hd * ch * (cx + (ch + 1.0) / 2.0);
  double tc = ns_of(flops, c->gpu->flops[act] * e->attn_prefill_eff);
  double bytes = (cx + ch) * 2.0 * kvh_g(c) * hd * kv_b(c) + ch * 2.0 * qh_g(c) * hd * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  double ns;
  if (c->profile && prof_attn_prefill_ns(c->profile, chunk, ctx, qh_g(c), kvh_g(c), m->head_dim, &ns)) {
    *src = SRC_PROFILE;
    return ns;
  }
  if (c->scaled_profile && c->scaled_gpu &&
      prof_attn_prefill_ns(c->scaled_profile, chunk, ctx, qh_g(c), kvh_g(c), m->head_dim, &ns)) {
    double ratio = c->scaled_gpu->flops[act] / c->gpu->flops[act];
    if (isfinite(ratio) && ratio > 0) {
      *src = SRC_PROFILE_SCALED;
      return ns * ratio;
    }
  }
  return blend(c, tc, tm);
}

/* Elementwise bytes per token: one layer, and the once-per-step part. */
static double elem_layer_bytes(const cost_model *c) {
  const model_cfg *m = c->model;
  double ab = act_b(c), H = m->hidden, I = inter_g(c), hd = m->head_dim, q = qh_g(c), kv = kvh_g(c);
  double b = ab * (8.0 * H + 3.0 * I + 2.0 * (q + kv) * hd + 2.0 * kv * hd) + 2.0 * kv * hd * kv_b(c);
  if (w8a8(c)) b += (ab + 1.0) * q * hd;
  return b;
}

static double elementwise_ns(const cost_model *c, uint32_t T) {
  double per_tok = elem_layer_bytes(c) * c->model->layers + 4.0 * c->model->hidden * act_b(c);
  return ns_of((double)T * per_tok, c->gpu->hbm_Bps * c->engine->elementwise_eff);
}

/* ---- the T-dependent part ------------------------------------------------------ */

static void tpart_compute(const cost_model *c, uint32_t T, cost_memo *r) {
  memset(r, 0, sizeof *r);
  double L = c->model->layers;
  for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) {
    cost_src s;
    cost_bound b;
    double ns = gemm_eval(c, (cost_op)op, T, &s, &b) * L;
    r->op_ns[op] += ns;
    r->bound_ns[b] += ns;
    r->src[op] = (uint8_t)s;
  }
  double ar = 2.0 * cost_allreduce_ns(c, T) * L;
  r->op_ns[OP_ALLREDUCE] = ar;
  r->bound_ns[BOUND_COMM] += ar;
  double el = T ? elementwise_ns(c, T) : 0;
  r->op_ns[OP_ELEMENTWISE] = el;
  r->bound_ns[BOUND_MEMORY] += el;
  r->src[OP_ALLREDUCE] = r->src[OP_ELEMENTWISE] = SRC_ROOFLINE;
  for (int op = 0; op < OP_COUNT; op++) r->ns += r->op_ns[op];
  r->valid = true;
}

static const cost_memo *tpart(cost_model *c, uint32_t T, cost_memo *scratch) {
  if (T < c->memo_len) {
    cost_memo *mm = &c->memo[T];
    if (!mm->valid) tpart_compute(c, T, mm);
    return mm;
  }
  tpart_compute(c, T, scratch);
  return scratch;
}

/* ---- public ---------------------------------------------------------------------- */

static int bad_eff(sim_err *err, const engine_cfg *e, const char *field, double v) {
  return sim_errf(err, SIM_EINPUT, "engine %s: %s: must be > 0 and <= 1.5 (got %g)", e->name, field, v);
}

static int check_inputs(const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
                        sim_err *err) {
  if (!m->hidden || !m->intermediate || !m->layers || !m->q_heads || !m->kv_heads || !m->head_dim || !m->vocab)
    return sim_errf(err, SIM_EINPUT, "model %s: hidden, intermediate, layers, heads, head_dim and vocab must be > 0",
                    m->name);
  if ((unsigned)d->act_dtype >= DT_COUNT || (unsigned)d->weight_dtype >= DT_COUNT ||
      (unsigned)d->kv_dtype >= DT_COUNT)
    return sim_errf(err, SIM_EINPUT, "deployment: unknown dtype");
  if (!(g->hbm_Bps > 0)) return sim_errf(err, SIM_EINPUT, "gpu %s: hbm_Bps: must be > 0", g->name);
  if (!(g->flops[d->act_dtype] > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: flops: no %s tensor-core peak given", g->name,
                    dtype_name(d->act_dtype));
  if (d->tp > 1 && !(g->link_Bps > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: link_Bps: must be > 0 for tensor parallelism", g->name);
  const struct {
    const char *name;
    double v;
  } effs[] = {{"gemm_compute_eff", e->gemm_compute_eff}, {"gemm_memory_eff", e->gemm_memory_eff},
              {"attn_prefill_eff", e->attn_prefill_eff}, {"attn_decode_eff", e->attn_decode_eff},
              {"elementwise_eff", e->elementwise_eff},   {"allreduce_bw_eff", e->allreduce_bw_eff}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(effs); i++)
    if (!(effs[i].v > 0 && effs[i].v <= 1.5)) return bad_eff(err, e, effs[i].name, effs[i].v);
  if (!(e->gemm_blend >= 1))
    return sim_errf(err, SIM_EINPUT, "engine %s: gemm_blend: must be >= 1 (got %g)", e->name, e->gemm_blend);
  if (e->step_overhead_ns < 0 || e->per_seq_overhead_ns < 0 || e->launch_overhead_ns_per_layer < 0 ||
      e->allreduce_latency_ns < 0)
    return sim_errf(err, SIM_EINPUT, "engine %s: overheads and latencies must be >= 0", e->name);
  return SIM_OK;
}

int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err) {
  memset(c, 0, sizeof *c);
  int rc = check_inputs(m, g, e, d, err);
  if (rc) return rc;
  c->model = m, c->gpu = g, c->engine = e, c->deploy = d;
  uint32_t mnbt = d->max_num_batched_tokens ? d->max_num_batched_tokens : e->max_num_batched_tokens;
  uint32_t mns = d->max_num_seqs ? d->max_num_seqs : e->max_num_seqs;
  size_t n = SIM_MAX(SIM_MAX(mnbt, mns), MEMO_MIN);
  c->memo_len = n + 1;
  c->memo = sim_calloc(c->memo_len, sizeof *c->memo);
  return SIM_OK;
}

void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu) {
  c->profile = own;
  c->scaled_profile = other_gpu ? other : NULL;
  c->scaled_gpu = other ? other_gpu : NULL;
  for (size_t i = 0; i < c->memo_len; i++) c->memo[i].valid = false;
}

void cost_deinit(cost_model *c) {
  free(c->memo);
  memset(c, 0, sizeof *c);
}

static void add(step_cost *out, cost_op op, cost_bound b, double ns) {
  out->op_ns[op] += ns;
  out->bound_ns[b] += ns;
}

/* vLLM's capture list: [1, 2, 4] + range(8, max_capture + 1, 8); its largest size. */
static uint32_t graph_largest(uint32_t max_capture) {
  return max_capture >= 8 ? max_capture / 8 * 8 : max_capture >= 4 ? 4 : max_capture >= 2 ? 2 : max_capture;
}

void cost_step(cost_model *c, const batch_desc *b, step_cost *out) {
  memset(out, 0, sizeof *out);
  const engine_cfg *e = c->engine;
  double L = c->model->layers;
  uint32_t T = b->num_tokens;
  uint32_t cg = e->cuda_graph_max_batch;
  /* graphed only up to the largest captured size (vLLM runs larger decode batches eagerly) */
  bool graphed = cg > 0 && b->num_prefill == 0 && b->num_seqs > 0 && b->num_seqs <= graph_largest(cg);
  uint32_t Tg = graphed ? cost_graph_pad(T, cg) : T;

  if (Tg > 0) {
    cost_memo scratch;
    const cost_memo *tp = tpart(c, Tg, &scratch);
    for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] += tp->op_ns[op];
    for (int k = 0; k < BOUND_COUNT; k++) out->bound_ns[k] += tp->bound_ns[k];
    for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) c->src_count[op][tp->src[op]]++;
    if (tp_of(c) > 1) c->src_count[OP_ALLREDUCE][SRC_ROOFLINE]++;
    c->src_count[OP_ELEMENTWISE][SRC_ROOFLINE]++;
  }
  cost_src s;
  cost_bound bd;
  if (b->num_decode > 0) {
    double ns = attn_decode_eval(c, b->num_decode, b->decode_ctx_tokens, &s, &bd) * L;
    add(out, OP_ATTN_DECODE, bd, ns);
    c->src_count[OP_ATTN_DECODE][s]++;
  }
  for (uint32_t i = 0; i < b->num_prefill; i++) {
    double ns = attn_prefill_eval(c, b->prefills[i].chunk_tokens, b->prefills[i].ctx_tokens, &s, &bd) * L;
    add(out, OP_ATTN_PREFILL, bd, ns);
    c->src_count[OP_ATTN_PREFILL][s]++;
  }
  if (b->num_sample > 0) {
    double ns = gemm_eval(c, OP_LM_HEAD, b->num_sample, &s, &bd);
    add(out, OP_LM_HEAD, bd, ns);
    double logits = (double)b->num_sample * c->model->vocab * 4.0 * SAMPLER_PASSES;
    add(out, OP_LM_HEAD, BOUND_MEMORY, ns_of(logits, c->gpu->hbm_Bps * e->elementwise_eff));
    c->src_count[OP_LM_HEAD][s]++;
  }
  if (!graphed && T > 0 && e->launch_overhead_ns_per_layer > 0) {
    add(out, OP_LAUNCH, BOUND_CPU, e->launch_overhead_ns_per_layer * L);
    c->src_count[OP_LAUNCH][SRC_ROOFLINE]++;
  }
  double gpu = 0;
  for (int op = 0; op < OP_COUNT; op++) gpu += out->op_ns[op];
  double cpu = e->step_overhead_ns + e->per_seq_overhead_ns * b->num_seqs;
  double cpu_shown = c->deploy->async_scheduling > 0 ? (cpu > gpu ? cpu - gpu : 0) : cpu;
  if (cpu > 0) c->src_count[OP_CPU_OVERHEAD][SRC_ROOFLINE]++;
  add(out, OP_CPU_OVERHEAD, BOUND_CPU, cpu_shown);
  out->total_ns = gpu + cpu_shown;
  out->gpu_ns = gpu;
  out->cpu_ns = cpu;
}

double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  cost_src s;
  cost_bound b;
  double ns = gemm_eval(c, op, M, &s, &b);
  if (src) *src = s;
  if (bound) *bound = b;
  return ns;
}

double cost_allreduce_ns(const cost_model *c, uint32_t tokens) {
  uint32_t t = tp_of(c);
  if (t <= 1 || tokens == 0) return 0;
  const engine_cfg *e = c->engine;
  double bytes = (double)tokens * c->model->hidden * act_b(c), peers = t - 1.0;
  double bw = c->gpu->link_Bps * e->allreduce_bw_eff, hop = c->gpu->link_latency_ns;
  double one_shot = e->allreduce_latency_ns + peers * hop + ns_of(peers * bytes, bw);
  double ring = e->allreduce_latency_ns + 2.0 * peers * hop + ns_of(2.0 * peers / t * bytes, bw);
  return one_shot < ring ? one_shot : ring;
}

double cost_attn_decode_ns(cost_model *c, uint32_t batch, uint64_t ctx_tokens_total, cost_src *src) {
  cost_src s;
  cost_bound b;
  double ns = attn_decode_eval(c, batch, ctx_tokens_total, &s, &b);
  if (src) *src = s;
  return ns;
}

double cost_attn_prefill_ns(cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src) {
  cost_src s;
  cost_bound b;
  double ns = attn_prefill_eval(c, chunk, ctx, &s, &b);
  if (src) *src = s;
  return ns;
}

double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out) {
  batch_desc b = {.num_tokens = batch,
                  .num_seqs = batch,
                  .num_decode = batch,
                  .decode_ctx_tokens = (uint64_t)batch * ctx,
                  .num_sample = batch};
  step_cost tmp;
  step_cost *o = out ? out : &tmp;
  cost_step(c, &b, o);
  return o->total_ns;
}

double cost_prefill_step_ns(cost_model *c, uint32_t tokens, step_cost *out) {
  if (tokens < 2) return cost_decode_step_ns(c, 1, 1, out); /* one token is a decode */
  prefill_chunk ch = {.chunk_tokens = tokens, .ctx_tokens = 0};
  batch_desc b = {.num_tokens = tokens, .num_seqs = 1, .num_sample = 1, .num_prefill = 1, .prefills = &ch};
  step_cost tmp;
  step_cost *o = out ? out : &tmp;
  cost_step(c, &b, o);
  return o->total_ns;
}

const char *cost_op_name(cost_op op) {
  static const char *const n[OP_COUNT] = {"gemm_qkv",     "gemm_o",      "gemm_gate_up", "gemm_down",
                                          "lm_head",      "attn_prefill", "attn_decode", "allreduce",
                                          "elementwise",  "cpu_overhead", "launch"};
  return (unsigned)op < OP_COUNT ? n[op] : "?";
}

const char *cost_src_name(cost_src s) {
  static const char *const n[SRC_COUNT] = {"profile", "profile_scaled", "roofline"};
  return (unsigned)s < SRC_COUNT ? n[s] : "?";
}

const char *cost_bound_name(cost_bound b) {
  static const char *const n[BOUND_COUNT] = {"compute", "memory", "comm", "cpu"};
  return (unsigned)b < BOUND_COUNT ? n[b] : "?";
}

uint32_t cost_graph_pad(uint32_t n, uint32_t max_capture) {
  if (n == 0) return 0;
  if (n > graph_largest(max_capture)) return n;
  if (n <= 2) return n;
  if (n <= 4) return 4;
  return div_up(n, 8) * 8;
}
