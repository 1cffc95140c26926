/* calib_run.c: a calibration run on the local GPU (calib.h): probes (copy
 * bandwidth, launch overhead), the correctness check of every kernel family
 * the plan needs (a family whose check fails is not timed), GEMM peak rates,
 * then the sweep (kern_plan.c) table by table in priority order; then the
 * profile is written (also after a CUDA failure or when the time budget runs
 * out: what was measured is kept, "complete": false), read back through
 * prof_load (so a written profile always loads) and summarized: achieved
 * rates against the measured ceilings and the leave-one-out error.
 * The wall clock is read here only for the time budget and the summary. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/calib.h"
#include "config/cfg.h"
#include "hw/prof.h"
#include "kern.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "NVIDIA H200" -> "h200": the name of the gpu config (configs/gpus/) the
 * profile belongs to; --gpu-name overrides. Unknown devices get their name
 * lower-cased with dashes ("nvidia-rtx-6000-ada" style, "NVIDIA " dropped). */
void calib_map_gpu_name(const char *dev, char *out, size_t n) {
  char low[256];
  size_t i = 0;
  for (; dev[i] && i + 1 < sizeof low; i++) low[i] = (char)(dev[i] >= 'A' && dev[i] <= 'Z' ? dev[i] + 32 : dev[i]);
  low[i] = 0;
  bool pcie = strstr(low, "pcie") != NULL;
  const char *m = NULL;
  if (strstr(low, "gh200")) m = "gh200";
  else if (strstr(low, "h200")) m = "h200";
  else if (strstr(low, "h100")) m = pcie ? "h100-pcie" : "h100-sxm";
  else if (strstr(low, "h800")) m = "h800";
  else if (strstr(low, "h20")) m = "h20";
  else if (strstr(low, "b200")) m = "b200";
  else if (strstr(low, "a100")) m = strstr(low, "40gb") ? (pcie ? "a100-pcie-40gb" : "a100-sxm-40gb")
                                                         : (pcie ? "a100-pcie-80gb" : "a100-sxm-80gb");
  else if (strstr(low, "l40s")) m = "l40s";
  if (m) {
    snprintf(out, n, "%s", m);
    return;
  }
  const char *s = strncmp(low, "nvidia ", 7) ? low : low + 7;
  size_t j = 0;
  for (; *s && j + 1 < n; s++) out[j++] = (char)((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ? *s : '-');
  out[j] = 0;
}

/* What the profile records of how it was made. */
static void provenance(const calib_opts *o, calib_run *r) {
  snprintf(r->command, sizeof r->command, "%s", o->command ? o->command : "");
  snprintf(r->date, sizeof r->date, "%s", o->date ? o->date : "");
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Runs one family/dtype check; prints each result. Returns SIM_EINTERNAL when
 * CUDA failed (the context may be dead), else SIM_OK (look at r->fam_ok). */
static int run_check(kern_ctx *k, calib_run *r, kern_family f, sim_dtype dt, FILE *log) {
  char why[400];
  if (!kern_supported(k, f, dt, why, sizeof why)) {
    fprintf(log, "family-result %s %s unsupported (%s)\n", kern_family_name(f), dtype_name(dt), why);
    return SIM_OK;
  }
  kern_check *c = r->checks + r->nchecks;
  int n = 0;
  sim_err err = {0};
  double t0 = now_s();
  int rc = kern_check_family(k, f, dt, c, MAX_CHECKS - r->nchecks, &n, &err);
  for (int i = 0; i < n; i++)
    fprintf(log, "%s %-52s rel_err %-9.3g (tol %.0e)%s%s\n", c[i].ok ? "PASS" : "FAIL", c[i].name, c[i].rel_err,
            c[i].tol, c[i].note[0] ? "  " : "", c[i].note);
  r->nchecks += n;
  bool ok = rc == SIM_OK && n > 0;
  for (int i = 0; i < n; i++) ok = ok && c[i].ok;
  r->fam_ok[f][dt] = ok;
  if (rc) {
    fprintf(log, "ERROR %s %s check: %s\n", kern_family_name(f), dtype_name(dt), err.msg);
    sim_append_line(r->notes, sizeof r->notes, "%s %s check: %s", kern_family_name(f), dtype_name(dt), err.msg);
  }
  fprintf(log, "family-result %s %s %s (%.1f s)\n", kern_family_name(f), dtype_name(dt),
          rc ? "error" : ok ? "ok" : "fail", now_s() - t0);
  fflush(log);
  if (!ok) r->failures++;
  return rc ? SIM_EINTERNAL : SIM_OK;
}

int calib_check(const calib_opts *o, const bool *skip, sim_err *err) {
  kern_opts ko;
  kern_opts_default(&ko, o->quick);
  if (o->seed) ko.seed = o->seed;
  kern_ctx *k;
  int rc = kern_open(&k, &ko, err);
  if (rc) return rc;
  const kern_device_info *d = kern_info(k);
  printf("device: %s, %d SMs, compute capability %d.%d, %.1f GiB, CUDA runtime %d, driver %d\n", d->name, d->sm_count,
         d->cc_major, d->cc_minor, d->mem_bytes / (1u << 30), d->cuda_runtime_version, d->cuda_driver_version);
  static calib_run r;
  memset(&r, 0, sizeof r);
  static const struct {
    kern_family f;
    sim_dtype dt;
  } all[] = {{KF_GEMM, DT_BF16},  {KF_GEMM, DT_FP8},   {KF_GEMM, DT_INT8},   {KF_WQ, DT_INT4},
             {KF_WQ, DT_INT8},    {KF_DECODE, DT_BF16}, {KF_DECODE, DT_FP8}, {KF_PREFILL, DT_BF16}};
  int dead = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(all); i++) {
    if (skip[all[i].f]) {
      printf("family-result %s %s skipped (--skip)\n", kern_family_name(all[i].f), dtype_name(all[i].dt));
      continue;
    }
    if (!kern_usable(k)) {
      printf("family-result %s %s not-run (CUDA context unusable after an earlier error)\n",
             kern_family_name(all[i].f), dtype_name(all[i].dt));
      dead = 1;
      continue;
    }
    run_check(k, &r, all[i].f, all[i].dt, stdout);
  }
  kern_close(k);
  printf("%s: %d check(s) failed\n", r.failures || dead ? "FAILED" : "all checks passed", r.failures);
  return r.failures || dead ? SIM_EINTERNAL : 0;
}

int calib_model_shape(const char *name, kern_model_shape *s, sim_err *err) {
  model_cfg m;
  int rc = cfg_model_load(&m, name, err);
  if (rc) return rc;
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", m.name);
  s->hidden = m.hidden;
  s->intermediate = m.intermediate;
  s->q_heads = m.q_heads;
  s->kv_heads = m.kv_heads;
  s->head_dim = m.head_dim;
  s->vocab = m.vocab;
  return SIM_OK;
}

/* ---- the sweep ---------------------------------------------------------------------------------- */

/* Measurement order under a time budget: the tables the cost model needs most first. */
static int priority(kern_family fam, sim_dtype w, sim_dtype a) {
  if (fam == KF_GEMM) return w == DT_BF16 ? 0 : w == DT_FP8 ? 3 : 7;
  if (fam == KF_DECODE) return a == DT_BF16 ? 1 : 4;
  if (fam == KF_PREFILL) return 2;
  return w == DT_INT4 ? 5 : 6; /* KF_WQ */
}

typedef struct sweep_item {
  int prio;
  int idx;     /* into plan gemm[] or attn[] */
  bool attn;
} sweep_item;

static int cmp_item(const void *a, const void *b) {
  const sweep_item *x = a, *y = b;
  if (x->prio != y->prio) return x->prio - y->prio;
  if (x->attn != y->attn) return x->attn - y->attn;
  return x->idx - y->idx;
}

static double gemm_sol_ns(const calib_run *r, sim_dtype w, sim_dtype a, uint32_t M, uint32_t N, uint32_t K) {
  prof_work wk;
  prof_gemm_work(w, a, M, N, K, &wk);
  double tc = r->peak[wk.compute] > 0 ? wk.flops / r->peak[wk.compute] : 0, tm = wk.bytes / r->copy_Bps;
  return (tc > tm ? tc : tm) * 1e9;
}

static void sweep_gemm(kern_ctx *k, calib_run *r, calib_gemm *g) {
  const kern_plan_gemm *p = g->plan;
  double t0 = now_s();
  int ok = 0;
  for (int i = 0; i < p->nm; i++) {
    g->ns[i] = NAN;
    if (!kern_usable(k)) break;
    kern_time t;
    sim_err err = {0};
    int rc = p->fam == KF_WQ ? kern_time_wq(k, p->wdtype, p->m[i], p->n, p->k, &t, &err)
                             : kern_time_gemm(k, p->wdtype, p->m[i], p->n, p->k, &t, &err);
    if (rc) {
      fprintf(stderr, "  %s %s N=%u K=%u M=%u: %s\n", p->fam == KF_WQ ? "wq" : "gemm", dtype_name(p->wdtype), p->n,
              p->k, p->m[i], err.msg);
      sim_append_line(r->notes, sizeof r->notes, "%s %s N=%u K=%u M=%u not measured: %s",
                      p->fam == KF_WQ ? "wq" : "gemm", dtype_name(p->wdtype), p->n, p->k, p->m[i], err.msg);
      if (rc != SIM_EINPUT) r->failures++;
      continue;
    }
    g->ns[i] = t.ns;
    ok++;
    double sol = gemm_sol_ns(r, p->wdtype, p->adtype, p->m[i], p->n, p->k);
    fprintf(stderr, "  %s %s/%s tp%u %s N=%u K=%u M=%u: %.2f us (min %.2f max %.2f, %u calls x %u reps, %u sets%s), "
                    "eff %.2f\n",
            p->fam == KF_WQ ? "wq" : "gemm", dtype_name(p->wdtype), dtype_name(p->adtype), p->tp, p->layer, p->n, p->k,
            p->m[i], t.ns / 1e3, t.min_ns / 1e3, t.max_ns / 1e3, t.calls, t.reps, t.sets, t.graph ? "" : ", no graph",
            sol / t.ns);
  }
  g->done = ok > 0;
  fprintf(stderr, "table %s %s/%s tp%u %s N=%u K=%u: %d of %d points, %.1f s\n", p->fam == KF_WQ ? "wq" : "gemm",
          dtype_name(p->wdtype), dtype_name(p->adtype), p->tp, p->layer, p->n, p->k, ok, p->nm, now_s() - t0);
}

static void sweep_attn(kern_ctx *k, calib_run *r, calib_attn *c) {
  const kern_plan_attn *p = c->plan;
  double t0 = now_s();
  int ok = 0, want = 0;
  for (int i = 0; i < p->nx; i++)
    for (int j = 0; j < p->ny; j++) {
      c->ns[i][j] = NAN;
      if (p->skip[i][j] || !kern_usable(k)) continue;
      want++;
      kern_time t;
      sim_err err = {0};
      int rc = p->fam == KF_DECODE
                   ? kern_time_decode(k, p->kv_dtype, p->x[i], p->y[j], p->q_heads, p->kv_heads, p->head_dim, &t, &err)
                   : kern_time_prefill(k, p->x[i], p->y[j], p->q_heads, p->kv_heads, p->head_dim, &t, &err);
      if (rc) {
        fprintf(stderr, "  %s %s %u x %u: %s\n", kern_family_name(p->fam), dtype_name(p->kv_dtype), p->x[i], p->y[j],
                err.msg);
        sim_append_line(r->notes, sizeof r->notes, "%s %s heads %u/%u %u x %u not measured: %s",
                        kern_family_name(p->fam), dtype_name(p->kv_dtype), p->q_heads, p->kv_heads, p->x[i], p->y[j],
                        err.msg);
        if (rc != SIM_EINPUT) r->failures++;
        continue;
      }
      c->ns[i][j] = t.ns;
      ok++;
      prof_work w;
      if (p->fam == KF_DECODE) prof_decode_work(p->kv_dtype, p->x[i], p->y[j], p->q_heads, p->kv_heads, p->head_dim, &w);
      else prof_prefill_work(p->x[i], p->y[j], p->q_heads, p->kv_heads, p->head_dim, &w);
      fprintf(stderr, "  %s %s tp%u heads %u/%u %s=%u %s=%u: %.2f us (min %.2f max %.2f, %u calls x %u reps%s), "
                      "%.0f GB/s, %.1f TFLOP/s\n",
              kern_family_name(p->fam), dtype_name(p->kv_dtype), p->tp, p->q_heads, p->kv_heads,
              p->fam == KF_DECODE ? "batch" : "chunk", p->x[i], p->fam == KF_DECODE ? "kv_len" : "ctx", p->y[j],
              t.ns / 1e3, t.min_ns / 1e3, t.max_ns / 1e3, t.calls, t.reps, t.graph ? "" : ", no graph",
              w.bytes / t.ns, w.flops / t.ns / 1e3);
    }
  /* a usable table needs a measured first cell of each row or column chain: the
   * smallest point (0, 0) is always in the plan; without it drop the table */
  c->done = ok > 0 && !isnan(c->ns[0][0]);
  fprintf(stderr, "table %s %s tp%u heads %u/%u: %d of %d points, %.1f s\n", kern_family_name(p->fam),
          dtype_name(p->kv_dtype), p->tp, p->q_heads, p->kv_heads, ok, want, now_s() - t0);
}

/* ---- the calibration run ---------------------------------------------------------------------------- */

/* The GEMM peaks of the dtypes whose checks passed: a failed probe drops that
 * dtype's tables (without its peak a table has no speed of light: the profile
 * would not load). */
static void probe_peaks(kern_ctx *k, const calib_opts *o, calib_run *r, const sim_dtype *pk, size_t npk) {
  sim_err err = {0};
  for (size_t i = 0; i < npk && kern_usable(k); i++) {
    if (!r->fam_ok[KF_GEMM][pk[i]]) continue;
    if (kern_probe_gemm_peak(k, pk[i], o->quick, &r->peak[pk[i]], &err)) {
      /* without its peak a table has no speed of light: the profile would not load */
      fprintf(stderr, "probe: peak %s GEMM: %s\n", dtype_name(pk[i]), err.msg);
      sim_append_line(r->notes, sizeof r->notes, "peak %s GEMM probe failed, its GEMM tables are left out: %s",
                      dtype_name(pk[i]), err.msg);
      r->peak[pk[i]] = 0;
      r->fam_ok[KF_GEMM][pk[i]] = false;
      r->failures++;
    } else {
      fprintf(stderr, "probe: peak %s GEMM %.0f TFLOP/s\n", dtype_name(pk[i]), r->peak[pk[i]] / 1e12);
    }
  }
}

/* Times every table of the plan, most useful first, until the CUDA context
 * fails or --time-budget runs out (both noted, the profile then incomplete). */
static void run_sweep(kern_ctx *k, const calib_opts *o, calib_run *r, const kern_plan *plan, double t_start) {
  r->gemm = sim_calloc((size_t)plan->ngemm + 1, sizeof *r->gemm);
  r->attn = sim_calloc((size_t)plan->nattn + 1, sizeof *r->attn);
  sweep_item *items = sim_calloc((size_t)(plan->ngemm + plan->nattn) + 1, sizeof *items);
  int ni = 0;
  for (int i = 0; i < plan->ngemm; i++) {
    r->gemm[i].plan = &plan->gemm[i];
    for (int j = 0; j < KERN_PLAN_MAX_GRID; j++) r->gemm[i].ns[j] = NAN;
    items[ni++] = (sweep_item){priority(plan->gemm[i].fam, plan->gemm[i].wdtype, plan->gemm[i].adtype), i, false};
  }
  for (int i = 0; i < plan->nattn; i++) {
    r->attn[i].plan = &plan->attn[i];
    for (int x = 0; x < KERN_PLAN_MAX_GRID; x++)
      for (int y = 0; y < KERN_PLAN_MAX_GRID; y++) r->attn[i].ns[x][y] = NAN;
    items[ni++] = (sweep_item){priority(plan->attn[i].fam, DT_BF16, plan->attn[i].kv_dtype), i, true};
  }
  qsort(items, (size_t)ni, sizeof *items, cmp_item);
  for (int q = 0; q < ni; q++) {
    const sweep_item *it = &items[q];
    kern_family fam = it->attn ? plan->attn[it->idx].fam : plan->gemm[it->idx].fam;
    sim_dtype dt = it->attn ? plan->attn[it->idx].kv_dtype : plan->gemm[it->idx].wdtype;
    if (!r->fam_ok[fam][dt]) continue; /* its check failed or it is unsupported here (noted at the check) */
    if (!kern_usable(k)) {
      r->complete = false;
      sim_append_line(r->notes, sizeof r->notes, "sweep stopped: the CUDA context is unusable after an error");
      break;
    }
    if (o->time_budget_s > 0 && now_s() - t_start > o->time_budget_s) {
      r->complete = false;
      sim_append_line(r->notes, sizeof r->notes, "sweep stopped after --time-budget %.0f s: %d of %d tables measured",
                      o->time_budget_s, q, ni);
      break;
    }
    if (it->attn) sweep_attn(k, r, &r->attn[it->idx]);
    else sweep_gemm(k, r, &r->gemm[it->idx]);
  }
  free(items);
}

/* The profile written and loaded back, the summary printed (and written to --summary); the exit code. */
static int write_results(const calib_opts *o, const calib_run *r, const kern_plan *plan, const kern_opts *ko,
                         const kern_plan_req *req, double t_start) {
  int exit_code = r->failures ? SIM_EINTERNAL : 0, rc;
  sim_err werr = {0, ""};
  if ((rc = calib_write_profile(o->out, r, plan, ko, req, &werr))) {
    fprintf(stderr, "calibrate: %s\n", werr.msg);
    exit_code = rc;
  } else {
    fprintf(stderr, "wrote %s\n", o->out);
  }
  prof *p = NULL;
  if (!rc && prof_load(&p, o->out, &werr)) {
    fprintf(stderr, "calibrate: the written profile does not load back: %s\n", werr.msg);
    exit_code = SIM_EINTERNAL;
  }
  calib_summary(stdout, r, plan, p, now_s() - t_start);
  if (o->summary) {
    FILE *sf = fopen(o->summary, "w");
    if (sf) {
      calib_summary(sf, r, plan, p, now_s() - t_start);
      fclose(sf);
    } else {
      fprintf(stderr, "calibrate: cannot write --summary %s: %s\n", o->summary, strerror(errno));
    }
  }
  prof_free(p);
  return exit_code;
}

/* The plan's ceilings: H200's, with what this GPU measured (copy bandwidth, peaks, launch in a graph). */
static void measured_ceilings(kern_ceilings *c, const calib_run *r, const sim_dtype *pk, size_t npk) {
  kern_ceilings_h200(c);
  c->copy_Bps = r->copy_Bps;
  for (size_t i = 0; i < npk; i++)
    if (r->peak[pk[i]] > 0) c->peak_flops[pk[i]] = r->peak[pk[i]];
  c->launch_ns = r->launch_graph_ns;
}

int calib_measure(const calib_opts *o, const kern_plan_req *request, sim_err *err) {
  double t_start = now_s();
  const kern_plan_req req = *request;
  kern_opts ko;
  kern_opts_default(&ko, o->quick);
  if (o->seed) ko.seed = o->seed;
  kern_ctx *k;
  int rc = kern_open(&k, &ko, err);
  if (rc) return rc; /* no CUDA / no GPU: exit 2 with the reason */
  static calib_run r;
  memset(&r, 0, sizeof r);
  r.dev = *kern_info(k);
  r.complete = true;
  if (o->gpu_name) snprintf(r.gpu, sizeof r.gpu, "%s", o->gpu_name);
  else calib_map_gpu_name(r.dev.name, r.gpu, sizeof r.gpu);
  provenance(o, &r);
  kern_model_shape shape;
  if ((rc = calib_model_shape(o->model, &shape, err))) {
    kern_close(k);
    return rc;
  }
  fprintf(stderr, "device: %s (%s), %d SMs, cc %d.%d, %.1f GiB, L2 %.0f MiB, CUDA runtime %d, driver %d\n",
          r.dev.name, r.gpu, r.dev.sm_count, r.dev.cc_major, r.dev.cc_minor, r.dev.mem_bytes / (1u << 30),
          r.dev.l2_bytes / (1u << 20), r.dev.cuda_runtime_version, r.dev.cuda_driver_version);
  /* probes */
  rc = kern_probe_copy(k, &r.copy_Bps, err);
  if (!rc) rc = kern_probe_launch(k, &r.launch_eager_ns, &r.launch_graph_ns, err);
  if (rc) {
    kern_close(k);
    sim_err_prefix(err, "probe");
    return rc;
  }
  fprintf(stderr, "probe: copy %.3f TB/s, launch %.2f us eager, %.2f us in a graph\n", r.copy_Bps / 1e12,
          r.launch_eager_ns / 1e3, r.launch_graph_ns / 1e3);
  /* checks: bf16 GEMM always (its peak bounds attention and weight-only kernels) */
  struct {
    bool on;
    kern_family f;
    sim_dtype dt;
  } fams[] = {{true, KF_GEMM, DT_BF16},           {req.gemm_fp8, KF_GEMM, DT_FP8}, {req.gemm_int8, KF_GEMM, DT_INT8},
              {req.wq_int4, KF_WQ, DT_INT4},       {req.wq_int8, KF_WQ, DT_INT8},   {req.kv_bf16, KF_DECODE, DT_BF16},
              {req.kv_fp8, KF_DECODE, DT_FP8},     {req.prefill, KF_PREFILL, DT_BF16}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(fams) && kern_usable(k); i++)
    if (fams[i].on) run_check(k, &r, fams[i].f, fams[i].dt, stderr);
  static const sim_dtype pk[] = {DT_BF16, DT_FP8, DT_INT8};
  probe_peaks(k, o, &r, pk, SIM_ARRAY_LEN(pk));
  /* the plan, with the measured ceilings */
  kern_ceilings c;
  measured_ceilings(&c, &r, pk, SIM_ARRAY_LEN(pk));
  if (r.peak[DT_BF16] <= 0) {
    sim_append_line(r.notes, sizeof r.notes,
                    "no bf16 GEMM peak: the profile cannot be written (every table's speed of light needs it)");
    fprintf(stderr, "calibrate: the bf16 GEMM check or peak probe failed; nothing can be calibrated\n");
    kern_close(k);
    return SIM_EINTERNAL;
  }
  kern_plan plan;
  if ((rc = kern_plan_build(&plan, &shape, &req, &c, &ko, err))) {
    kern_close(k);
    return rc;
  }
  kern_plan_print(&plan, stderr);
  run_sweep(k, o, &r, &plan, t_start);
  for (size_t i = 0; i < SIM_ARRAY_LEN(fams); i++)
    if (fams[i].on && !r.fam_ok[fams[i].f][fams[i].dt]) {
      char why[400];
      if (kern_supported(k, fams[i].f, fams[i].dt, why, sizeof why)) {
        sim_append_line(r.notes, sizeof r.notes, "%s %s: not calibrated, its correctness check did not pass",
                        kern_family_name(fams[i].f), dtype_name(fams[i].dt));
        r.complete = false;
      } else {
        sim_append_line(r.notes, sizeof r.notes, "%s %s: %s", kern_family_name(fams[i].f), dtype_name(fams[i].dt), why);
      }
    }
  kern_close(k);
  int exit_code = write_results(o, &r, &plan, &ko, &req, t_start);
  free(r.gemm);
  free(r.attn);
  kern_plan_free(&plan);
  return exit_code;
}

