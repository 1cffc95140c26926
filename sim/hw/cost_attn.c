/* cost_attn.c: the attention terms of the cost model (cost_attn.h): decode and
 * prefill calls from the measured tables; MLA from the measured attention
 * modules (cost_set_mla_modules), else by the roofline. A part cost.c calls;
 * it calls nothing of cost.c. */
#include <math.h>

#include "hw/cost_attn.h"

#include "hw/cost_state.h"

/* ---- attention ------------------------------------------------------------------ */

/* One decode call: `batch` sequences attending to ctx_total tokens in all. */
/* Multi-head latent attention (vLLM's MLA) by the roofline, where no measured
 * module serves it (and, with one, for the work cached tokens add to a
 * prompt chunk, which the context modules do not measure). Decode runs absorbed: every
 * head scores the query against the cached latent and RoPE key (kv_lora +
 * rope) and sums the latents (kv_lora): 2 heads_g C (2 kv_lora + rope) flops,
 * the latent cache read once per layer on every rank. Prefill runs
 * unabsorbed: kv_b expands the (ctx + chunk) latents to per-head keys and
 * values (2 (ctx + chunk) kvb_n kv_lora flops), then attention with
 * (nope + rope)-dim keys and v-dim values over the chunk's causal work. */

static double mla_decode(const cost_model *c, uint32_t batch, double C, cost_bound *bound) {
  const model_shard *s = &c->shard;
  const engine_cfg *e = c->engine;
  double hg = s->q_heads, kl = s->kv_lora;
  double bytes = C * s->mla_kv * kv_b(c) + (double)batch * hg * (s->mla_kv + kl) * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  double tc = ns_of(2.0 * hg * C * (s->mla_kv + kl), c->gpu->flops[c->deploy->act_dtype] * e->attn_prefill_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  return tc > tm ? tc : tm;
}

static double mla_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx, cost_bound *bound) {
  const model_shard *s = &c->shard;
  const engine_cfg *e = c->engine;
  double hg = s->q_heads, all = (double)ctx + chunk, qk = s->head_dim, v = s->v_dim;
  double up = 2.0 * all * s->kvb_n * s->kv_lora;
  double attn = 2.0 * hg * chunk_work(chunk, ctx) * (qk + v);
  double peak = c->gpu->flops[c->deploy->act_dtype];
  double tc = ns_of(up, peak * e->gemm_compute_eff) + ns_of(attn, peak * e->attn_prefill_eff);
  double bytes = all * s->mla_kv * kv_b(c) + all * hg * (qk + v) * act_b(c) * 2.0 + (double)chunk * hg * (qk + v) * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  return tc > tm ? tc : tm;
}

double cost__attn_decode_eval(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src,
                              cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_MEMORY;
  if (batch == 0) return 0;
  if (c->mla_module) { /* the whole attention module, measured (cost.h, cost_set_mla_modules) */
    uint64_t mean = (ctx_total + batch / 2) / batch;
    double ns;
    if (prof_mla_module_ns(c->mla_prof, &c->mla_gen, batch, mean < 1 ? 1 : mean > UINT32_MAX ? UINT32_MAX : (uint32_t)mean,
                           &ns)) {
      *src = SRC_PROFILE;
      return ns;
    }
  }
  if (c->shard.mla) return mla_decode(c, batch, (double)ctx_total, bound);
  const model_shard *s = &c->shard;
  const engine_cfg *e = c->engine;
  double hd = s->head_dim, C = (double)ctx_total;
  uint64_t len64 = (ctx_total + batch / 2) / batch;
  uint32_t kv_len = len64 < 1 ? 1 : len64 > UINT32_MAX ? UINT32_MAX : (uint32_t)len64;
  double ns;
  sim_dtype kvd = c->deploy->kv_dtype;
  double *slot = NULL;
  if (c->profile && batch < COST_DEC_MEMO_B && kv_len < COST_DEC_MEMO_L) {
    cost_model *mc = (cost_model *)c; /* the memo is the model's scratch (cost.h: not thread-safe) */
    if (!mc->dec_memo) {
      size_t n = (size_t)COST_DEC_MEMO_B * COST_DEC_MEMO_L;
      mc->dec_memo = sim_calloc(n, sizeof *mc->dec_memo); /* +0.0 = empty (cost__dec_filled): pages untouched */
      double rm = 1e9 / (c->gpu->hbm_Bps * e->attn_decode_eff);
      mc->dec_rate[0] = shard_kv_elems(s) * kv_b(c) * rm;
      mc->dec_rate[1] = 4.0 * s->q_heads * hd * 1e9 / (c->gpu->flops[c->deploy->act_dtype] * e->attn_prefill_eff);
      mc->dec_rate[2] = 2.0 * s->q_heads * hd * act_b(c) * rm;
    }
    slot = &mc->dec_memo[(size_t)batch * COST_DEC_MEMO_L + kv_len];
    if (cost__dec_filled(*slot)) {
      /* the bound as below names it, from rates multiplied instead of work divided (a few ulps apart); where
         the two are that close (rare), from the formulas below themselves, and the memo still answers the time */
      double tm_r = C * c->dec_rate[0] + (double)batch * c->dec_rate[2], tc_r = C * c->dec_rate[1];
      bool mem = tm_r > tc_r * (1.0 + 1e-9), comp = tc_r > tm_r * (1.0 + 1e-9);
      if (mem || comp) {
        *bound = mem ? BOUND_MEMORY : BOUND_COMPUTE;
        *src = SRC_PROFILE;
        return *slot;
      }
    }
  }
  double bytes = C * shard_kv_elems(s) * kv_b(c) + (double)batch * 2.0 * s->q_heads * hd * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  double tc = ns_of(4.0 * s->q_heads * hd * C, c->gpu->flops[c->deploy->act_dtype] * e->attn_prefill_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  if (slot && cost__dec_filled(*slot)) {
    *src = SRC_PROFILE;
    return *slot;
  }
  if (c->profile && (prof_attn_decode_ns(c->profile, kvd, batch, kv_len, s->q_heads, s->kv_heads, s->head_dim, &ns) ||
                     (c->attn_alt && prof_attn_decode_ns(c->attn_alt, kvd, batch, kv_len, s->q_heads, s->kv_heads,
                                                         s->head_dim, &ns)))) {
    *src = SRC_PROFILE;
    if (slot) *slot = ns == 0 ? -0.0 : ns; /* a measured 0 stays apart from "empty" (+0.0) */
    return ns;
  }
  if (c->scaled_profile &&
      prof_attn_decode_ns(c->scaled_profile, kvd, batch, kv_len, s->q_heads, s->kv_heads, s->head_dim, &ns)) {
    sim_dtype a = c->deploy->act_dtype;
    if (cost__scale_other(c, *bound, c->gpu->flops[a], c->scaled_gpu->flops[a], &ns)) {
      *src = SRC_PROFILE_SCALED;
      return ns;
    }
  }
  return tc > tm ? tc : tm;
}



/* One chunk from profile p: a calibrate profile's (chunk, ctx) table answers
 * directly; otherwise the measured time of the prompt with the same attention
 * work (L tokens, L (L + 1) / 2 = c x + c (c + 1) / 2: the same query-key
 * products, so the same compute at the efficiency the kernel reaches on that
 * much work), at least the time of reading the chunk's x + c cached tokens
 * once (a one-sequence decode call of that length: what bounds a short chunk
 * after a long context). */
static bool chunk_from(const cost_model *c, const prof *p, uint32_t chunk, uint32_t ctx, double *ns) {
  const model_shard *s = &c->shard;
  if (prof_attn_prefill_ns(p, chunk, ctx, s->q_heads, s->kv_heads, s->head_dim, ns)) return true;
  double w = chunk_work(chunk, ctx), leq = floor((sqrt(8.0 * w + 1.0) - 1.0) / 2.0 + 0.5);
  uint32_t L = leq < chunk ? chunk : leq > 4e9 ? 4000000000u : (uint32_t)leq;
  double t;
  if (!prof_attn_context_ns(p, c->deploy->kv_dtype, 1, L, s->q_heads, s->kv_heads, s->head_dim, &t)) return false;
  t *= w / chunk_work(L, 0); /* L is rounded: keep the work exact */
  double tm;
  uint64_t len = (uint64_t)ctx + chunk;
  if (ctx > 0 && prof_attn_decode_ns(p, c->deploy->kv_dtype, 1, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len,
                                     s->q_heads, s->kv_heads, s->head_dim, &tm) &&
      tm > t)
    t = tm;
  *ns = t;
  return true;
}

double cost__attn_prefill_eval(const cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src,
                               cost_bound *bound) {
  *src = SRC_ROOFLINE;
  *bound = BOUND_COMPUTE;
  if (chunk == 0) return 0;
  double ns;
  if (c->mla_module && prof_mla_module_ns(c->mla_prof, &c->mla_ctx, 1, chunk, &ns)) {
    /* the measured module of a prompt of this length, plus the roofline of the work the cached tokens add */
    cost_bound b0;
    if (ctx > 0) ns += fmax(0.0, mla_prefill(c, chunk, ctx, bound) - mla_prefill(c, chunk, 0, &b0));
    *src = SRC_PROFILE;
    return ns;
  }
  if (c->shard.mla) return mla_prefill(c, chunk, ctx, bound);
  const model_shard *s = &c->shard;
  const engine_cfg *e = c->engine;
  sim_dtype act = c->deploy->act_dtype;
  double hd = s->head_dim;
  double tc = ns_of(4.0 * s->q_heads * hd * chunk_work(chunk, ctx), c->gpu->flops[act] * e->attn_prefill_eff);
  double bytes = ((double)ctx + chunk) * shard_kv_elems(s) * kv_b(c) + (double)chunk * 2.0 * s->q_heads * hd * act_b(c);
  double tm = ns_of(bytes, c->gpu->hbm_Bps * e->attn_decode_eff);
  *bound = tc >= tm ? BOUND_COMPUTE : BOUND_MEMORY;
  if (c->profile && (chunk_from(c, c->profile, chunk, ctx, &ns) || (c->attn_alt && chunk_from(c, c->attn_alt, chunk, ctx, &ns)))) {
    *src = SRC_PROFILE;
    return ns;
  }
  if (c->scaled_profile && chunk_from(c, c->scaled_profile, chunk, ctx, &ns) &&
      cost__scale_other(c, *bound, c->gpu->flops[act], c->scaled_gpu->flops[act], &ns)) {
    *src = SRC_PROFILE_SCALED;
    return ns;
  }
  return tc > tm ? tc : tm;
}

/* ---- sliding-window layers ------------------------------------------------------------- */

/* Query-key pairs of a prompt of L tokens under a window of W: token i scores min(i, W) keys. */
static double window_pairs(double L, double W) { return L <= W ? L * (L + 1.0) / 2.0 : W * (W + 1.0) / 2.0 + (L - W) * W; }

double cost__attn_window_decode(const cost_model *c, uint32_t batch, uint64_t ctx_total, cost_src *src) {
  const model_shard *s = &c->shard;
  uint32_t W = c->model->sliding_window;
  *src = SRC_ROOFLINE;
  if (batch == 0) return 0;
  uint64_t mean = (ctx_total + batch / 2) / batch;
  uint32_t len = mean < 1 ? 1 : mean > UINT32_MAX ? UINT32_MAX : (uint32_t)mean;
  double ns;
  for (int i = 0; i < c->n_win_alt; i++)
    if (prof_attn_window_decode_ns(c->win_alt[i], W, c->deploy->kv_dtype, batch, len, s->q_heads, s->kv_heads,
                                   s->head_dim, &ns)) {
      *src = SRC_PROFILE;
      return ns;
    }
  /* no table of this window: a full-attention call over each sequence's last W tokens (the mean context, capped) */
  double m = (double)ctx_total / batch;
  uint64_t capped = (uint64_t)(batch * (m < W ? m : W) + 0.5);
  cost_bound b;
  return cost__attn_decode_eval(c, batch, capped ? capped : batch, src, &b);
}

/* A chunk of `chunk` tokens after `ctx` cached ones scores, in the window, n1 x ctx + n1 (n1 + 1) / 2 + (chunk -
 * n1) W keys, n1 = its tokens still inside the first W. From a window table: the measured prompt whose windowed
 * pairs are as many (isl L: pairs(L) = the chunk's), its time scaled to keep the pairs exact. */
double cost__attn_window_prefill(const cost_model *c, uint32_t chunk, uint32_t ctx, double full_ns, cost_src *src) {
  const model_shard *s = &c->shard;
  double W = c->model->sliding_window, x = ctx, ch = chunk;
  double n1 = fmax(0.0, fmin(ch, W - x));
  double win = n1 * x + n1 * (n1 + 1.0) / 2.0 + (ch - n1) * W;
  *src = SRC_ROOFLINE;
  if (chunk == 0) return 0;
  double head = W * (W + 1.0) / 2.0;
  double L = win <= head ? floor((sqrt(8.0 * win + 1.0) - 1.0) / 2.0 + 0.5) : floor(W + (win - head) / W + 0.5);
  uint32_t Li = L < 1 ? 1 : L > 4e9 ? 4000000000u : (uint32_t)L;
  double ns;
  for (int i = 0; i < c->n_win_alt; i++)
    if (prof_attn_window_context_ns(c->win_alt[i], (uint32_t)W, c->deploy->kv_dtype, 1, Li, s->q_heads, s->kv_heads,
                                    s->head_dim, &ns)) {
      *src = SRC_PROFILE;
      return ns * win / window_pairs(Li, W);
    }
  double full = chunk_work(ch, x);
  return full > 0 ? full_ns * win / full : full_ns;
}

double cost_attn_decode_ns(cost_model *c, uint32_t batch, uint64_t ctx_tokens_total, cost_src *src) {
  cost_src s;
  cost_bound b;
  double ns = cost__attn_decode_eval(c, batch, ctx_tokens_total, &s, &b);
  if (src) *src = s;
  return ns;
}

double cost_attn_prefill_ns(cost_model *c, uint32_t chunk, uint32_t ctx, cost_src *src) {
  cost_src s;
  cost_bound b;
  double ns = cost__attn_prefill_eval(c, chunk, ctx, &s, &b);
  if (src) *src = s;
  return ns;
}

double cost__attn_kind_factor(const cost_model *c, bool sliding, bool decode) {
  const model_cfg *m = c->model;
  if (!cfg_model_typed_attn(m)) return 1.0;
  uint32_t hd = cfg_model_kind_head_dim(m, sliding);
  if (!decode) return (double)hd / m->head_dim;
  model_shard base, kind;
  shard_from_dims(&base, m->hidden, m->intermediate, m->q_heads, m->kv_heads, m->head_dim, m->vocab, c->shard.tp);
  shard_from_dims(&kind, m->hidden, m->intermediate, m->q_heads, cfg_model_kind_kv_heads(m, sliding), hd, m->vocab,
                  c->shard.tp);
  return (double)shard_kv_elems(&kind) / shard_kv_elems(&base);
}
