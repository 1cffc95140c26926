/* cost_gemm.c: the linear layers of the cost model (cost_gemm.h): GEMMs on
 * the deployment's dtype path and mixture-of-experts blocks, each from the own
 * profile, a scaled one, else the roofline (cost.c's header comment).
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
 *   full bandwidth (roofline fallback only). */
#include "hw/cost_gemm.h"

#include <math.h>

#include "hw/cost_state.h"

#define WO_COMPUTE_FACTOR 0.8 /* weight-only (dequantizing) GEMMs vs the activation-dtype peak */

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

/* ---- GEMMs ---------------------------------------------------------------------- */

/* A GEMM of M x N x K on the dtype path of `op` (the LM head's: activation
 * dtype; the others: the weight dtype's). */
double cost__gemm_shape_eval(const cost_model *c, cost_op op, uint32_t M, uint32_t N, uint32_t K, bool bias,
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

double cost__gemm_eval(const cost_model *c, cost_op op, uint32_t M, cost_src *src, cost_bound *bound) {
  SIM_ASSERT(is_gemm(op));
  shard_gemm g = shard_of(op);
  return cost__gemm_shape_eval(c, op, M, c->shard.n[g], c->shard.k[g], op == OP_GEMM_QKV && c->model->qkv_bias, src,
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
  bool ug = s->expert_mats == 2.0; /* ungated experts: only the tables of a non-gated kernel */
  if (!extrap) return prof_moe_ns(p, dt, ug, Tg, Hm, Ie, s->topk, s->experts, mtp, s->ep, dist, ns);
  if (s->ep > 1) return false;
  for (uint32_t m = mtp / 2, k = 1; m >= 1 && m * 2 == mtp >> (k - 1); m /= 2, k++) {
    double tm, th;
    if (!prof_moe_ns(p, dt, ug, Tg, Hm, Ie, s->topk, s->experts, m, 1, dist, &tm)) continue;
    double r = 0.5;
    if (m % 2 == 0 && prof_moe_ns(p, dt, ug, Tg, Hm, Ie, s->topk, s->experts, m / 2, 1, dist, &th) && th > 0)
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

double cost__moe_eval(const cost_model *c, uint32_t T, uint32_t Tg, cost_src *src, cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  const model_shard *s = &c->shard;
  if (!T || !s->experts) return 0;
  const engine_cfg *e = c->engine;
  gemm_path p = path_for(c, c->gpu, OP_GEMM_GATEUP);
  /* Tg: tokens entering the routed experts (T, plus the other DP ranks' with attention data parallelism) */
  /* H: the width the routed experts run at (Nemotron-3's moe_latent_size, else hidden); em: an expert's
     matrices (3, gate, up and down; 2 for Nemotron-3's relu2 experts, up and down) */
  double E = s->experts, k = s->topk, I = s->expert_inter, H = s->expert_hidden, t = Tg, em = s->expert_mats;
  /* with expert parallelism a rank computes its experts/ep whole experts for the pairs routed to them */
  double pairs = t * k / s->ep, hit = s->local_experts * (1.0 - pow(1.0 - k / E, t));
  double bytes = hit * em * H * I * p.w_bytes + pairs * H * (p.in_bytes + act_b(c)) + pairs * (em - 1.0) * I * act_b(c);
  double tc = ns_of(2.0 * pairs * em * H * I, p.peak * e->gemm_compute_eff);
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
  uint32_t Hm = s->expert_hidden, Ie = c->model->expert_inter, mtp = s->moe_tp; /* the MoE layer's TP */
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
    if (prof_moe_ns(c->scaled_profile, dts[i], s->expert_mats == 2.0, Tg, Hm, Ie, s->topk, s->experts, mtp, s->ep,
                    dist, &ns)) {
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
  double router = cost__gemm_shape_eval(c, OP_LM_HEAD, T, s->experts, s->hidden, false, &gs, &gb);
  double shared = 0, latent = 0;
  if (s->shared_inter) { /* gate and up (up only when the experts are ungated), down */
    uint32_t n_up = s->expert_mats == 2.0 ? s->shared_inter : 2 * s->shared_inter;
    shared = cost__gemm_shape_eval(c, OP_GEMM_GATEUP, T, n_up, s->hidden, false, &gs, &gb) +
             cost__gemm_shape_eval(c, OP_GEMM_DOWN, T, s->hidden, s->shared_inter, false, &gs, &gb);
  }
  if (s->moe_latent) /* Nemotron-3's fc1_latent_proj before the routed experts, fc2_latent_proj after (whole) */
    latent = cost__gemm_shape_eval(c, OP_GEMM_GATEUP, T, s->moe_latent, s->hidden, false, &gs, &gb) +
             cost__gemm_shape_eval(c, OP_GEMM_DOWN, T, s->hidden, s->moe_latent, false, &gs, &gb);
  return routed + router + shared + latent;
}

/* DeciLM's dense MLPs of several widths (model_cfg.ffn_classes): each class's GEMM at its own shard width times
 * its layers; the source and bound reported are the widest class's. */
double cost__ffn_classes_eval(const cost_model *c, cost_op op, uint32_t T, cost_src *src, cost_bound *bound) {
  const model_cfg *m = c->model;
  uint32_t H = c->shard.k[SG_GATE_UP], widest = 0;
  double ns = 0;
  for (uint32_t k = 0; k < m->ffn_classes; k++) {
    uint32_t inter = (m->ffn_class_inter[k] + c->shard.tp - 1) / c->shard.tp;
    uint32_t n = op == OP_GEMM_GATEUP ? (m->mlp_ungated ? inter : 2 * inter) : H, kk = op == OP_GEMM_GATEUP ? H : inter;
    cost_src s;
    cost_bound b;
    ns += cost__gemm_shape_eval(c, op, T, n, kk, false, &s, &b) * cfg_model_ffn_class_layers_in(m, k, 0, m->layers);
    if (m->ffn_class_inter[k] >= widest) widest = m->ffn_class_inter[k], *src = s, *bound = b;
  }
  return ns;
}
