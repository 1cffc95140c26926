/* kern_plan.c: what `servesim calibrate` measures for a model, and how long
 * it should take (works without a GPU: `calibrate --dry-run`).
 *
 * The sweep, per TP degree t of the request:
 *   GEMM shapes of one Llama-style layer on one GPU (N = output, K = input
 *   features): qkv [H -> (qh/t + 2 max(1, kvh/t)) hd], o [qh hd/t -> H],
 *   gate_up [H -> 2 I/t], down [I/t -> H], lm_head [H -> ceil(round_up(V, 64)/t)] (model/shard.h);
 *   shapes that coincide are measured once. M runs over a grid dense at small
 *   M (1..16384; weight-only kernels 1..64; the LM head up to 1024, the most
 *   sequences that sample in one step).
 *   Decode attention over (batch, kv_len), prefill attention over (chunk, ctx)
 *   with the per-GPU head layout (qh/t, max(1, kvh/t)).
 * Points whose estimated call time exceeds max_call_ms are not measured (the
 * profile holds the boundary efficiency there): this bounds the GPU time.
 *
 * Estimates use the ceilings given (measured probes, or H200 leads for a dry
 * run) with assumed efficiencies; they budget time, they are not results. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof.h"
#include "kern.h"
#include "model/shard.h"

static const uint32_t gemm_m_full[] = {1,    2,    4,    8,    16,   32,   48,   64,   96,    128,   192,  256,
                                       384,  512,  768,  1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
static const uint32_t gemm_m_quick[] = {1, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
static const uint32_t wq_m_full[] = {1, 2, 4, 8, 16, 32, 48, 64};
static const uint32_t wq_m_quick[] = {1, 4, 16, 64};
static const uint32_t dec_b_full[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
static const uint32_t dec_l_full[] = {16,   32,   64,    128,   256,   512,   1024,
                                      2048, 4096, 8192, 16384, 32768, 65536, 131072};
static const uint32_t dec_b_quick[] = {1, 4, 16, 64, 256};
static const uint32_t dec_l_quick[] = {16, 256, 1024, 4096, 16384};
static const uint32_t pre_c_full[] = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const uint32_t pre_x_full[] = {0, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
static const uint32_t pre_c_quick[] = {8, 64, 256, 1024, 4096};
static const uint32_t pre_x_quick[] = {0, 1024, 8192};

/* One axis's grid; each axis has two, indexed by kern_plan.quick: [0] full, [1] quick. */
typedef struct axis_grid {
  const uint32_t *v;
  size_t n;
} axis_grid;
#define AXIS(a) {a, SIM_ARRAY_LEN(a)}
static const axis_grid GEMM_M[2] = {AXIS(gemm_m_full), AXIS(gemm_m_quick)};
static const axis_grid WQ_M[2] = {AXIS(wq_m_full), AXIS(wq_m_quick)};
static const axis_grid DEC_B[2] = {AXIS(dec_b_full), AXIS(dec_b_quick)};
static const axis_grid DEC_L[2] = {AXIS(dec_l_full), AXIS(dec_l_quick)};
static const axis_grid PRE_C[2] = {AXIS(pre_c_full), AXIS(pre_c_quick)};
static const axis_grid PRE_X[2] = {AXIS(pre_x_full), AXIS(pre_x_quick)};
#undef AXIS
#define LM_HEAD_MAX_M 1024

void kern_ceilings_h200(kern_ceilings *c) {
  memset(c, 0, sizeof *c);
  c->copy_Bps = 4.3e12;           /* measured d2d copy on an H200 here, read + write */
  c->peak_flops[DT_BF16] = 780e12; /* measured 8192^3 bf16 */
  c->peak_flops[DT_FP16] = 780e12;
  c->peak_flops[DT_FP8] = 1450e12; /* lead: ~1.85x bf16 in cuBLASLt */
  c->peak_flops[DT_INT8] = 1450e12;
  c->launch_ns = 2500;
}

void kern_opts_default(kern_opts *o, bool quick) {
  memset(o, 0, sizeof *o);
  o->seed = 20240601;
  o->reps = quick ? 5 : 9;
  o->warmup = 1;
  o->replay_min_ns = quick ? 100e3 : 200e3;
  o->point_budget_ns = quick ? 60e6 : 250e6;
}

void kern_protocol_for(const kern_opts *o, double call_ns, double set_bytes, double rotate_bytes,
                       kern_protocol *p) {
  if (call_ns < 1) call_ns = 1;
  if (set_bytes < 1) set_bytes = 1;
  /* one set already larger than the footprint streams past the L2 by itself */
  double sets = ceil(rotate_bytes / set_bytes);
  if (sets < 1) sets = 1;
  if (sets > KERN_MAX_SETS) sets = KERN_MAX_SETS;
  double calls = ceil(o->replay_min_ns / call_ns);
  if (calls < sets) calls = sets;
  if (calls > KERN_MAX_CALLS) calls = KERN_MAX_CALLS;
  p->sets = (uint32_t)sets;
  p->calls = (uint32_t)calls;
  p->warmup = o->warmup ? o->warmup : 1;
  double reps = o->reps ? o->reps : 7;
  double per_replay = calls * call_ns;
  if (reps * per_replay > o->point_budget_ns) reps = floor(o->point_budget_ns / per_replay);
  if (reps < 3) reps = 3;
  p->reps = (uint32_t)reps;
}

double kern_protocol_wall_s(const kern_protocol *p, double call_ns) {
  double host_ns = 150e3                          /* descriptors, heuristics, bookkeeping */
                   + (call_ns + 30e3)             /* first (eager) call and its sync */
                   + p->calls * 4e3 + 120e3;      /* capture and graph instantiation */
  double replays = (double)(p->warmup + p->reps) * (p->calls * call_ns + 20e3);
  return (host_ns + replays) * 1e-9;
}

/* ---- estimated call times ------------------------------------------------------- */

static double est_gemm_ns(const kern_ceilings *c, kern_family fam, sim_dtype wdt, sim_dtype adt, uint32_t M,
                          uint32_t N, uint32_t K) {
  prof_work w;
  prof_gemm_work(wdt, adt, M, N, K, &w);
  double peak = c->peak_flops[w.compute] > 0 ? c->peak_flops[w.compute] : c->peak_flops[DT_BF16];
  double eff_c = fam == KF_WQ ? 0.35 : 0.85, eff_m = fam == KF_WQ ? 0.7 : 0.8;
  double t_c = w.flops / (peak * eff_c) * 1e9, t_m = w.bytes / (c->copy_Bps * eff_m) * 1e9;
  return (t_c > t_m ? t_c : t_m) + 4000;
}

static double est_decode_ns(const kern_ceilings *c, sim_dtype kv, uint32_t b, uint32_t l, uint32_t qh, uint32_t kvh,
                            uint32_t hd) {
  prof_work w;
  prof_decode_work(kv, b, l, qh, kvh, hd, &w);
  double t_m = w.bytes / (c->copy_Bps * 0.7) * 1e9, t_c = w.flops / (c->peak_flops[DT_BF16] * 0.3) * 1e9;
  return (t_c > t_m ? t_c : t_m) + 6000; /* + split combine */
}

static double est_prefill_ns(const kern_ceilings *c, uint32_t chunk, uint32_t ctx, uint32_t qh, uint32_t kvh,
                             uint32_t hd) {
  prof_work w;
  prof_prefill_work(chunk, ctx, qh, kvh, hd, &w);
  double t_c = w.flops / (c->peak_flops[DT_BF16] * 0.3) * 1e9, t_m = w.bytes / (c->copy_Bps * 0.5) * 1e9;
  return (t_c > t_m ? t_c : t_m) + 5000;
}

/* ---- building ----------------------------------------------------------------------- */

typedef struct plan_build {
  kern_plan *p;
  size_t gcap, acap;
  const kern_ceilings *c;
  const kern_opts *o;
  double rotate;
} plan_build;

static void add_gemm(plan_build *b, const char *layer, uint32_t tp, kern_family fam, sim_dtype wdt, sim_dtype adt,
                     uint32_t N, uint32_t K) {
  kern_plan *p = b->p;
  if (fam == KF_WQ && !kern_wq_shape_ok(N, K)) {
    sim_append_line(p->notes, sizeof p->notes,
                    "wq %s %s tp%u N=%u K=%u: the weight-only kernel needs N %% 32 == 0 and K %% 128 == 0",
                    dtype_name(wdt), layer, tp, N, K);
    return;
  }
  for (int i = 0; i < p->ngemm; i++) {
    kern_plan_gemm *g = &p->gemm[i];
    if (g->fam == fam && g->wdtype == wdt && g->adtype == adt && g->n == N && g->k == K) {
      size_t n = strlen(g->layer);
      if (!strstr(g->layer, layer) && n + strlen(layer) + 2 < sizeof g->layer)
        snprintf(g->layer + n, sizeof g->layer - n, "+%s", layer);
      return; /* measured once */
    }
  }
  SIM_GROW(p->gemm, b->gcap, (size_t)p->ngemm + 1);
  kern_plan_gemm *g = &p->gemm[p->ngemm++];
  memset(g, 0, sizeof *g);
  snprintf(g->layer, sizeof g->layer, "%s", layer);
  g->tp = tp;
  g->fam = fam;
  g->wdtype = wdt;
  g->adtype = adt;
  g->n = N;
  g->k = K;
  axis_grid grid = (fam == KF_WQ ? WQ_M : GEMM_M)[p->quick];
  bool lm = strcmp(layer, "lm_head") == 0;
  for (size_t i = 0; i < grid.n; i++) {
    uint32_t M = grid.v[i];
    if (lm && M > LM_HEAD_MAX_M) break;
    double t = est_gemm_ns(b->c, fam, wdt, adt, M, N, K);
    if (t > p->max_call_ms * 1e6 && g->nm >= 2) break; /* keep at least two points */
    prof_work w;
    prof_gemm_work(wdt, adt, M, N, K, &w);
    kern_protocol pr;
    kern_protocol_for(b->o, t, w.bytes, b->rotate, &pr);
    g->m[g->nm++] = M;
    g->est_s += kern_protocol_wall_s(&pr, t);
    p->kernel_calls += 1 + (uint64_t)pr.calls * (pr.warmup + pr.reps);
    p->points++;
  }
}

static void add_attn(plan_build *b, kern_family fam, uint32_t tp, sim_dtype kv, uint32_t qh, uint32_t kvh,
                     uint32_t hd) {
  kern_plan *p = b->p;
  if (hd != 128 || qh % kvh || qh / kvh > 16) {
    sim_append_line(
        p->notes, sizeof p->notes,
        "%s tp%u: our attention kernels need head_dim 128 and at most 16 query heads per KV head (have %u, %u)",
        kern_family_name(fam), tp, hd, qh / kvh);
    return;
  }
  for (int i = 0; i < p->nattn; i++) {
    kern_plan_attn *a = &p->attn[i];
    if (a->fam == fam && a->kv_dtype == kv && a->q_heads == qh && a->kv_heads == kvh && a->head_dim == hd) return;
  }
  SIM_GROW(p->attn, b->acap, (size_t)p->nattn + 1);
  kern_plan_attn *a = &p->attn[p->nattn++];
  memset(a, 0, sizeof *a);
  a->fam = fam;
  a->tp = tp;
  a->kv_dtype = kv;
  a->q_heads = qh;
  a->kv_heads = kvh;
  a->head_dim = hd;
  bool dec = fam == KF_DECODE;
  axis_grid X = (dec ? DEC_B : PRE_C)[p->quick], Y = (dec ? DEC_L : PRE_X)[p->quick];
  const uint32_t *xs = X.v, *ys = Y.v;
  size_t nx = X.n, ny = Y.n;
  a->nx = (int)nx;
  a->ny = (int)ny;
  memcpy(a->x, xs, nx * sizeof *xs);
  memcpy(a->y, ys, ny * sizeof *ys);
  for (size_t i = 0; i < nx; i++)
    for (size_t j = 0; j < ny; j++) {
      double t;
      prof_work w;
      if (fam == KF_DECODE) {
        t = est_decode_ns(b->c, kv, xs[i], ys[j], qh, kvh, hd);
        prof_decode_work(kv, xs[i], ys[j], qh, kvh, hd, &w);
      } else {
        t = est_prefill_ns(b->c, xs[i], ys[j], qh, kvh, hd);
        prof_prefill_work(xs[i], ys[j], qh, kvh, hd, &w);
      }
      /* the smallest point is always measured: every row and column then
       * reaches a measured cell (the cap is monotone in both axes) */
      if (t > p->max_call_ms * 1e6 && (i || j)) {
        a->skip[i][j] = true;
        continue;
      }
      kern_protocol pr;
      kern_protocol_for(b->o, t, w.bytes, b->rotate, &pr);
      a->est_s += kern_protocol_wall_s(&pr, t);
      p->kernel_calls += 1 + (uint64_t)pr.calls * (pr.warmup + pr.reps);
      p->points++;
    }
}

int kern_plan_build(kern_plan *p, const kern_model_shape *m, const kern_plan_req *req, const kern_ceilings *c,
                    const kern_opts *o, sim_err *err) {
  memset(p, 0, sizeof *p);
  p->model = *m;
  p->quick = req->quick;
  p->max_call_ms = req->max_call_ms > 0 ? req->max_call_ms : (req->quick ? 4.0 : 25.0);
  if (!m->hidden || !m->intermediate || !m->q_heads || !m->kv_heads || !m->head_dim || !m->vocab)
    return sim_errf(err, SIM_EINPUT, "model %s: hidden_size, intermediate_size, heads, head_dim and vocab_size must "
                                     "all be positive",
                    m->name);
  if (req->ntp <= 0) return sim_errf(err, SIM_EINPUT, "--tp: no tensor-parallel degree given");
  for (int i = 0; i < req->ntp; i++) {
    uint32_t t = req->tps[i];
    if (t == 0 || m->q_heads % t)
      return sim_errf(err, SIM_EINPUT, "--tp %u: must divide num_attention_heads (%u) of model %s", t, m->q_heads,
                      m->name);
    if (m->kv_heads % t && t % m->kv_heads)
      return sim_errf(err, SIM_EINPUT,
                      "--tp %u: num_key_value_heads (%u) of model %s must be a multiple or a divisor of it", t,
                      m->kv_heads, m->name);
    if (m->intermediate % t)
      return sim_errf(err, SIM_EINPUT, "--tp %u: must divide intermediate_size (%u) of model %s", t, m->intermediate,
                      m->name);
  }
  plan_build b = {.p = p, .c = c, .o = o, .rotate = o->rotate_bytes > 0 ? o->rotate_bytes : 2.5 * 50e6};
  struct {
    bool on;
    kern_family fam;
    sim_dtype w, a;
  } kinds[] = {
      {req->gemm_bf16, KF_GEMM, DT_BF16, DT_BF16}, {req->gemm_fp8, KF_GEMM, DT_FP8, DT_FP8},
      {req->gemm_int8, KF_GEMM, DT_INT8, DT_INT8}, {req->wq_int4, KF_WQ, DT_INT4, DT_BF16},
      {req->wq_int8, KF_WQ, DT_INT8, DT_BF16},
  };
  for (size_t q = 0; q < SIM_ARRAY_LEN(kinds); q++) {
    if (!kinds[q].on) continue;
    for (int i = 0; i < req->ntp; i++) {
      model_shard s;
      shard_from_dims(&s, m->hidden, m->intermediate, m->q_heads, m->kv_heads, m->head_dim, m->vocab, req->tps[i]);
      for (int g = SG_QKV; g < SG_COUNT; g++)
        add_gemm(&b, shard_gemm_name((shard_gemm)g), s.tp, kinds[q].fam, kinds[q].w, kinds[q].a, s.n[g], s.k[g]);
    }
  }
  for (int i = 0; i < req->ntp; i++) {
    model_shard s;
    shard_from_dims(&s, m->hidden, m->intermediate, m->q_heads, m->kv_heads, m->head_dim, m->vocab, req->tps[i]);
    if (req->kv_bf16) add_attn(&b, KF_DECODE, s.tp, DT_BF16, s.q_heads, s.kv_heads, s.head_dim);
    if (req->kv_fp8) add_attn(&b, KF_DECODE, s.tp, DT_FP8, s.q_heads, s.kv_heads, s.head_dim);
    if (req->prefill) add_attn(&b, KF_PREFILL, s.tp, DT_BF16, s.q_heads, s.kv_heads, s.head_dim);
  }
  for (int i = 0; i < p->ngemm; i++) p->est_sweep_s += p->gemm[i].est_s;
  for (int i = 0; i < p->nattn; i++) p->est_sweep_s += p->attn[i].est_s;
  /* probes: 2 GiB copies, square GEMMs per dtype, launch loops, context and
   * cuBLASLt start-up; checks: CPU references dominate (a few seconds) */
  int ndt = (req->gemm_bf16 || req->wq_int4 || req->wq_int8) + req->gemm_fp8 + req->gemm_int8;
  if (!ndt) ndt = 1;
  p->est_probe_s = 2.0 + (req->quick ? 0.3 : 0.8) * ndt;
  p->est_check_s = 4.0;
  p->est_total_s = p->est_probe_s + p->est_check_s + p->est_sweep_s;
  return SIM_OK;
}

void kern_plan_free(kern_plan *p) {
  free(p->gemm);
  free(p->attn);
  p->gemm = NULL;
  p->attn = NULL;
  p->ngemm = p->nattn = 0;
}

void kern_plan_print(const kern_plan *p, FILE *f) {
  fprintf(f, "calibration plan for %s (%s grids, points estimated over %.1f ms per call are not measured)\n",
          p->model.name, p->quick ? "quick" : "full", p->max_call_ms);
  for (int i = 0; i < p->ngemm; i++) {
    const kern_plan_gemm *g = &p->gemm[i];
    fprintf(f, "  %-4s %-4s/%-4s tp%-2u %-22s N=%-6u K=%-6u M=%u..%u (%d points)  ~%.1f s\n",
            g->fam == KF_WQ ? "wq" : "gemm", dtype_name(g->wdtype), dtype_name(g->adtype), g->tp, g->layer, g->n, g->k,
            g->m[0], g->m[g->nm - 1], g->nm, g->est_s);
  }
  for (int i = 0; i < p->nattn; i++) {
    const kern_plan_attn *a = &p->attn[i];
    int n = 0;
    for (int x = 0; x < a->nx; x++)
      for (int y = 0; y < a->ny; y++) n += !a->skip[x][y];
    fprintf(f, "  %-7s kv %-4s tp%-2u heads %u/%u d%u  %s %u..%u x %s %u..%u (%d of %d points)  ~%.1f s\n",
            kern_family_name(a->fam), dtype_name(a->kv_dtype), a->tp, a->q_heads, a->kv_heads, a->head_dim,
            a->fam == KF_DECODE ? "batch" : "chunk", a->x[0], a->x[a->nx - 1], a->fam == KF_DECODE ? "kv_len" : "ctx",
            a->y[0], a->y[a->ny - 1], n, a->nx * a->ny, a->est_s);
  }
  if (p->notes[0]) fprintf(f, "left out:\n%s", p->notes);
  fprintf(f,
          "total: %d GEMM tables, %d attention tables, %llu timed points, ~%llu kernel calls\n"
          "estimated GPU time: %.0f s (probes %.0f s, checks %.0f s, sweep %.0f s)\n",
          p->ngemm, p->nattn, (unsigned long long)p->points, (unsigned long long)p->kernel_calls, p->est_total_s,
          p->est_probe_s, p->est_check_s, p->est_sweep_s);
}
