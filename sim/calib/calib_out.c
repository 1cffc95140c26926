/* calib_out.c: the results of a calibration run (calib_run.c): the
 * profile (format version 1, configs/profiles/README.md) written through the
 * one JSON writer (core/jsonw.h), times with 6 significant digits, and the
 * summary of achieved rates against the measured ceilings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib.h"
#include "core/outfmt.h"
#include "core/jsonw.h"

/* ---- writing the profile ------------------------------------------------------------------------- */

static void u32s(jw *j, const char *key, const uint32_t *v, int n) {
  jw_arr_flow(j, key, 0);
  for (int i = 0; i < n; i++) jw_u64(j, NULL, v[i]);
  jw_end(j);
}

static void header(jw *j, const calib_run *r, const kern_plan *plan, const kern_opts *ko, const kern_plan_req *req) {
  const kern_device_info *d = &r->dev;
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  jw_str(j, "format", "servesim-profile");
  jw_u64(j, "version", 1);
  jw_str(j, "gpu", r->gpu);
  jw_obj(j, "device");
  jw_str(j, "name", d->name);
  jw_num(j, "sm_count", d->sm_count);
  jw_u64(j, "mem_bytes", (uint64_t)d->mem_bytes);
  jw_str(j, "cc", cc);
  jw_num(j, "sm_clock_mhz", d->sm_clock_mhz);
  jw_num(j, "mem_clock_mhz", d->mem_clock_mhz);
  jw_u64(j, "l2_bytes", (uint64_t)d->l2_bytes);
  jw_num(j, "mem_bus_bits", d->mem_bus_bits);
  jw_num(j, "cuda_runtime", d->cuda_runtime_version);
  jw_num(j, "cuda_driver", d->cuda_driver_version);
  jw_end(j);
  jw_str(j, "date", r->date);
  jw_str(j, "model", plan->model.name);
  jw_str(j, "servesim_version", SERVESIM_VERSION);
  jw_str(j, "command", r->command);
  jw_obj(j, "settings");
  jw_bool(j, "quick", plan->quick);
  u32s(j, "tp", req->tps, req->ntp);
  jw_num(j, "max_call_ms", plan->max_call_ms);
  jw_u64(j, "reps", ko->reps);
  jw_u64(j, "warmup", ko->warmup);
  jw_u64(j, "replay_min_ns", (uint64_t)ko->replay_min_ns);
  jw_u64(j, "point_budget_ns", (uint64_t)ko->point_budget_ns);
  jw_u64(j, "rotate_bytes", (uint64_t)(ko->rotate_bytes > 0 ? ko->rotate_bytes : 2.5 * d->l2_bytes));
  jw_u64(j, "seed", ko->seed);
  jw_end(j);
  jw_obj(j, "units");
  jw_str(j, "ns", "median nanoseconds per call on one GPU (null: not measured)");
  jw_str(j, "copy_Bps", "device-to-device copy, bytes read + written per second");
  jw_str(j, "peak_flops", "FLOP/s of large square cuBLASLt GEMMs");
  jw_str(j, "launch_ns", "ns per empty kernel");
  jw_end(j);
  jw_obj(j, "probes");
  jw_num(j, "copy_Bps", r->copy_Bps);
  jw_obj(j, "peak_flops");
  static const sim_dtype pk[] = {DT_BF16, DT_FP8, DT_INT8};
  for (size_t i = 0; i < SIM_ARRAY_LEN(pk); i++)
    if (r->peak[pk[i]] > 0) jw_num(j, dtype_name(pk[i]), r->peak[pk[i]]);
  jw_end(j);
  jw_str(j, "peak_shape", plan->quick ? "8192^3" : "max of 8192^3 and 16384^3");
  jw_obj(j, "launch_ns");
  jw_num(j, "eager", r->launch_eager_ns);
  jw_num(j, "graph", r->launch_graph_ns);
  jw_end(j);
  jw_end(j);
  jw_arr(j, "checks");
  for (int i = 0; i < r->nchecks; i++) {
    const kern_check *c = &r->checks[i];
    jw_obj(j, NULL);
    jw_str(j, "name", c->name);
    jw_sig(j, "rel_err", c->rel_err, 3);
    jw_num(j, "tol", c->tol);
    jw_bool(j, "ok", c->ok);
    if (c->note[0]) jw_str(j, "note", c->note);
    jw_end(j);
  }
  jw_end(j);
}

static void gemm_tables(jw *j, const calib_run *r, const kern_plan *plan) {
  jw_arr(j, "gemm");
  for (int i = 0; i < plan->ngemm; i++) {
    const calib_gemm *g = &r->gemm[i];
    if (!g->done) continue;
    const kern_plan_gemm *p = g->plan;
    uint32_t m[KERN_PLAN_MAX_GRID];
    int n = 0;
    for (int q = 0; q < p->nm; q++)
      if (!isnan(g->ns[q])) m[n++] = p->m[q];
    jw_obj(j, NULL);
    jw_str(j, "wdtype", dtype_name(p->wdtype));
    jw_str(j, "adtype", dtype_name(p->adtype));
    jw_u64(j, "n", p->n);
    jw_u64(j, "k", p->k);
    jw_str(j, "layer", p->layer);
    jw_u64(j, "tp", p->tp);
    jw_str(j, "kernel", p->fam == KF_WQ ? "servesim wq_gemm (mma.sync, group 128)" : "cublasLt");
    u32s(j, "m", m, n);
    jw_arr_flow(j, "ns", 0);
    for (int q = 0; q < p->nm; q++)
      if (!isnan(g->ns[q])) jw_sig(j, NULL, g->ns[q], 6);
    jw_end(j);
    jw_end(j);
  }
  jw_end(j);
}

static void attn_tables(jw *j, const calib_run *r, const kern_plan *plan, bool prefill) {
  jw_arr(j, prefill ? "attn_prefill" : "attn_decode");
  for (int i = 0; i < plan->nattn; i++) {
    const calib_attn *c = &r->attn[i];
    const kern_plan_attn *p = c->plan;
    if (p->fam != (prefill ? KF_PREFILL : KF_DECODE) || !c->done) continue;
    jw_obj(j, NULL);
    jw_str(j, prefill ? "dtype" : "kv_dtype", dtype_name(p->kv_dtype));
    jw_u64(j, "q_heads", p->q_heads);
    jw_u64(j, "kv_heads", p->kv_heads);
    jw_u64(j, "head_dim", p->head_dim);
    jw_u64(j, "block_size", 16);
    jw_u64(j, "tp", p->tp);
    jw_str(j, "kernel", prefill ? "servesim attn_prefill (mma.sync)" : "servesim attn_decode (mma.sync)");
    u32s(j, prefill ? "chunk" : "batch", p->x, p->nx);
    u32s(j, prefill ? "ctx" : "kv_len", p->y, p->ny);
    jw_arr(j, "ns");
    for (int x = 0; x < p->nx; x++) {
      jw_arr_flow(j, NULL, 0);
      for (int y = 0; y < p->ny; y++) jw_sig(j, NULL, c->ns[x][y], 6);
      jw_end(j);
    }
    jw_end(j);
    jw_end(j);
  }
  jw_end(j);
}

typedef struct profile_args {
  const calib_run *r;
  const kern_plan *plan;
  const kern_opts *ko;
  const kern_plan_req *req;
} profile_args;

static int write_doc(const void *arg, FILE *f, sim_err *err) {
  const profile_args *a = arg;
  jw j;
  jw_begin(&j, f);
  header(&j, a->r, a->plan, a->ko, a->req);
  gemm_tables(&j, a->r, a->plan);
  attn_tables(&j, a->r, a->plan, false);
  attn_tables(&j, a->r, a->plan, true);
  jw_arr(&j, "notes");
  const char *notes[2] = {a->plan->notes, a->r->notes};
  for (int q = 0; q < 2; q++)
    for (const char *s = notes[q]; *s;) {
      const char *e = strchr(s, '\n');
      size_t len = e ? (size_t)(e - s) : strlen(s);
      char line[1200];
      snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), s);
      jw_str(&j, NULL, line);
      s += len + (e ? 1 : 0);
    }
  jw_end(&j);
  jw_bool(&j, "complete", a->r->complete);
  return jw_finish(&j, err);
}

int calib_write_profile(const char *path, const calib_run *r, const kern_plan *plan, const kern_opts *ko,
                        const kern_plan_req *req, sim_err *err) {
  profile_args a = {r, plan, ko, req};
  return outfmt_write_file(path, true, write_doc, &a, err);
}

/* ---- the summary: achieved rates against the measured ceilings ------------------------------------ */

/* The probes: copy bandwidth, launch overheads, the cuBLASLt peaks. */
static void summary_probes(FILE *f, const calib_run *r) {
  fprintf(f, "  %-56s %14s %16s %7s\n", "probe / kernel", "achieved", "ceiling", "ratio");
  fprintf(f, "  %-56s %11.2f TB/s %16s %7s\n", "copy bandwidth (d2d, read + write)", r->copy_Bps / 1e12, "-", "-");
  fprintf(f, "  %-56s %12.2f us %16s %7s\n", "launch overhead, eager launches", r->launch_eager_ns / 1e3, "-", "-");
  fprintf(f, "  %-56s %12.2f us %16s %7s\n", "launch overhead, inside a CUDA graph", r->launch_graph_ns / 1e3, "-",
          "-");
  static const sim_dtype pk[] = {DT_BF16, DT_FP8, DT_INT8};
  for (size_t i = 0; i < SIM_ARRAY_LEN(pk); i++)
    if (r->peak[pk[i]] > 0) {
      char name[80];
      snprintf(name, sizeof name, "peak GEMM %s (cuBLASLt, square)", dtype_name(pk[i]));
      fprintf(f, "  %-56s %8.0f TFLOP/s %16s %7s\n", name, r->peak[pk[i]] / 1e12, "-", "-");
    }
}

/* GEMM: the largest measured point of each cuBLASLt dtype vs its peak. */
static void summary_gemm(FILE *f, const calib_run *r, const kern_plan *plan) {
  static const sim_dtype gd[] = {DT_BF16, DT_FP8, DT_INT8};
  for (size_t q = 0; q < SIM_ARRAY_LEN(gd); q++) {
    double best_f = 0, best_ns = 0;
    const kern_plan_gemm *bp = NULL;
    uint32_t bm = 0;
    for (int i = 0; i < plan->ngemm; i++) {
      const kern_plan_gemm *g = &plan->gemm[i];
      if (g->fam != KF_GEMM || g->wdtype != gd[q] || !r->gemm[i].done) continue;
      for (int j = 0; j < g->nm; j++) {
        double fl = 2.0 * g->m[j] * g->n * g->k;
        if (!isnan(r->gemm[i].ns[j]) && fl > best_f) best_f = fl, best_ns = r->gemm[i].ns[j], bp = g, bm = g->m[j];
      }
    }
    if (!bp || r->peak[gd[q]] <= 0) continue;
    char name[96], ceil_s[32];
    snprintf(name, sizeof name, "GEMM %s largest: M=%u N=%u K=%u", dtype_name(gd[q]), bm, bp->n, bp->k);
    snprintf(ceil_s, sizeof ceil_s, "%.0f TFLOP/s", r->peak[gd[q]] / 1e12);
    double ach = best_f / best_ns * 1e9;
    fprintf(f, "  %-56s %8.0f TFLOP/s %16s %6.0f%%\n", name, ach / 1e12, ceil_s, 100 * ach / r->peak[gd[q]]);
  }
}

/* Decode attention: the point moving the most bytes vs copy bandwidth. */
static void summary_decode(FILE *f, const calib_run *r, const kern_plan *plan) {
  for (int pass = 0; pass < 2; pass++) {
    sim_dtype kv = pass ? DT_FP8 : DT_BF16;
    double best_b = 0, best_ns = 0;
    const kern_plan_attn *bp = NULL;
    int bi = 0, bj = 0;
    for (int i = 0; i < plan->nattn; i++) {
      const kern_plan_attn *a = &plan->attn[i];
      if (a->fam != KF_DECODE || a->kv_dtype != kv || !r->attn[i].done) continue;
      for (int x = 0; x < a->nx; x++)
        for (int y = 0; y < a->ny; y++) {
          prof_work w;
          prof_decode_work(kv, a->x[x], a->y[y], a->q_heads, a->kv_heads, a->head_dim, &w);
          if (!isnan(r->attn[i].ns[x][y]) && w.bytes > best_b)
            best_b = w.bytes, best_ns = r->attn[i].ns[x][y], bp = a, bi = x, bj = y;
        }
    }
    if (!bp) continue;
    char name[96], ceil_s[32];
    snprintf(name, sizeof name, "decode attn %s KV, heads %u/%u, batch %u x kv_len %u", dtype_name(kv), bp->q_heads,
             bp->kv_heads, bp->x[bi], bp->y[bj]);
    snprintf(ceil_s, sizeof ceil_s, "%.2f TB/s", r->copy_Bps / 1e12);
    double ach = best_b / best_ns * 1e9;
    fprintf(f, "  %-56s %11.2f TB/s %16s %6.0f%%\n", name, ach / 1e12, ceil_s, 100 * ach / r->copy_Bps);
  }
}

/* Prefill: the largest point vs the bf16 GEMM peak. */
static void summary_prefill(FILE *f, const calib_run *r, const kern_plan *plan) {
  double best_f = 0, best_ns = 0;
  const kern_plan_attn *bp = NULL;
  int bi = 0, bj = 0;
  for (int i = 0; i < plan->nattn; i++) {
    const kern_plan_attn *a = &plan->attn[i];
    if (a->fam != KF_PREFILL || !r->attn[i].done) continue;
    for (int x = 0; x < a->nx; x++)
      for (int y = 0; y < a->ny; y++) {
        prof_work w;
        prof_prefill_work(a->x[x], a->y[y], a->q_heads, a->kv_heads, a->head_dim, &w);
        if (!isnan(r->attn[i].ns[x][y]) && w.flops > best_f)
          best_f = w.flops, best_ns = r->attn[i].ns[x][y], bp = a, bi = x, bj = y;
      }
  }
  if (bp && r->peak[DT_BF16] > 0) {
    char name[96], ceil_s[32];
    snprintf(name, sizeof name, "prefill attn bf16, heads %u/%u, chunk %u ctx %u", bp->q_heads, bp->kv_heads,
             bp->x[bi], bp->y[bj]);
    snprintf(ceil_s, sizeof ceil_s, "%.0f TFLOP/s", r->peak[DT_BF16] / 1e12);
    double ach = best_f / best_ns * 1e9;
    fprintf(f, "  %-56s %8.0f TFLOP/s %16s %6.0f%%\n", name, ach / 1e12, ceil_s, 100 * ach / r->peak[DT_BF16]);
  }
}

/* Weight-only at M = 1: packed weight bytes per second vs copy bandwidth, largest shape. */
static void summary_wq(FILE *f, const calib_run *r, const kern_plan *plan) {
  static const sim_dtype wd[] = {DT_INT4, DT_INT8};
  for (size_t q = 0; q < SIM_ARRAY_LEN(wd); q++) {
    double best_w = 0, best_ns = 0;
    const kern_plan_gemm *bp = NULL;
    for (int i = 0; i < plan->ngemm; i++) {
      const kern_plan_gemm *g = &plan->gemm[i];
      if (g->fam != KF_WQ || g->wdtype != wd[q] || !r->gemm[i].done || g->m[0] != 1 || isnan(r->gemm[i].ns[0]))
        continue;
      double wb = kern_wq_packed_bytes(wd[q] == DT_INT4 ? 4 : 8, g->n, g->k);
      if (wb > best_w) best_w = wb, best_ns = r->gemm[i].ns[0], bp = g;
    }
    if (!bp) continue;
    char name[96], ceil_s[32];
    snprintf(name, sizeof name, "%s GEMV M=1 N=%u K=%u (packed weight bytes)", dtype_name(wd[q]), bp->n, bp->k);
    snprintf(ceil_s, sizeof ceil_s, "%.2f TB/s", r->copy_Bps / 1e12);
    double ach = best_w / best_ns * 1e9;
    fprintf(f, "  %-56s %11.2f TB/s %16s %6.0f%%\n", name, ach / 1e12, ceil_s, 100 * ach / r->copy_Bps);
  }
}

void calib_summary(FILE *f, const calib_run *r, const kern_plan *plan, const prof *p, double wall_s) {
  fprintf(f, "\ncalibration summary: %s on %s (%s), %s\n", plan->model.name, r->dev.name, r->gpu, r->date);
  summary_probes(f, r);
  summary_gemm(f, r, plan);
  summary_decode(f, r, plan);
  summary_prefill(f, r, plan);
  summary_wq(f, r, plan);
  if (p) calib_print_loo(p, f);
  fprintf(f, "checks: %d run, %d failed families/errors; profile %s; %.0f s\n", r->nchecks, r->failures,
          r->complete ? "complete" : "INCOMPLETE (see notes)", wall_s);
}
