/* fit.c: fitting the engine profiles' global parameters to the training
 * subset of the published measurements, reproducibly (`servesim validate
 * --fit`).
 *
 * Training subset (vfit_mark_training): the AIConfigurator closed-loop points
 * whose concurrency is 4, 16 or 64 (every other rung of the 4..128 ladder).
 * Everything else is held out: the closed-loop points at concurrency 8, 32 and
 * 128, every offline (TensorRT-LLM 0.14) and static-batch (TensorRT-LLM 0.9)
 * point, and user points. Each engine is fitted on its own training points
 * (vllm: H100, trtllm: H200), one set of values per engine for every GPU, TP
 * and workload: no point gets its own constant.
 *
 * Objective (vfit_objective): for one engine, the mean over its training
 * points of |ln(predicted / measured)| for TTFT plus the same for TPOT. The
 * absolute log error is scale-free (a 2x miss costs the same at 50 ms and at
 * 50 s, so the saturation cliffs do not dominate) and robust like the median
 * the targets are stated in. A training point whose run fails adds ln(10).
 *
 * Procedure (vfit_engine): coordinate search in log space over the parameters
 * of validate.h's vparam, from the engine file's values. Round r uses the
 * multiplicative step s_r = 1.6^(1/2^r); within a round each parameter in turn
 * tries x * s_r and x / s_r (clamped to its bounds below) and keeps a change
 * that lowers the objective; the sweep repeats (at most 4 times) while
 * anything improved. Deterministic: fixed order, fixed steps, deterministic
 * simulations. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "validate/validate.h"

typedef struct pbound {
  double lo, hi;
} pbound;

/* Physically plausible ranges; the fit never leaves them. */
static const pbound BOUNDS[VP_COUNT] = {
    [VP_STEP_OVERHEAD_US] = {5, 5000},      [VP_PER_SEQ_OVERHEAD_US] = {0.1, 200},
    [VP_GEMM_COMPUTE_EFF] = {0.2, 1.0},     [VP_GEMM_MEMORY_EFF] = {0.2, 1.0},
    [VP_ATTN_PREFILL_EFF] = {0.1, 1.0},     [VP_ATTN_DECODE_EFF] = {0.1, 1.0},
    [VP_ALLREDUCE_LATENCY_US] = {0.5, 200}, [VP_RUNTIME_OVERHEAD_MIB] = {64, 32768}};

void vfit_mark_training(vset *s) {
  for (size_t i = 0; i < s->n; i++) {
    vpoint *p = &s->pts[i];
    p->train = p->src == VSRC_AIC && !p->skip[0] &&
               (p->concurrency == 4 || p->concurrency == 16 || p->concurrency == 64);
  }
}

double vfit_objective(vset *s, const voverrides *ov, const char *engine, sim_err *err) {
  if (vrun_all(s, ov, true, engine, err)) return NAN;
  double sum[2] = {0, 0};
  size_t n[2] = {0, 0};
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (!p->train || p->skip[0] || strcmp(p->engine, engine)) continue;
    for (int m = 0; m < 2; m++) {
      if (!isfinite(p->meas[m])) continue;
      n[m]++;
      if (p->fail[0] || !isfinite(p->pred[m]) || p->pred[m] <= 0) sum[m] += log(10.0);
      else sum[m] += fabs(log(p->pred[m] / p->meas[m]));
    }
  }
  double f = 0;
  for (int m = 0; m < 2; m++) f += n[m] ? sum[m] / n[m] : 0;
  return f;
}

static vengine_override *slot_for(voverrides *ov, const char *engine) {
  for (int i = 0; i < ov->n; i++)
    if (!strcmp(ov->e[i].engine, engine)) return &ov->e[i];
  SIM_ASSERT(ov->n < (int)SIM_ARRAY_LEN(ov->e));
  vengine_override *e = &ov->e[ov->n++];
  memset(e, 0, sizeof *e);
  snprintf(e->engine, sizeof e->engine, "%s", engine);
  for (int k = 0; k < VP_COUNT; k++) e->v[k] = NAN;
  return e;
}

int vfit_engine(vset *s, voverrides *ov, const char *engine, const vfit_opts *o, sim_err *err) {
  engine_cfg base;
  int rc = cfg_engine_load(&base, engine, err);
  if (rc) return rc;
  vparam_apply(ov, &base);
  vengine_override *slot = slot_for(ov, engine);
  double x[VP_COUNT];
  for (int k = 0; k < VP_COUNT; k++) {
    x[k] = vparam_get(&base, (vparam)k);
    if (x[k] < BOUNDS[k].lo) x[k] = BOUNDS[k].lo;
    if (x[k] > BOUNDS[k].hi) x[k] = BOUNDS[k].hi;
    slot->v[k] = x[k];
  }
  double f = vfit_objective(s, ov, engine, err);
  if (isnan(f)) return err->code ? err->code : SIM_EINTERNAL;
  int evals = 1;
  FILE *log_f = o && o->log ? o->log : NULL;
  if (log_f) fprintf(log_f, "fit %s: start objective %.5f\n", engine, f);
  int rounds = o && o->max_rounds > 0 ? o->max_rounds : 5;
  for (int r = 0; r < rounds; r++) {
    double step = pow(1.6, 1.0 / pow(2.0, r));
    for (int sweep = 0; sweep < 4; sweep++) {
      bool improved = false;
      for (int k = 0; k < VP_COUNT; k++) {
        for (int dir = 0; dir < 2; dir++) {
          double old = x[k], nv = dir == 0 ? old * step : old / step;
          if (nv < BOUNDS[k].lo) nv = BOUNDS[k].lo;
          if (nv > BOUNDS[k].hi) nv = BOUNDS[k].hi;
          if (nv == old) continue;
          slot->v[k] = nv;
          double fn = vfit_objective(s, ov, engine, err);
          evals++;
          if (isnan(fn)) return err->code ? err->code : SIM_EINTERNAL;
          if (fn < f - 1e-7) {
            f = fn;
            x[k] = nv;
            improved = true;
            if (log_f)
              fprintf(log_f, "fit %s: round %d step %.4f: %s = %.4g -> objective %.5f\n", engine, r, step,
                      vparam_name((vparam)k), nv, f);
            break;
          }
          slot->v[k] = old;
        }
      }
      if (!improved) break;
    }
  }
  for (int k = 0; k < VP_COUNT; k++) slot->v[k] = x[k];
  if (log_f) fprintf(log_f, "fit %s: final objective %.5f after %d evaluations\n", engine, f, evals);
  return SIM_OK;
}
