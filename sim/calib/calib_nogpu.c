/* calib_nogpu.c: the parts of calibration that need no GPU (calib.h): the
 * plan and its estimated time (dry run), a SYNTHETIC profile from a smooth
 * roofline model (to test the profile pipeline end to end), and the
 * leave-one-out report of a profile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib.h"
#include "hw/prof.h"
#include "kern.h"

/* ---- leave-one-out ---------------------------------------------------------------------------- */

int calib_loo(const char *path, sim_err *err) {
  prof *p;
  int rc = prof_load(&p, path, err);
  if (rc) return rc;
  printf("profile %s (gpu %s)\n", path, prof_gpu_name(p));
  calib_print_loo(p, stdout);
  prof_free(p);
  return 0;
}

/* The plan without a GPU (--dry-run, --synthetic): default options in *ko,
 * H200 ceilings in *c. */
static int h200_plan(const calib_opts *o, const kern_plan_req *req, kern_opts *ko, kern_ceilings *c, kern_plan *plan,
                     sim_err *err) {
  kern_model_shape shape;
  int rc = calib_model_shape(o->model, &shape, err);
  if (rc) return rc;
  kern_opts_default(ko, o->quick);
  kern_ceilings_h200(c);
  return kern_plan_build(plan, &shape, req, c, ko, err);
}

int calib_dry_run(const calib_opts *o, const kern_plan_req *req, sim_err *err) {
  kern_opts ko;
  kern_ceilings c;
  kern_plan plan;
  int rc = h200_plan(o, req, &ko, &c, &plan, err);
  if (rc) return rc;
  printf("dry run: no GPU used; times estimated from H200 ceilings (copy %.1f TB/s, bf16 %.0f TFLOP/s, fp8 %.0f "
         "TFLOP/s); this build %s CUDA\n",
         c.copy_Bps / 1e12, c.peak_flops[DT_BF16] / 1e12, c.peak_flops[DT_FP8] / 1e12,
         kern_built_with_cuda() ? "has" : "does not have");
  kern_plan_print(&plan, stdout);
  kern_plan_free(&plan);
  return 0;
}

/* --synthetic: the plan's grids filled from a smooth model instead of a GPU.
 * Exercises the writer, the loader and the leave-one-out path end to end;
 * the profile says SYNTHETIC in its gpu name (unless --gpu-name) and notes. */
static double synth_ns(const calib_run *r, const prof_work *w, double eff_c, double eff_m, double fixed_ns) {
  double tc = w->flops / (r->peak[w->compute] * eff_c) * 1e9, tm = w->bytes / (r->copy_Bps * eff_m) * 1e9;
  return sqrt(tc * tc + tm * tm) + fixed_ns;
}

int calib_synthetic(const calib_opts *o, const kern_plan_req *request, sim_err *err) {
  const kern_plan_req req = *request;
  kern_opts ko;
  kern_ceilings c;
  kern_plan plan;
  int rc = h200_plan(o, &req, &ko, &c, &plan, err);
  if (rc) return rc;
  static calib_run r;
  memset(&r, 0, sizeof r);
  snprintf(r.dev.name, sizeof r.dev.name, "SYNTHETIC (no device: smooth roofline model with H200 ceilings)");
  r.dev.l2_bytes = 50e6;
  snprintf(r.gpu, sizeof r.gpu, "%s", o->gpu_name ? o->gpu_name : "synthetic");
  snprintf(r.command, sizeof r.command, "%s", o->command ? o->command : "");
  snprintf(r.date, sizeof r.date, "%s", o->date ? o->date : "");
  r.copy_Bps = c.copy_Bps;
  r.peak[DT_BF16] = c.peak_flops[DT_BF16];
  if (req.gemm_fp8) r.peak[DT_FP8] = c.peak_flops[DT_FP8];
  if (req.gemm_int8) r.peak[DT_INT8] = c.peak_flops[DT_INT8];
  r.launch_eager_ns = 4000;
  r.launch_graph_ns = c.launch_ns;
  r.complete = true;
  sim_append_line(r.notes, sizeof r.notes,
                  "SYNTHETIC profile: times come from a smooth roofline model, not from a GPU (calibrate --synthetic)");
  r.gemm = sim_calloc((size_t)plan.ngemm + 1, sizeof *r.gemm);
  r.attn = sim_calloc((size_t)plan.nattn + 1, sizeof *r.attn);
  for (int i = 0; i < plan.ngemm; i++) {
    const kern_plan_gemm *g = &plan.gemm[i];
    r.gemm[i].plan = g;
    r.gemm[i].done = true;
    for (int j = 0; j < g->nm; j++) {
      prof_work w;
      prof_gemm_work(g->wdtype, g->adtype, g->m[j], g->n, g->k, &w);
      r.gemm[i].ns[j] = synth_ns(&r, &w, g->fam == KF_WQ ? 0.35 : 0.85, g->fam == KF_WQ ? 0.7 : 0.8, 4000);
    }
  }
  for (int i = 0; i < plan.nattn; i++) {
    const kern_plan_attn *a = &plan.attn[i];
    r.attn[i].plan = a;
    r.attn[i].done = true;
    for (int x = 0; x < a->nx; x++)
      for (int y = 0; y < a->ny; y++) {
        prof_work w;
        if (a->fam == KF_DECODE) prof_decode_work(a->kv_dtype, a->x[x], a->y[y], a->q_heads, a->kv_heads, a->head_dim, &w);
        else prof_prefill_work(a->x[x], a->y[y], a->q_heads, a->kv_heads, a->head_dim, &w);
        r.attn[i].ns[x][y] = a->skip[x][y] ? NAN
                             : a->fam == KF_DECODE ? synth_ns(&r, &w, 0.3, 0.75, 6000)
                                                   : synth_ns(&r, &w, 0.4, 0.5, 8000);
      }
  }
  rc = calib_write_profile(o->out, &r, &plan, &ko, &req, err);
  prof *p = NULL;
  if (!rc) rc = prof_load(&p, o->out, err);
  if (p) {
    printf("wrote SYNTHETIC profile %s: %d gemm, %d weight-only, %d decode, %d prefill tables\n", o->out,
           prof_table_count(p, PK_GEMM), prof_table_count(p, PK_GEMM_WQ), prof_table_count(p, PK_DECODE),
           prof_table_count(p, PK_PREFILL));
    calib_print_loo(p, stdout);
  }
  prof_free(p);
  free(r.gemm);
  free(r.attn);
  kern_plan_free(&plan);
  return rc;
}
