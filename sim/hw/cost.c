/* cost.c: the cost model: the time of one engine step from its batch_desc
 * (see cost.h for the terms and their sources).
 *
 * Everything here is per GPU of a TP group (model/shard.h). Times are double
 * ns; the caller rounds.
 *
 * How a GEMM computes on GPU g (deploy->weight_dtype), the key of its table
 * and the bytes and peak of its roofline:
 *   bf16/fp16   the activation dtype's table and peak, weights dtype_bytes(w)
 *   fp8, int8   W8A8 when the GPU has native tensor cores for it (flops[w] > 0):
 *               the fp8/fp8 or int8/int8 table (the engine's scaled GEMM with
 *               the per-step quantization of its input, as measured), peak
 *               flops[w], 1-byte inputs; otherwise weight-only (as int4)
 *   int4        weight-only: the int4/bf16 table, roofline peak
 *               flops[act] x WO_COMPUTE_FACTOR, 0.5 + 2/128 bytes per weight
 *   The LM head always computes in the activation dtype.
 *   WO_COMPUTE_FACTOR = 0.8: dequantizing kernels (Marlin) reach about 80% of
 *   the 16-bit tensor-core rate at large M; at small M they stream weights at
 *   full bandwidth (roofline fallback only).
 *
 * Roofline fallback (no profile): t = max(t_c, t_m), t_c = flops / (peak x
 * gemm_compute_eff), t_m = bytes / (HBM x gemm_memory_eff) for GEMMs;
 * attention likewise with attn_prefill_eff / attn_decode_eff. The bound of an
 * op is the larger of the two on THIS GPU's datasheet, whatever served it.
 *
 * Scaled profile (another GPU type's): the time is scaled by the datasheet
 * ratio of the bound resource (peak FLOP/s or HBM bandwidth).
 *
 * All-reduce, bytes S = T x H x act_b per call:
 *   profile: the engine's kernel (PROF_AR_CUSTOM_GRAPH when the step replays
 *   graphs, PROF_AR_CUSTOM_EAGER otherwise), else NCCL's table; otherwise the
 *   formula: the cheaper of one-shot (sw + (t-1) hop + (t-1) S / bw) and ring
 *   (sw + 2 (t-1) hop + 2 (t-1)/t S / bw), bw = link_Bps x allreduce_bw_eff,
 *   sw = allreduce_latency_ns, hop = link_latency_ns.
 *   Which one (deploy->allreduce): AR_TABLE, AR_LINK, or AR_AUTO: the table
 *   unless, for a 16 MiB message at the node-local GPU count, it takes more
 *   than 3x the link formula's time (bus bandwidth below a third of the
 *   link's: GPUs without peer-to-peer access, i.e. another machine's
 *   topology); decided once per profile attach (cost_allreduce_check).
 *
 * Elementwise, per layer: n = elementwise_kernels_per_layer kernels moving
 *   act_b x T x (8 H        two residual-add + RMSNorm: read x, read
 *                           residual, write residual, write normed
 *              + 3 I_g      SiLU(gate) x up: read 2 I_g, write I_g
 *              + 2 (qh_g + kvh_g) hd)  RoPE on q and k, read + write
 *   bytes; time = max(n x kernel_floor, bytes / (HBM x elementwise_eff)).
 *   (The KV-cache write belongs to the measured attention call, the FP8
 *   quantization of a GEMM input to the measured W8A8 GEMM.) Once per step:
 *   embedding gather and final norm, 2 kernels over 4 H act_b bytes a token.
 * Sampler: SAMPLER_PASSES passes over num_sample x V fp32 logits (vLLM
 *   gathers the full vocabulary), at least one kernel floor each.
 *
 * Kernel floor: the profile's measured time of a 1 x 128 x 128 bf16 GEMM (the
 * smallest kernel of a kernel-db grid, replayed in a CUDA graph); else the
 * engine file's kernel_floor_ns. Attention floor: the profile's 2-token
 * single-sequence decode call; else the kernel floor.
 *
 * Invariant: op_ns and bound_ns of a step_cost each sum to total_ns (up to
 * rounding of double additions). */
#include "hw/cost.h"
#include "hw/cost_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/engver.h"

#define WO_COMPUTE_FACTOR 0.8 /* weight-only (dequantizing) GEMMs vs the activation-dtype peak */
#define SAMPLER_PASSES 3.0    /* fp32 passes over the logits: cast/temperature, softmax, sample */
#define MEMO_MIN 512u

/* ---- shapes and dtypes ---------------------------------------------------------- */


static bool is_gemm(cost_op op) { return op <= OP_LM_HEAD; }

static shard_gemm shard_of(cost_op op) {
  switch (op) {
    case OP_GEMM_QKV: return SG_QKV;
    case OP_GEMM_O: return SG_O;
    case OP_GEMM_GATEUP: return SG_GATE_UP;
    case OP_GEMM_DOWN: return SG_DOWN;
    case OP_LM_HEAD: return SG_LM_HEAD;
    default: SIM_ASSERT(!"not a GEMM op");
  }
  return SG_QKV;
}

typedef struct gemm_path {
  sim_dtype wdt, adt; /* weight dtype, dtype the activations enter the GEMM in (the table key) */
  double peak;        /* FLOP/s before efficiency, incl. WO_COMPUTE_FACTOR */
  double w_bytes;     /* per weight, incl. INT4 scales */
  double in_bytes;    /* per input activation element */
} gemm_path;

static gemm_path path_for(const cost_model *c, const gpu_cfg *g, cost_op op) {
  sim_dtype act = c->deploy->act_dtype, w = c->deploy->weight_dtype;
  gemm_path p = {act, act, g->flops[act], dtype_bytes(act), dtype_bytes(act)};
  if (op == OP_LM_HEAD) return p;
  if ((op == OP_GEMM_QKV || op == OP_GEMM_O) && c->model->attn_unquantized) return p; /* the checkpoint keeps it */
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
      p.w_bytes = dtype_weight_bytes(w);
      p.peak = g->flops[act] * WO_COMPUTE_FACTOR;
      break;
    case DT_FP4:
      p.w_bytes = dtype_weight_bytes(w);
      if (g->flops[w] > 0) { /* W4A4 on FP4 tensor cores (Blackwell): activations quantized to NVFP4 on the fly */
        p.adt = w;
        p.peak = g->flops[w];
        p.in_bytes = dtype_weight_bytes(w);
      } else { /* elsewhere weight-only (vLLM's FP4 Marlin): dequantized into the activation-dtype MMAs */
        p.peak = g->flops[act] * WO_COMPUTE_FACTOR;
      }
      break;
    default: p.w_bytes = dtype_bytes(w); break;
  }
  return p;
}


/* Scales a time measured on the other GPU to this one by the bound resource. */
bool cost__scale_other(const cost_model *c, cost_bound b, double peak_here, double peak_there, double *ns) {
  double ratio = b == BOUND_COMPUTE ? peak_there / peak_here : c->scaled_gpu->hbm_Bps / c->gpu->hbm_Bps;
  if (!(isfinite(ratio) && ratio > 0)) return false;
  *ns *= ratio;
  return true;
}

/* ---- GEMMs ---------------------------------------------------------------------- */

/* A GEMM of M x N x K on the dtype path of `op` (the LM head's: activation
 * dtype; the others: the weight dtype's). */
static double gemm_shape_eval(const cost_model *c, cost_op op, uint32_t M, uint32_t N, uint32_t K, bool bias,
                              cost_src *src, cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  if (M == 0 || N == 0 || K == 0) return 0;
  const engine_cfg *e = c->engine;
  gemm_path p = path_for(c, c->gpu, op);
  double m = M, n = N, k = K;
  double bytes = n * k * p.w_bytes + m * k * p.in_bytes + m * n * act_b(c);
  if (bias) bytes += n * act_b(c);
  double tc = ns_of(2.0 * m * n * k, p.peak * e->gemm_compute_eff);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->gemm_memory_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  double ns;
  /* a block-scaled FP8 checkpoint runs its quantized linears as block-FP8 GEMMs (a per-token-group
   * quantization kernel, then the block-scaled GEMM): their own measured grid when the profile has one */
  bool block = c->model->fp8_block && p.wdt == DT_FP8 && p.adt == DT_FP8 && op != OP_LM_HEAD;
  if (block && c->block_own && prof_gemm_block_ns(c->profile, M, N, K, &ns)) {
    *src = SRC_PROFILE;
    return ns;
  }
  /* a per-tensor FP8 table (FP8 weights read one, W8A8 or its fallback) timed its collector's input quantization */
  bool fp8 = p.wdt == DT_FP8; /* (a table the correction does not touch is read as measured, unclamped) */
  if (c->profile && prof_gemm_ns(c->profile, p.wdt, p.adt, M, N, K, &ns)) {
    *src = SRC_PROFILE;
    return fp8 && c->fp8_requant_ns[0] > 0 ? fmax(ns - c->fp8_requant_ns[0], c->kernel_floor_ns) : ns;
  }
  bool scaled_block = block && c->block_scaled;
  if (c->scaled_profile && ((scaled_block && prof_gemm_block_ns(c->scaled_profile, M, N, K, &ns)) ||
                            prof_gemm_ns(c->scaled_profile, p.wdt, p.adt, M, N, K, &ns))) {
    gemm_path o = path_for(c, c->scaled_gpu, op);
    if (fp8 && !scaled_block && c->fp8_requant_ns[1] > 0) ns = fmax(ns - c->fp8_requant_ns[1], c->kernel_floor_ns);
    if (cost__scale_other(c, *bound, p.peak, o.peak, &ns)) {
      *src = SRC_PROFILE_SCALED;
      return ns;
    }
  }
  return tc > tm ? tc : tm;
}

static double gemm_eval(const cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  SIM_ASSERT(is_gemm(op));
  shard_gemm g = shard_of(op);
  return gemm_shape_eval(c, op, M, c->shard.n[g], c->shard.k[g], op == OP_GEMM_QKV && c->model->qkv_bias, src,
                         bound);
}

/* ---- mixture of experts ---------------------------------------------------------- */

/* One MoE block of T tokens on one GPU: the fused routed experts (T x top-k
 * token-expert pairs over `experts` experts of I_e / tp each), the router
 * GEMM (T x H x experts, activation dtype) and the shared experts (a dense
 * MLP of I_s / tp). Routed experts: the profile's measured fused-MoE table
 * when it has the shape, else the roofline of the experts the step touches:
 * with balanced routing a step of T tokens reaches E (1 - (1 - k/E)^T)
 * distinct experts, whose weights are read once, and computes 2 x 3 H I_e
 * per token-expert pair. With dp attention data-parallel ranks the routed
 * experts span dp x tp GPUs and see every rank's tokens (Tg: this rank's T
 * plus the tokens of the other ranks' current steps, batch_desc
 * moe_peer_tokens); the router and the shared experts run on the rank's own
 * T. */
/* One fused-MoE call from a table: exact (extrap false), or (extrap true,
 * no expert parallelism) a TP the table lacks from the largest halving m =
 * tp / 2^k it has, following the measured trend: t(tp) = t(m) x r^k, r =
 * t(m) / t(m/2) (a constant ratio per doubling, clamped to [1/2, 1]: more
 * GPUs never slow the call, nor speed it beyond halving its work); with m/2
 * not measured, r = 1/2. The kernel database measures vLLM's fp8_block
 * triton MoE at TP 1, 2 and 4 only, so TP8 and TP16 (TP8 x DP2) come from
 * this rule rather than from another kernel's table (vLLM 0.24.0's per-tensor
 * FP8 MoE, measured 5x slower than the block kernel at 16 tokens). */
static bool moe_lookup(const prof *p, const char *dt, uint32_t Tg, uint32_t Hm, uint32_t Ie, const model_shard *s,
                       const char *dist, bool extrap, double *ns) {
  uint32_t mtp = s->moe_tp;
  if (!extrap) return prof_moe_ns(p, dt, Tg, Hm, Ie, s->topk, s->experts, mtp, s->ep, dist, ns);
  if (s->ep > 1) return false;
  for (uint32_t m = mtp / 2, k = 1; m >= 1 && m * 2 == mtp >> (k - 1); m /= 2, k++) {
    double tm, th;
    if (!prof_moe_ns(p, dt, Tg, Hm, Ie, s->topk, s->experts, m, 1, dist, &tm)) continue;
    double r = 0.5;
    if (m % 2 == 0 && prof_moe_ns(p, dt, Tg, Hm, Ie, s->topk, s->experts, m / 2, 1, dist, &th) && th > 0)
      r = fmin(1.0, fmax(0.5, tm / th));
    *ns = tm * pow(r, k);
    return true;
  }
  return false;
}

/* The kernel database times fused-MoE calls with AIConfigurator's "balanced"
 * router (collector/helper.py balanced_logits: token t takes experts t + j x
 * ceil(E/k), j < k), which spreads T tokens over min(E, T k) distinct experts,
 * the most any routing can reach. Real tokens choose their experts
 * independently, reaching E (1 - (1 - k/E)^T) of them on average (the same
 * expectation the roofline term below uses): fewer at small T, where the call
 * is bound by reading the weights of the experts it reaches. So a balanced
 * table's time is lowered by the weight reads of the experts balanced routing
 * reaches and independent routing does not, each priced at the table's own
 * cost per expert: the slope of its time from 1 token (k experts) to ceil(E/k)
 * tokens (all of them). Never below the table's time at the token count whose
 * balanced spread reaches as many experts (the same reads, fewer token-expert
 * pairs). The correction vanishes as T grows (both reach every expert). With
 * expert parallelism the counts are one rank's share. `ns` is the table's
 * time at Tg tokens; returns the corrected time. */
static double moe_independent_routing(const prof *p, const char *dt, uint32_t Tg, uint32_t Hm, uint32_t Ie,
                                      const model_shard *s, bool extrap, double ns) {
  double E = s->experts, k = s->topk, ep = s->ep ? s->ep : 1, t = Tg;
  if (k <= 0 || k >= E) return ns;
  double full_T = ceil(E / k), loc = E / ep;
  double cov_bal = fmin(E, t * k) / ep, cov_ind = loc * (1.0 - pow(1.0 - k / E, t));
  if (cov_bal <= cov_ind + 1e-9) return ns;
  double t1, tE, teq;
  if (!moe_lookup(p, dt, 1, Hm, Ie, s, "balanced", extrap, &t1) ||
      !moe_lookup(p, dt, (uint32_t)full_T, Hm, Ie, s, "balanced", extrap, &tE) || tE <= t1)
    return ns;
  double per_expert = (tE - t1) / (loc - fmin(E, k) / ep); /* one rank's cost per expert reached */
  double out = ns - (cov_bal - cov_ind) * per_expert;
  uint32_t Teq = (uint32_t)ceil(cov_ind * ep / k); /* balanced tokens reaching as many experts */
  if (Teq >= 1 && Teq < Tg && moe_lookup(p, dt, Teq, Hm, Ie, s, "balanced", extrap, &teq) && out < teq) out = teq;
  return out > 0 && out < ns ? out : ns;
}

static double moe_eval(const cost_model *c, uint32_t T, uint32_t Tg, cost_src *src, cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  const model_shard *s = &c->shard;
  if (!T || !s->experts) return 0;
  const engine_cfg *e = c->engine;
  gemm_path p = path_for(c, c->gpu, OP_GEMM_GATEUP);
  /* Tg: tokens entering the routed experts (T, plus the other DP ranks' with attention data parallelism) */
  double E = s->experts, k = s->topk, I = s->expert_inter, H = s->hidden, t = Tg;
  /* with expert parallelism a rank computes its experts/ep whole experts for the pairs routed to them */
  double pairs = t * k / s->ep, hit = s->local_experts * (1.0 - pow(1.0 - k / E, t));
  double bytes = hit * 3.0 * H * I * p.w_bytes + pairs * H * (p.in_bytes + act_b(c)) + pairs * 2.0 * I * act_b(c);
  double tc = ns_of(2.0 * pairs * 3.0 * H * I, p.peak * e->gemm_compute_eff);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->gemm_memory_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  double routed = tc > tm ? tc : tm, ns;
  /* the kernel-db dtype names of the weights, the checkpoint's first */
  const char *dts[2] = {NULL, NULL};
  switch (c->deploy->weight_dtype) {
    case DT_BF16:
    case DT_FP16: dts[0] = "bfloat16"; break;
    case DT_FP8:
      dts[0] = c->model->fp8_block ? "fp8_block" : "fp8";
      dts[1] = c->model->fp8_block ? "fp8" : "fp8_block";
      break;
    case DT_INT4:
      dts[0] = c->model->mxfp4 ? "w4a16_mxfp4" : "int4_wo";
      dts[1] = c->model->mxfp4 ? "int4_wo" : NULL;
      break;
    case DT_FP4: /* W4A4 kernels where FP4 tensor cores run them, else a 4-bit weight-only MoE */
      dts[0] = c->gpu->flops[DT_FP4] > 0 ? "nvfp4" : "w4a16_mxfp4";
      dts[1] = c->gpu->flops[DT_FP4] > 0 ? "w4a16_mxfp4" : "int4_wo";
      break;
    default: break;
  }
  const char *dist = moe_routing_name(c->deploy->moe_routing);
  uint32_t Hm = c->model->hidden, Ie = c->model->expert_inter, mtp = s->moe_tp; /* the MoE layer's TP */
  bool found = false;
  /* the checkpoint's kernel first, measured at this TP/EP or extrapolated over TP from its own trend, in this
     version's tables, then the other versions'; only then the other FP8 kernel */
  for (int i = 0; i < 2 && dts[i] && !found; i++)
    for (int extrap = 0; extrap < 2 && !found; extrap++) {
      const prof *hit_p = NULL;
      if (c->profile && moe_lookup(c->profile, dts[i], Tg, Hm, Ie, s, dist, extrap, &ns)) hit_p = c->profile;
      for (int a = 0; a < c->n_moe_alt && !hit_p; a++) /* this GPU, another engine version */
        if (moe_lookup(c->moe_alt[a], dts[i], Tg, Hm, Ie, s, dist, extrap, &ns)) hit_p = c->moe_alt[a];
      if (hit_p) {
        *src = SRC_PROFILE;
        if (c->deploy->moe_routing == MOE_BALANCED) ns = moe_independent_routing(hit_p, dts[i], Tg, Hm, Ie, s, extrap, ns);
        routed = ns, found = true;
      }
    }
  for (int i = 0; i < 2 && dts[i] && !found && c->scaled_profile; i++) {
    if (prof_moe_ns(c->scaled_profile, dts[i], Tg, Hm, Ie, s->topk, s->experts, mtp, s->ep, dist, &ns)) {
      if (c->deploy->moe_routing == MOE_BALANCED)
        ns = moe_independent_routing(c->scaled_profile, dts[i], Tg, Hm, Ie, s, false, ns);
      gemm_path o = path_for(c, c->scaled_gpu, OP_GEMM_GATEUP);
      if (cost__scale_other(c, *bound, p.peak, o.peak, &ns)) {
        *src = SRC_PROFILE_SCALED;
        routed = ns, found = true;
      }
    }
  }
  cost_src gs;
  cost_bound gb;
  double router = gemm_shape_eval(c, OP_LM_HEAD, T, s->experts, s->hidden, false, &gs, &gb);
  double shared = 0;
  if (s->shared_inter) {
    shared = gemm_shape_eval(c, OP_GEMM_GATEUP, T, 2 * s->shared_inter, s->hidden, false, &gs, &gb) +
             gemm_shape_eval(c, OP_GEMM_DOWN, T, s->hidden, s->shared_inter, false, &gs, &gb);
  }
  return routed + router + shared;
}

void cost_graph_sizes_text(const cost_model *c, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "%s", graph_mode_name(c->engine->graph_mode));
  if (k >= n) return;
  if (!c->n_graph_sizes) {
    snprintf(buf + k, n - k, ", no capture sizes (every step eager)");
    return;
  }
  k += (size_t)snprintf(buf + k, n - k, ", %u capture sizes:", c->n_graph_sizes);
  for (uint32_t i = 0; i < c->n_graph_sizes && k < n; i++) {
    if (c->n_graph_sizes > 10 && i == 6) { /* first six, then the last two */
      k += (size_t)snprintf(buf + k, n - k, " ...");
      i = c->n_graph_sizes - 3;
      continue;
    }
    k += (size_t)snprintf(buf + k, n - k, "%s %u", i ? "," : "", c->graph_sizes[i]);
  }
}

/* ---- elementwise ------------------------------------------------------------------ */

static double elem_layer_bytes_per_token(const cost_model *c) {
  const model_shard *s = &c->shard;
  double H = s->hidden, hd = s->head_dim;
  return act_b(c) * (8.0 * H + 3.0 * s->inter + 2.0 * (s->q_heads + s->kv_heads) * hd);
}

/* `kernels` kernels moving `bytes` together. */
static double kernels_ns(const cost_model *c, double kernels, double bytes) {
  double tb = ns_of(bytes, c->gpu->hbm_Bps * c->engine->elementwise_eff), tf = kernels * c->kernel_floor_ns;
  return tb > tf ? tb : tf;
}

/* ---- the T-dependent part ---------------------------------------------------------- */

static void tpart_compute(const cost_model *c, uint32_t T, bool graphed, cost_memo *r) {
  memset(r, 0, sizeof *r);
  double L = c->model->layers, Lm = c->model->moe_layers;
  for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) {
    cost_src s;
    cost_bound b;
    if (c->mla_module && (op == OP_GEMM_QKV || op == OP_GEMM_O)) { /* inside the measured MLA module */
      r->src[op] = SRC_PROFILE;
      continue;
    }
    bool ffn = op == OP_GEMM_GATEUP || op == OP_GEMM_DOWN; /* dense layers only */
    double ns = gemm_eval(c, (cost_op)op, T, &s, &b) * (ffn ? L - Lm : L);
    r->op_ns[op] += ns;
    r->bound_ns[b] += ns;
    r->src[op] = (uint8_t)s;
  }
  if (c->shard.mla && !c->mla_module) { /* q_b and kv_b (decode absorbs kv_b into the query and output: the same
                                             weights and flops) */
    cost_src s;
    cost_bound b, b2;
    const model_shard *sh = &c->shard;
    double qb = gemm_shape_eval(c, OP_GEMM_QKV, T, sh->qb_n, sh->qb_k, false, &s, &b);
    double kvb = gemm_shape_eval(c, OP_GEMM_QKV, T, sh->kvb_n, sh->kvb_k, false, &s, &b2);
    r->op_ns[OP_GEMM_QKV] += (qb + kvb) * L;
    r->bound_ns[b] += qb * L;
    r->bound_ns[b2] += kvb * L;
  }
  if (Lm > 0 && c->shard.dp <= 1) { /* with data parallelism: per step, from every rank's tokens (dp_moe) */
    cost_src s;
    cost_bound b;
    double ns = moe_eval(c, T, T, &s, &b) * Lm;
    r->op_ns[OP_MOE] += ns;
    r->bound_ns[b] += ns;
    r->src[OP_MOE] = (uint8_t)s;
  }
  cost_src ars;
  double ar = 2.0 * cost__allreduce_eval(c, T, graphed, &ars) * L;
  if (c->shard.dp > 1 && Lm > 0) /* the MoE layers' TP all-reduce becomes the DP group's dispatch and combine */
    ar -= cost__allreduce_eval(c, T, graphed, &ars) * Lm;
  r->op_ns[OP_ALLREDUCE] = ar;
  r->bound_ns[BOUND_COMM] += ar;
  r->src[OP_ALLREDUCE] = (uint8_t)ars;
  double el = 0;
  if (T) {
    /* a measured MLA module holds its own RoPE: one kernel fewer outside it */
    double kpl = c->engine->elementwise_kernels_per_layer - (c->mla_module && c->engine->elementwise_kernels_per_layer >= 1);
    el = L * kernels_ns(c, kpl, (double)T * elem_layer_bytes_per_token(c));
    r->once_ns = kernels_ns(c, 2.0, (double)T * 4.0 * c->model->hidden * act_b(c));
    el += r->once_ns;
  }
  r->op_ns[OP_ELEMENTWISE] = el;
  r->bound_ns[BOUND_MEMORY] += el;
  r->src[OP_ELEMENTWISE] = SRC_ROOFLINE;
  for (int op = 0; op < OP_COUNT; op++) r->ns += r->op_ns[op];
  r->valid = true;
}

static const cost_memo *tpart(cost_model *c, uint32_t T, bool graphed, cost_memo *scratch) {
  if (T < c->memo_len) {
    cost_memo *mm = &c->memo[graphed][T];
    if (!mm->valid) tpart_compute(c, T, graphed, mm);
    return mm;
  }
  tpart_compute(c, T, graphed, scratch);
  return scratch;
}

/* ---- setup -------------------------------------------------------------------------- */

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
  uint32_t gpn = d->gpus_per_node ? d->gpus_per_node : 8;
  if (d->pp > CFG_MAX_PP || d->pp > m->layers)
    return sim_errf(err, SIM_EINPUT, "deployment: pipeline_parallel_size %u is out of range 1..%u", d->pp,
                    SIM_MIN(CFG_MAX_PP, m->layers));
  if (d->pp > 1 && deploy_gpus(d) > gpn && !(g->net_Bps > 0))
    return sim_errf(err, SIM_EINPUT, "gpu %s: pipeline stages on several nodes need a network (network_bandwidth_gb_s > 0)",
                    g->name);
  if (d->tp > gpn && (d->tp % gpn || !(g->net_Bps > 0) || !(g->net_latency_ns >= 0)))
    return sim_errf(err, SIM_EINPUT,
                    "gpu %s: a TP group of %u spanning nodes of %u GPUs needs whole nodes and a network "
                    "(network_bandwidth_gb_s > 0)",
                    g->name, d->tp, gpn);
  const struct {
    const char *name;
    double v;
  } effs[] = {{"gemm_compute_eff", e->gemm_compute_eff}, {"gemm_memory_eff", e->gemm_memory_eff},
              {"attn_prefill_eff", e->attn_prefill_eff}, {"attn_decode_eff", e->attn_decode_eff},
              {"elementwise_eff", e->elementwise_eff},   {"allreduce_bw_eff", e->allreduce_bw_eff}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(effs); i++)
    if (!(effs[i].v > 0 && effs[i].v <= 1.5)) return bad_eff(err, e, effs[i].name, effs[i].v);
  if (e->step_overhead_ns < 0 || e->per_seq_overhead_ns < 0 || e->launch_overhead_ns_per_layer < 0 ||
      e->allreduce_latency_ns < 0 || e->kernel_floor_ns < 0 || e->elementwise_kernels_per_layer < 0)
    return sim_errf(err, SIM_EINPUT, "engine %s: overheads, latencies and kernel counts must be >= 0", e->name);
  return SIM_OK;
}

int cost_init(cost_model *c, const model_cfg *m, const gpu_cfg *g, const engine_cfg *e, const deploy_cfg *d,
              sim_err *err) {
  memset(c, 0, sizeof *c);
  int rc = check_inputs(m, g, e, d, err);
  if (rc) return rc;
  c->model = m, c->gpu = g, c->engine = e, c->deploy = d;
  shard_init_dp(&c->shard, m, d->tp, deploy_dp(d), deploy_ep(d));
  c->pp = d->pp ? d->pp : 1;
  for (uint32_t k = 0; k < c->pp; k++) c->stage_layers[k] = shard_pp_layers(m->layers, c->pp, k);
  uint32_t mnbt = d->max_num_batched_tokens ? d->max_num_batched_tokens : e->max_num_batched_tokens;
  uint32_t mns = d->max_num_seqs ? d->max_num_seqs : e->max_num_seqs;
  c->n_graph_sizes = engver_graph_sizes(e, mns, mnbt, c->graph_sizes, COST_MAX_GRAPH_SIZES);
  if (c->n_graph_sizes) { /* the first size >= n, looked up once per step: a table, not a search */
    uint32_t top = c->graph_sizes[c->n_graph_sizes - 1];
    c->graph_of = sim_calloc((size_t)top + 1, sizeof *c->graph_of);
    for (uint32_t v = 1, i = 0; v <= top; c->graph_of[v++] = c->graph_sizes[i]) i += c->graph_sizes[i] < v;
  }
  size_t n = SIM_MAX(SIM_MAX(mnbt, mns), MEMO_MIN);
  c->memo_len = n + 1;
  c->memo[0] = sim_calloc(c->memo_len, sizeof *c->memo[0]);
  c->memo[1] = sim_calloc(c->memo_len, sizeof *c->memo[1]);
  c->lm_memo = sim_calloc(c->memo_len, sizeof *c->lm_memo);
  cost__dec_step_init(c);
  c->kernel_floor_ns = e->kernel_floor_ns;
  c->attn_floor_ns = e->kernel_floor_ns;
  c->ar_table = d->allreduce != AR_LINK;
  return SIM_OK;
}

void cost_set_profiles(cost_model *c, const prof *own, const prof *other, const gpu_cfg *other_gpu) {
  c->profile = own;
  c->mla_module = false, c->mla_prof = NULL; /* cost_set_mla_modules attaches them again */
  c->scaled_profile = other_gpu ? other : NULL;
  c->scaled_gpu = other ? other_gpu : NULL;
  c->ar_table = c->deploy->allreduce != AR_LINK;
  ar_check chk;
  if (c->deploy->allreduce == AR_AUTO && cost_allreduce_check(c, &chk) && chk.implausible) c->ar_table = false;
  double r;
  c->block_own = own && cost_block_gemm_check(own, &r);
  c->block_scaled = c->scaled_profile && cost_block_gemm_check(c->scaled_profile, &r);
  c->kernel_floor_ns = c->engine->kernel_floor_ns;
  c->attn_floor_ns = c->engine->kernel_floor_ns;
  if (own) cost__floors_from(c, own);
  /* a MIG slice's launch floors are its whole GPU's (a 1 x 128 x 128 GEMM is launch latency, not SMs) */
  else if (other && other_gpu && c->gpu->mig_parent[0] && !strcmp(c->gpu->mig_parent, other_gpu->name))
    cost__floors_from(c, other);
  c->fp8_requant_ns[0] = cost__fp8_requant_ns(c, own);
  c->fp8_requant_ns[1] = cost__fp8_requant_ns(c, c->scaled_profile);
  cost__memo_clear(c);
  for (size_t i = 0; i < c->memo_len; i++) c->lm_memo[i].valid = false;
}

void cost_set_moe_alternates(cost_model *c, const prof *const *alt, int n) {
  c->n_moe_alt = 0;
  for (int i = 0; i < n && i < 5; i++) c->moe_alt[c->n_moe_alt++] = alt[i];
  cost__memo_clear(c);
}

void cost_deinit(cost_model *c) {
  free(c->memo[0]);
  free(c->memo[1]);
  free(c->lm_memo);
  free(c->dec_memo);
  free(c->dec_step);
  free(c->graph_of);
  memset(c, 0, sizeof *c);
}

/* ---- one step ------------------------------------------------------------------------- */

static void add(step_cost *out, cost_op op, cost_bound b, double ns) {
  out->op_ns[op] += ns;
  out->bound_ns[b] += ns;
}

uint32_t cost_graph_size(const cost_model *c, uint32_t n) {
  if (n == 0 || c->n_graph_sizes == 0 || n > c->graph_sizes[c->n_graph_sizes - 1]) return n;
  return c->graph_of[n];
}

typedef enum exec_mode { EXEC_EAGER = 0, EXEC_PIECEWISE, EXEC_FULL } exec_mode;

static exec_mode mode_of(const cost_model *c, const batch_desc *b) {
  if (c->n_graph_sizes == 0 || b->num_tokens > c->graph_sizes[c->n_graph_sizes - 1]) return EXEC_EAGER;
  graph_mode g = c->engine->graph_mode;
  bool decode_only = b->num_prefill == 0;
  if (decode_only && (g == GRAPH_DECODE_ONLY || g == GRAPH_FULL_AND_PIECEWISE)) return EXEC_FULL;
  if (g == GRAPH_PIECEWISE || g == GRAPH_FULL_AND_PIECEWISE) return EXEC_PIECEWISE;
  return EXEC_EAGER;
}

int cost_graph_mode(const cost_model *c, const batch_desc *b) { return (int)mode_of(c, b); }

/* Attention of the step: the decode call and every chunk, one varlen call
 * (the per-call floor paid once). */
static void attention(cost_model *c, const batch_desc *b, step_cost *out) {
  double L = c->model->layers, Ls = c->model->sliding_layers;
  double sum = 0, largest = 0, slide_dec = 0, slide_pre = 0;
  uint32_t parts = 0;
  double part_ns[2] = {0, 0}; /* decode, prefill (per layer) */
  cost_bound part_b[2] = {BOUND_MEMORY, BOUND_COMPUTE};
  cost_src s;
  cost_bound bd;
  if (b->num_decode > 0) {
    double ns = cost__attn_decode_eval(c, b->num_decode, b->decode_ctx_tokens, &s, &bd);
    part_ns[0] = ns, part_b[0] = bd;
    c->src_count[OP_ATTN_DECODE][s]++;
    sum += ns, parts++;
    if (ns > largest) largest = ns;
    cost_src s2;
    if (Ls > 0) slide_dec = cost__attn_window_decode(c, b->num_decode, b->decode_ctx_tokens, &s2);
  }
  for (uint32_t i = 0; i < b->num_prefill; i++) {
    uint32_t ch = b->prefills[i].chunk_tokens, x = b->prefills[i].ctx_tokens;
    double ns = cost__attn_prefill_eval(c, ch, x, &s, &bd);
    part_ns[1] += ns;
    if (bd == BOUND_MEMORY) part_b[1] = BOUND_MEMORY;
    c->src_count[OP_ATTN_PREFILL][s]++;
    sum += ns, parts++;
    if (ns > largest) largest = ns;
    cost_src s2;
    if (Ls > 0) slide_pre += cost__attn_window_prefill(c, ch, x, ns, &s2);
  }
  if (parts == 0) return;
  double f = sum > 0 ? 1.0 : 0, merged; /* the saving, shared in proportion (one call: none, sum / sum = 1) */
  if (parts > 1 && sum > 0) {
    merged = sum - (parts - 1) * (c->mla_module ? c->mla_floor_ns : c->attn_floor_ns);
    f = (merged < largest ? largest : merged) / sum;
  }
  double Lf = L - Ls;
  if (part_ns[0] > 0) add(out, OP_ATTN_DECODE, part_b[0], (part_ns[0] * Lf + slide_dec * Ls) * f);
  if (part_ns[1] > 0) add(out, OP_ATTN_PREFILL, part_b[1], (part_ns[1] * Lf + slide_pre * Ls) * f);
}

/* Splits the step's GPU time into pipeline stages (one stage without PP), adds each stage's launch floor and
 * the sends between stages; op_ns holds the whole model's time on entry, *sum gets its total. True if it added. */
static bool stages(cost_model *c, const batch_desc *b, exec_mode mode, uint32_t Tg, double once, step_cost *out,
                   double *sum) {
  const engine_cfg *e = c->engine;
  double L = c->model->layers, lm = out->op_ns[OP_LM_HEAD], all = *sum = cost__sum_ops(out->op_ns);
  bool added = false;
  double layered = all - lm - once; /* the part proportional to layers */
  bool host_launches = mode != EXEC_FULL && b->num_tokens > 0 && e->launch_overhead_ns_per_layer > 0;
  for (uint32_t k = 0; k < c->pp; k++) {
    double ns;
    if (c->pp == 1) {
      ns = all;
    } else {
      ns = layered * c->stage_layers[k] / L;
      if (k == 0) ns += once / 2; /* embedding gather */
      if (k + 1 == c->pp) ns += once / 2 + lm; /* final norm, LM head, sampler */
    }
    if (host_launches) {
      /* the host launches the stage's layers: its GPU cannot run ahead of it */
      double issue = e->launch_overhead_ns_per_layer * c->stage_layers[k];
      if (issue > ns) {
        add(out, OP_LAUNCH, BOUND_CPU, issue - ns);
        ns = issue, added = true;
      }
    }
    out->stage_ns[k] = ns;
    if (k + 1 < c->pp) {
      out->send_ns[k] = cost_pp_send_ns(c, Tg, k);
      add(out, OP_PP_SEND, BOUND_COMM, out->send_ns[k]);
      added = true;
    }
  }
  if (host_launches) c->src_count[OP_LAUNCH][SRC_ROOFLINE]++;
  if (c->pp > 1 && Tg > 0) c->src_count[OP_PP_SEND][SRC_ROOFLINE]++;
  return added;
}

/* Attention data parallelism: the MoE layers of a step and the DP group's
 * dispatch and combine, from this rank's T (padded to its graph size) and the
 * other ranks' tokens; not memoized (they depend on the peers). */
static void dp_moe(cost_model *c, uint32_t T, uint32_t peers, step_cost *out) {
  double Lm = c->model->moe_layers;
  if (c->shard.dp <= 1 || Lm <= 0 || !T) return;
  cost_src s, cs;
  cost_bound bd;
  double moe = moe_eval(c, T, T + peers, &s, &bd) * Lm;
  add(out, OP_MOE, bd, moe);
  add(out, OP_ALLREDUCE, BOUND_COMM, cost__dp_collective_ns(c, T + peers, &cs) * Lm);
  c->src_count[OP_MOE][s]++;
  c->src_count[OP_ALLREDUCE][cs]++;
}

static void step_compute(cost_model *c, const batch_desc *b, step_cost *out) {
  /* every field a reader may read, not the stages beyond pp (a whole-struct memset was a fifth of this function) */
  out->total_ns = out->gpu_ns = out->cpu_ns = out->stage_ns[0] = out->send_ns[0] = 0;
  for (uint32_t k = 1; k < c->pp; k++) out->stage_ns[k] = out->send_ns[k] = 0;
  const engine_cfg *e = c->engine;
  exec_mode mode = mode_of(c, b);
  if (b->dp_mode && (exec_mode)(b->dp_mode - 1) < mode) mode = (exec_mode)(b->dp_mode - 1);
  uint32_t T = b->num_tokens, Tg = mode == EXEC_EAGER ? T : cost_graph_size(c, T);
  if (mode != EXEC_EAGER && b->dp_pad > Tg) Tg = b->dp_pad; /* a lockstep DP group pads every rank to its largest */
  double once = 0;
  /* element by element: a memset or memcpy of these small arrays compiles to rep stos/movs, whose start-up
   * cost was a tenth of this function, and stalls the loads of single elements right after */
  if (Tg > 0) { /* copied, not added to zeros: the same bits (0 + x = x for the non-negative times here) */
    cost_memo scratch;
    const cost_memo *tp = tpart(c, Tg, mode != EXEC_EAGER, &scratch);
    once = tp->once_ns;
    for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] = tp->op_ns[op];
    for (int bd = 0; bd < BOUND_COUNT; bd++) out->bound_ns[bd] = tp->bound_ns[bd];
    for (int op = OP_GEMM_QKV; op <= OP_GEMM_DOWN; op++) c->src_count[op][tp->src[op]]++;
    if (c->model->moe_layers && c->shard.dp <= 1) c->src_count[OP_MOE][tp->src[OP_MOE]]++;
    if (tp_of(c) > 1) c->src_count[OP_ALLREDUCE][tp->src[OP_ALLREDUCE]]++;
    c->src_count[OP_ELEMENTWISE][SRC_ROOFLINE]++;
    dp_moe(c, Tg, b->moe_peer_tokens, out);
  } else {
    for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] = 0;
    for (int bd = 0; bd < BOUND_COUNT; bd++) out->bound_ns[bd] = 0;
  }
  attention(c, b, out);
  if (b->num_sample > 0) {
    cost_lm_memo fresh, *lm = b->num_sample < c->memo_len ? &c->lm_memo[b->num_sample] : &fresh;
    if (lm == &fresh || !lm->valid) {
      cost_src s;
      cost_bound bd;
      lm->gemm_ns = gemm_eval(c, OP_LM_HEAD, b->num_sample, &s, &bd);
      double logits = (double)b->num_sample * c->model->vocab * 4.0 * SAMPLER_PASSES;
      lm->sampler_ns = kernels_ns(c, SAMPLER_PASSES, logits);
      lm->src = (uint8_t)s, lm->bound = (uint8_t)bd, lm->valid = true;
    }
    add(out, OP_LM_HEAD, (cost_bound)lm->bound, lm->gemm_ns);
    add(out, OP_LM_HEAD, BOUND_MEMORY, lm->sampler_ns);
    c->src_count[OP_LM_HEAD][lm->src]++;
  }
  double gpu;
  if (stages(c, b, mode, Tg, once, out, &gpu)) gpu = cost__sum_ops(out->op_ns); /* else the sum stages took */
  double cpu = e->step_overhead_ns + e->per_seq_overhead_ns * b->num_seqs;
  bool async = c->deploy->async_scheduling > 0;
  double cpu_shown = async ? (cpu > gpu ? cpu - gpu : 0) : cpu;
  if (cpu > 0) c->src_count[OP_CPU_OVERHEAD][SRC_ROOFLINE]++;
  add(out, OP_CPU_OVERHEAD, BOUND_CPU, cpu_shown);
  out->gpu_ns = gpu;
  out->cpu_ns = cpu;
  out->total_ns = gpu + cpu_shown;
}

void cost_step(cost_model *c, const batch_desc *b, step_cost *out) {
  cost_dec_key k;
  if (cost__dec_step_get(c, b, out, &k)) return; /* cost_decstep.c */
  step_compute(c, b, out);
  cost__dec_step_put(c, &k, out);
}

/* ---- components ------------------------------------------------------------------------ */

double cost_gemm_ns(cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  cost_src s;
  cost_bound b;
  double ns = gemm_eval(c, op, M, &s, &b);
  if (src) *src = s;
  if (bound) *bound = b;
  return ns;
}

double cost_decode_step_ns(cost_model *c, uint32_t batch, uint32_t ctx, step_cost *out) {
  batch_desc b = {.num_tokens = batch,
                  .num_seqs = batch,
                  .num_decode = batch,
                  .decode_ctx_tokens = (uint64_t)batch * ctx,
                  .num_sample = batch,
                  .moe_peer_tokens = (c->shard.dp - 1) * batch}; /* every DP rank decoding the same batch */
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
                                          "elementwise",  "cpu_overhead", "launch",      "pp_send",
                                          "moe"};
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
