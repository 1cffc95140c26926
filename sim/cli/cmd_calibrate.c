/* cmd_calibrate.c: `servesim calibrate`: measure a model's per-operation
 * costs on the local GPU and write a profile (configs/profiles/README.md).
 *
 *   servesim calibrate --model M [--tp 1,2,4,8] [--dtypes bf16,fp8] --out FILE [--quick] [--force]
 *   servesim calibrate --model M --dry-run       plan and estimated GPU time, no GPU needed
 *   servesim calibrate --check                   every kernel's correctness check
 *   servesim calibrate --loo FILE                leave-one-out accuracy of a profile, no GPU needed
 *   servesim calibrate --from-kernel-db DIR --gpu GPU --engine E [--engine-version V] --out FILE
 *                                                import measured tables of NVIDIA AIConfigurator's kernel
 *                                                database, no GPU needed (calib_kdb.c, hw/kdb.h)
 *
 * Order of a run: probes (copy bandwidth, launch overhead), correctness checks
 * of every kernel family the plan needs (a family whose check fails is not
 * timed), GEMM peak rates, then the sweep (kern_plan.c) table by table in
 * priority order, then the profile is written (also after a CUDA failure or
 * when --time-budget runs out: what was measured is kept, "complete": false),
 * read back through prof_load (so a written profile always loads) and
 * summarized: achieved rates against the measured ceilings, and the
 * leave-one-out interpolation error.
 * The wall clock is read here only (the date, the time budget). Exit codes:
 * 0 all passed, 1 a check failed or a measurement errored, 2 bad input or no
 * usable GPU / no CUDA in this build. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/calib.h"
#include "cli/cli.h"
#include "config/cfg.h"
#include "hw/prof.h"
#include "kern.h"

#define CMD "calibrate"

typedef struct cal_opts {
  const char *model, *out, *gpu_name, *date, *loo, *summary;
  const char *kdb, *gpu, *engine, *engine_version, *moe_out; /* --from-kernel-db and its flags */
  cli_list tp, dtypes, skip;
  bool force, quick, dry, check, synthetic, help, list_versions;
  double max_call_ms, time_budget_s;
  uint64_t seed;
} cal_opts;

/* ---- small helpers ------------------------------------------------------------------ */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Splits every item of l at commas into out[] (pointers into buf). */
static int split_list(const cli_list *l, char *buf, size_t cap, const char **out, int max, int *n,
                      const char *flag, sim_err *err) {
  *n = 0;
  size_t used = 0;
  for (int i = 0; i < l->n; i++) {
    size_t len = strlen(l->items[i]);
    if (used + len + 1 > cap) return sim_errf(err, SIM_EINPUT, "--%s: list too long", flag);
    char *s = buf + used;
    memcpy(s, l->items[i], len + 1);
    used += len + 1;
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
      if (*n >= max) return sim_errf(err, SIM_EINPUT, "--%s: at most %d values", flag, max);
      out[(*n)++] = tok;
    }
  }
  return SIM_OK;
}

/* "NVIDIA H200" -> "h200": the name of the gpu config (configs/gpus/) the
 * profile belongs to; --gpu-name overrides. Unknown devices get their name
 * lower-cased with dashes ("nvidia-rtx-6000-ada" style, "NVIDIA " dropped). */
static void map_gpu_name(const char *dev, char *out, size_t n) {
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

/* Refuses to replace --out without --force. */
static int check_out(const cal_opts *o, sim_err *err) {
  struct stat st;
  if (!o->force && stat(o->out, &st) == 0)
    return sim_errf(err, SIM_EINPUT, "--out %s: file exists (add --force to overwrite it)", o->out);
  return SIM_OK;
}

/* What the profile records of how it was made: the date and the command. */
static void fill_provenance(const cal_opts *o, cal_run *r, int argc, char **argv) {
  size_t cl = 0;
  for (int i = 0; i < argc && cl + 2 < sizeof r->command; i++)
    cl += (size_t)snprintf(r->command + cl, sizeof r->command - cl, "%s%s", i ? " " : "servesim ", argv[i]);
  if (o->date) {
    snprintf(r->date, sizeof r->date, "%s", o->date);
  } else {
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  }
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Runs one family/dtype check; prints each result. Returns SIM_EINTERNAL when
 * CUDA failed (the context may be dead), else SIM_OK (look at r->fam_ok). */
static int run_check(kern_ctx *k, cal_run *r, kern_family f, sim_dtype dt, FILE *log) {
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

static bool skipped(const bool *skip, kern_family f) { return skip[f]; }

static int cmd_check(const cal_opts *o, const bool *skip) {
  kern_opts ko;
  kern_opts_default(&ko, o->quick);
  if (o->seed) ko.seed = o->seed;
  sim_err err = {0};
  kern_ctx *k;
  int rc = kern_open(&k, &ko, &err);
  if (rc) return cli_fail(CMD, &err);
  const kern_device_info *d = kern_info(k);
  printf("device: %s, %d SMs, compute capability %d.%d, %.1f GiB, CUDA runtime %d, driver %d\n", d->name, d->sm_count,
         d->cc_major, d->cc_minor, d->mem_bytes / (1u << 30), d->cuda_runtime_version, d->cuda_driver_version);
  static cal_run r;
  memset(&r, 0, sizeof r);
  static const struct {
    kern_family f;
    sim_dtype dt;
  } all[] = {{KF_GEMM, DT_BF16},  {KF_GEMM, DT_FP8},   {KF_GEMM, DT_INT8},   {KF_WQ, DT_INT4},
             {KF_WQ, DT_INT8},    {KF_DECODE, DT_BF16}, {KF_DECODE, DT_FP8}, {KF_PREFILL, DT_BF16}};
  int dead = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(all); i++) {
    if (skipped(skip, all[i].f)) {
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

/* ---- leave-one-out ---------------------------------------------------------------------------- */

static int cmd_loo(const char *path) {
  prof *p;
  sim_err err = {0};
  if (prof_load(&p, path, &err)) return cli_fail(CMD, &err);
  printf("profile %s (gpu %s)\n", path, prof_gpu_name(p));
  calib_print_loo(p, stdout);
  prof_free(p);
  return 0;
}

/* ---- the plan request --------------------------------------------------------------------------- */

static int build_request(const cal_opts *o, kern_plan_req *req, bool *skip, sim_err *err) {
  memset(req, 0, sizeof *req);
  char buf[2048];
  const char *items[64];
  int n, rc;
  if (o->tp.n == 0) {
    static const uint32_t def[] = {1, 2, 4, 8};
    for (size_t i = 0; i < SIM_ARRAY_LEN(def); i++) req->tps[req->ntp++] = def[i];
  } else {
    if ((rc = split_list(&o->tp, buf, sizeof buf, items, KERN_PLAN_MAX_TP, &n, "tp", err))) return rc;
    for (int i = 0; i < n; i++) {
      uint64_t v;
      if (!sim_parse_u64(items[i], &v) || v == 0 || v > 64)
        return sim_errf(err, SIM_EINPUT, "--tp: '%s' is not a tensor-parallel degree (1..64)", items[i]);
      for (int j = 0; j < req->ntp; j++)
        if (req->tps[j] == v) return sim_errf(err, SIM_EINPUT, "--tp: %s given twice", items[i]);
      req->tps[req->ntp++] = (uint32_t)v;
    }
  }
  if (o->dtypes.n == 0) {
    req->gemm_bf16 = req->gemm_fp8 = true;
  } else {
    if ((rc = split_list(&o->dtypes, buf, sizeof buf, items, 16, &n, "dtypes", err))) return rc;
    for (int i = 0; i < n; i++) {
      sim_dtype d;
      if (!dtype_parse(items[i], &d) || (d != DT_BF16 && d != DT_FP8 && d != DT_INT8 && d != DT_INT4))
        return sim_errf(err, SIM_EINPUT, "--dtypes: '%s' is not one of bf16, fp8, int8, int4", items[i]);
      if (d == DT_BF16) req->gemm_bf16 = true;
      if (d == DT_FP8) req->gemm_fp8 = true;
      if (d == DT_INT8) req->gemm_int8 = req->wq_int8 = true;
      if (d == DT_INT4) req->wq_int4 = true;
    }
  }
  req->kv_bf16 = req->prefill = true;
  req->kv_fp8 = req->gemm_fp8;
  memset(skip, 0, sizeof(bool) * KF_COUNT);
  if (o->skip.n) {
    if ((rc = split_list(&o->skip, buf, sizeof buf, items, 16, &n, "skip", err))) return rc;
    for (int i = 0; i < n; i++) {
      kern_family f;
      if (!kern_family_parse(items[i], &f))
        return sim_errf(err, SIM_EINPUT, "--skip: '%s' is not a kernel family (gemm, wq, decode, prefill)", items[i]);
      skip[f] = true;
    }
  }
  if (skip[KF_GEMM]) req->gemm_bf16 = req->gemm_fp8 = req->gemm_int8 = false;
  if (skip[KF_WQ]) req->wq_int4 = req->wq_int8 = false;
  if (skip[KF_DECODE]) req->kv_bf16 = req->kv_fp8 = false;
  if (skip[KF_PREFILL]) req->prefill = false;
  req->quick = o->quick;
  req->max_call_ms = o->max_call_ms;
  return SIM_OK;
}

static int model_shape(const char *name, kern_model_shape *s, sim_err *err) {
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

static double gemm_sol_ns(const cal_run *r, sim_dtype w, sim_dtype a, uint32_t M, uint32_t N, uint32_t K) {
  prof_work wk;
  prof_gemm_work(w, a, M, N, K, &wk);
  double tc = r->peak[wk.compute] > 0 ? wk.flops / r->peak[wk.compute] : 0, tm = wk.bytes / r->copy_Bps;
  return (tc > tm ? tc : tm) * 1e9;
}

static void sweep_gemm(kern_ctx *k, cal_run *r, cal_gemm *g) {
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

static void sweep_attn(kern_ctx *k, cal_run *r, cal_attn *c) {
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
static void probe_peaks(kern_ctx *k, const cal_opts *o, cal_run *r, const sim_dtype *pk, size_t npk) {
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
static void run_sweep(kern_ctx *k, const cal_opts *o, cal_run *r, const kern_plan *plan, double t_start) {
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

static int cmd_run_calibration(const cal_opts *o, int argc, char **argv) {
  double t_start = now_s();
  sim_err err = {0};
  kern_plan_req req;
  bool skip[KF_COUNT];
  if (build_request(o, &req, skip, &err) || check_out(o, &err)) return cli_fail(CMD, &err);
  kern_opts ko;
  kern_opts_default(&ko, o->quick);
  if (o->seed) ko.seed = o->seed;
  kern_ctx *k;
  if (kern_open(&k, &ko, &err)) return cli_fail(CMD, &err); /* no CUDA / no GPU: exit 2 with the reason */
  static cal_run r;
  memset(&r, 0, sizeof r);
  r.dev = *kern_info(k);
  r.complete = true;
  if (o->gpu_name) snprintf(r.gpu, sizeof r.gpu, "%s", o->gpu_name);
  else map_gpu_name(r.dev.name, r.gpu, sizeof r.gpu);
  fill_provenance(o, &r, argc, argv);
  kern_model_shape shape;
  if (model_shape(o->model, &shape, &err)) {
    kern_close(k);
    return cli_fail(CMD, &err);
  }
  fprintf(stderr, "device: %s (%s), %d SMs, cc %d.%d, %.1f GiB, L2 %.0f MiB, CUDA runtime %d, driver %d\n",
          r.dev.name, r.gpu, r.dev.sm_count, r.dev.cc_major, r.dev.cc_minor, r.dev.mem_bytes / (1u << 30),
          r.dev.l2_bytes / (1u << 20), r.dev.cuda_runtime_version, r.dev.cuda_driver_version);
  /* probes */
  int rc = kern_probe_copy(k, &r.copy_Bps, &err);
  if (!rc) rc = kern_probe_launch(k, &r.launch_eager_ns, &r.launch_graph_ns, &err);
  if (rc) {
    kern_close(k);
    sim_err_prefix(&err, "probe");
    return cli_fail(CMD, &err);
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
  kern_ceilings_h200(&c);
  c.copy_Bps = r.copy_Bps;
  for (size_t i = 0; i < SIM_ARRAY_LEN(pk); i++)
    if (r.peak[pk[i]] > 0) c.peak_flops[pk[i]] = r.peak[pk[i]];
  c.launch_ns = r.launch_graph_ns;
  if (r.peak[DT_BF16] <= 0) {
    sim_append_line(r.notes, sizeof r.notes,
                    "no bf16 GEMM peak: the profile cannot be written (every table's speed of light needs it)");
    fprintf(stderr, "calibrate: the bf16 GEMM check or peak probe failed; nothing can be calibrated\n");
    kern_close(k);
    return SIM_EINTERNAL;
  }
  kern_plan plan;
  if (kern_plan_build(&plan, &shape, &req, &c, &ko, &err)) {
    kern_close(k);
    return cli_fail(CMD, &err);
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
  int exit_code = r.failures ? SIM_EINTERNAL : 0;
  if ((rc = calib_write_profile(o->out, &r, &plan, &ko, &req, &err))) {
    cli_fail(CMD, &err);
    exit_code = rc;
  } else {
    fprintf(stderr, "wrote %s\n", o->out);
  }
  prof *p = NULL;
  if (!rc && prof_load(&p, o->out, &err)) {
    fprintf(stderr, "calibrate: the written profile does not load back: %s\n", err.msg);
    exit_code = SIM_EINTERNAL;
  }
  calib_summary(stdout, &r, &plan, p, now_s() - t_start);
  if (o->summary) {
    FILE *sf = fopen(o->summary, "w");
    if (sf) {
      calib_summary(sf, &r, &plan, p, now_s() - t_start);
      fclose(sf);
    } else {
      fprintf(stderr, "calibrate: cannot write --summary %s: %s\n", o->summary, strerror(errno));
    }
  }
  prof_free(p);
  free(r.gemm);
  free(r.attn);
  kern_plan_free(&plan);
  return exit_code;
}

/* The plan without a GPU (--dry-run, --synthetic): default options in *ko,
 * H200 ceilings in *c. */
static int h200_plan(const cal_opts *o, const kern_plan_req *req, kern_opts *ko, kern_ceilings *c, kern_plan *plan,
                     sim_err *err) {
  kern_model_shape shape;
  int rc = model_shape(o->model, &shape, err);
  if (rc) return rc;
  kern_opts_default(ko, o->quick);
  kern_ceilings_h200(c);
  return kern_plan_build(plan, &shape, req, c, ko, err);
}

static int cmd_dry_run(const cal_opts *o) {
  sim_err err = {0};
  kern_plan_req req;
  bool skip[KF_COUNT];
  kern_opts ko;
  kern_ceilings c;
  kern_plan plan;
  if (build_request(o, &req, skip, &err) || h200_plan(o, &req, &ko, &c, &plan, &err)) return cli_fail(CMD, &err);
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
static double synth_ns(const cal_run *r, const prof_work *w, double eff_c, double eff_m, double fixed_ns) {
  double tc = w->flops / (r->peak[w->compute] * eff_c) * 1e9, tm = w->bytes / (r->copy_Bps * eff_m) * 1e9;
  return sqrt(tc * tc + tm * tm) + fixed_ns;
}

static int cmd_synthetic(const cal_opts *o, int argc, char **argv) {
  sim_err err = {0};
  kern_plan_req req;
  bool skip[KF_COUNT];
  kern_opts ko;
  kern_ceilings c;
  kern_plan plan;
  if (build_request(o, &req, skip, &err) || check_out(o, &err) || h200_plan(o, &req, &ko, &c, &plan, &err))
    return cli_fail(CMD, &err);
  static cal_run r;
  memset(&r, 0, sizeof r);
  snprintf(r.dev.name, sizeof r.dev.name, "SYNTHETIC (no device: smooth roofline model with H200 ceilings)");
  r.dev.l2_bytes = 50e6;
  snprintf(r.gpu, sizeof r.gpu, "%s", o->gpu_name ? o->gpu_name : "synthetic");
  fill_provenance(o, &r, argc, argv);
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
  int rc = calib_write_profile(o->out, &r, &plan, &ko, &req, &err), exit_code = 0;
  prof *p = NULL;
  if (rc) exit_code = cli_fail(CMD, &err);
  else if (prof_load(&p, o->out, &err)) exit_code = cli_fail(CMD, &err);
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
  return exit_code;
}

/* The everyday servesim binary does not link CUDA (it would load cuBLAS on
 * every run); the build puts servesim-cuda beside it where nvcc exists.
 * Hand the whole command over to it; returns only if there is none. */
static void exec_cuda_binary(int argc, char **argv) {
  if (kern_built_with_cuda() || getenv("SERVESIM_NO_CUDA_HANDOVER")) return;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
  if (n <= 0) return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash) return;
  strcpy(slash + 1, "servesim-cuda");
  if (access(self, X_OK) != 0) return;
  char **args = sim_calloc((size_t)argc + 2, sizeof *args);
  args[0] = self;
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i]; /* argv[0] is "calibrate" */
  execv(self, args);
  free(args); /* exec failed: carry on without CUDA */
}

int cmd_calibrate(int argc, char **argv) {
  exec_cuda_binary(argc, argv);
  cal_opts o;
  memset(&o, 0, sizeof o);
  const cli_opt opts[] = {
      {"model", NULL, CLI_STR, &o.model, "NAME|PATH", "model config (HF config.json): configs/models/NAME.json or a path", NULL},
      {"tp", NULL, CLI_LIST, &o.tp, "LIST", "tensor-parallel degrees, comma-separated (default 1,2,4,8)", NULL},
      {"dtypes", NULL, CLI_LIST, &o.dtypes, "LIST",
       "bf16, fp8 (GEMM + FP8 KV cache), int8 (GEMM + weight-only), int4 (weight-only); default bf16,fp8", NULL},
      {"out", "o", CLI_STR, &o.out, "FILE", "profile to write (refuses to overwrite without --force)", NULL},
      {"force", NULL, CLI_FLAG, &o.force, NULL, "overwrite --out", NULL},
      {"quick", NULL, CLI_FLAG, &o.quick, NULL, "sparser grids and fewer repeats (about a third of the time)", NULL},
      {"gpu-name", NULL, CLI_STR, &o.gpu_name, "NAME", "gpu config name to record (default: mapped from the device name)", NULL},
      {"date", NULL, CLI_STR, &o.date, "DATE", "date to record (default: now, UTC)", NULL},
      {"dry-run", NULL, CLI_FLAG, &o.dry, NULL, "print the plan and its estimated GPU time; needs no GPU", NULL},
      {"synthetic", NULL, CLI_FLAG, &o.synthetic, NULL,
       "write a SYNTHETIC profile (smooth roofline model, H200 ceilings, no GPU) to test the profile pipeline", NULL},
      {"check", NULL, CLI_FLAG, &o.check, NULL, "run every kernel's correctness check and exit", NULL},
      {"loo", NULL, CLI_STR, &o.loo, "FILE", "print the leave-one-out interpolation error of a profile and exit", NULL},
      {"skip", NULL, CLI_LIST, &o.skip, "LIST", "kernel families to leave out: gemm, wq, decode, prefill", NULL},
      {"max-call-ms", NULL, CLI_F64, &o.max_call_ms, "MS", "grid points estimated slower are not measured (default 25, quick 4)", NULL},
      {"time-budget", NULL, CLI_F64, &o.time_budget_s, "S", "stop starting new tables after S seconds (0 = no limit)", NULL},
      {"summary", NULL, CLI_STR, &o.summary, "FILE", "also write the summary table to FILE", NULL},
      {"seed", NULL, CLI_U64, &o.seed, "N", "random input seed (default fixed)", NULL},
      {"from-kernel-db", NULL, CLI_STR, &o.kdb, "DIR",
       "import NVIDIA AIConfigurator's measured kernel tables from DIR (needs --gpu, --engine, --out; no GPU)", NULL},
      {"gpu", NULL, CLI_STR, &o.gpu, "GPU", "with --from-kernel-db: the gpu config (h100-sxm, h200, b200, ...)", NULL},
      {"engine", NULL, CLI_STR, &o.engine, "ENGINE", "with --from-kernel-db: vllm or trtllm", NULL},
      {"engine-version", NULL, CLI_STR, &o.engine_version, "V", "with --from-kernel-db: the version (default newest)",
       NULL},
      {"moe-out", NULL, CLI_STR, &o.moe_out, "FILE",
       "with --from-kernel-db: write the fused-MoE tables to FILE (a profile of their own, loaded only for "
       "mixture-of-experts models) instead of --out",
       NULL},
      {"list-versions", NULL, CLI_FLAG, &o.list_versions, NULL,
       "with --from-kernel-db, --gpu, --engine: print the versions present and exit", NULL},
      {"help", "h", CLI_FLAG, &o.help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  int rc = cli_start(CMD, "servesim calibrate --model M [--tp 1,2,4,8] [--dtypes bf16,fp8] --out FILE [--quick]",
                     "Measure GEMM and attention costs of a model's layers on the local GPU (cuBLASLt GEMMs, our\n"
                     "weight-only, paged decode and prefill attention kernels, each checked against a CPU reference\n"
                     "first) and write a profile for the cost model (configs/profiles/README.md).\n"
                     "Without a GPU: --dry-run (plan and estimated time), --loo FILE (profile accuracy) and\n"
                     "--from-kernel-db DIR (import NVIDIA AIConfigurator's measured tables) still work.",
                     opts, &o.help, argc, argv);
  if (rc != CLI_GO) return rc;
  sim_err err = {0};
  if (o.max_call_ms < 0 || o.time_budget_s < 0) {
    sim_errf(&err, SIM_EINPUT, "--max-call-ms and --time-budget must not be negative");
    return cli_fail(CMD, &err);
  }
  if (o.loo) return cmd_loo(o.loo);
  if (o.kdb) {
    calib_kdb_opts k = {o.kdb, o.gpu, o.engine, o.engine_version, o.out, o.force, o.list_versions, o.moe_out};
    return calib_kernel_db(&k);
  }
  if (o.check) {
    kern_plan_req req;
    bool skip[KF_COUNT];
    if (build_request(&o, &req, skip, &err)) return cli_fail(CMD, &err);
    return cmd_check(&o, skip);
  }
  if (!o.model) {
    sim_errf(&err, SIM_EINPUT, "--model is required (a model config name or an HF config.json path)");
    return cli_fail(CMD, &err);
  }
  if (o.dry) return cmd_dry_run(&o);
  if (!o.out) {
    sim_errf(&err, SIM_EINPUT, "--out FILE is required (where to write the profile)");
    return cli_fail(CMD, &err);
  }
  if (o.synthetic) return cmd_synthetic(&o, argc, argv);
  return cmd_run_calibration(&o, argc, argv);
}
