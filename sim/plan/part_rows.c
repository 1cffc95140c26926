/* part_rows.c: the checks of a part's raw records (see part_rows.h). */
#include "plan/part_rows.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Raw reads below assume these sizes: a bool is one byte, an enum an int. */
_Static_assert(sizeof(bool) == 1, "bool is one byte");
_Static_assert(sizeof(limit_kind) == sizeof(int) && sizeof(sim_dtype) == sizeof(int) &&
                   sizeof(ar_source) == sizeof(int) && sizeof(moe_routing) == sizeof(int) &&
                   sizeof(route_policy) == sizeof(int),
               "enums are ints");

/* One record being checked: its bytes, where it came from, the first problem found. */
typedef struct chk {
  const unsigned char *raw;
  const char *path;
  uint64_t row;
  sim_err *err;
  int rc;
} chk;

/* Records the first problem: "PATH: row I: PREFIXNAME[IDX]: problem". */
static void say(chk *c, const char *pre, const char *name, int idx, const char *fmt, ...) {
  if (c->rc) return;
  char what[256], at[16] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (idx >= 0) snprintf(at, sizeof at, "[%d]", idx);
  c->rc = sim_errf(c->err, SIM_EINPUT, "%s: row %" PRIu64 ": %s%s%s: %s", c->path, c->row, pre, name, at, what);
}

static void c_bool(chk *c, size_t off, const char *pre, const char *name, int idx) {
  unsigned v = c->raw[off];
  if (v > 1) say(c, pre, name, idx, "a bool holds %u", v);
}

static void c_bools(chk *c, size_t off, int n, const char *pre, const char *name) {
  for (int i = 0; i < n && !c->rc; i++) c_bool(c, off + (size_t)i, pre, name, i);
}

static void c_str(chk *c, size_t off, size_t cap, const char *pre, const char *name, int idx) {
  if (!memchr(c->raw + off, 0, cap)) say(c, pre, name, idx, "no NUL terminator within its %zu bytes", cap);
}

static int rd_int(const chk *c, size_t off) {
  int v;
  memcpy(&v, c->raw + off, sizeof v);
  return v;
}

static uint32_t rd_u32(const chk *c, size_t off) {
  uint32_t v;
  memcpy(&v, c->raw + off, sizeof v);
  return v;
}

static double rd_f64(const chk *c, size_t off) {
  double v;
  memcpy(&v, c->raw + off, sizeof v);
  return v;
}

/* An int (or an enum) in [lo, hi]. */
static void c_int(chk *c, size_t off, int lo, int hi, const char *pre, const char *name) {
  int v = rd_int(c, off);
  if (v < lo || v > hi) say(c, pre, name, -1, "%d is out of range %d..%d", v, lo, hi);
}

static void c_u32(chk *c, size_t off, uint32_t hi, const char *pre, const char *name) {
  uint32_t v = rd_u32(c, off);
  if (v > hi) say(c, pre, name, -1, "%u is above %u", v, hi);
}

static void c_tri(chk *c, size_t off, const char *pre, const char *name) {
  int8_t v;
  memcpy(&v, c->raw + off, sizeof v);
  if (v < -1 || v > 1) say(c, pre, name, -1, "%d is not -1, 0 or 1", v);
}

static void c_notnan(chk *c, size_t off, const char *pre, const char *name, int idx) {
  if (isnan(rd_f64(c, off))) say(c, pre, name, idx, "not a number");
}

/* A finite double >= lo. */
static void c_finite(chk *c, size_t off, double lo, const char *pre, const char *name, int idx) {
  double v = rd_f64(c, off);
  if (!isfinite(v) || v < lo) say(c, pre, name, idx, "%g is not a finite number >= %g", v, lo);
}

/* ---- the nested structs ------------------------------------------------------------------------------- */

#define AT(type, field) (base + offsetof(type, field))

static void check_point(chk *c, size_t base, const char *pre) {
  char p[64];
  snprintf(p, sizeof p, "%spt.", pre);
  c_bools(c, AT(grid_point, set), AX_COUNT, p, "set");
  for (int a = 0; a < AX_COUNT && !c->rc; a++)
    c_str(c, AT(grid_point, v) + (size_t)a * sizeof(grid_value) + offsetof(grid_value, s), sizeof(((grid_value *)0)->s),
          p, "v.s", a);
}

static void check_deploy(chk *c, size_t base, const char *pre) {
  char p[64];
  snprintf(p, sizeof p, "%sdeploy.", pre);
  c_int(c, AT(deploy_cfg, act_dtype), 0, DT_COUNT - 1, p, "act_dtype");
  c_int(c, AT(deploy_cfg, weight_dtype), 0, DT_COUNT - 1, p, "weight_dtype");
  c_int(c, AT(deploy_cfg, kv_dtype), 0, DT_COUNT - 1, p, "kv_dtype");
  c_bool(c, AT(deploy_cfg, act_dtype_set), p, "act_dtype_set", -1);
  c_bool(c, AT(deploy_cfg, weight_dtype_set), p, "weight_dtype_set", -1);
  c_bool(c, AT(deploy_cfg, kv_dtype_set), p, "kv_dtype_set", -1);
  c_tri(c, AT(deploy_cfg, enable_prefix_caching), p, "enable_prefix_caching");
  c_tri(c, AT(deploy_cfg, enable_chunked_prefill), p, "enable_chunked_prefill");
  c_tri(c, AT(deploy_cfg, async_scheduling), p, "async_scheduling");
  c_int(c, AT(deploy_cfg, allreduce), AR_AUTO, AR_LINK, p, "allreduce");
  c_int(c, AT(deploy_cfg, moe_routing), MOE_BALANCED, MOE_POWER_LAW_12, p, "moe_routing");
  c_bool(c, AT(deploy_cfg, expert_parallel), p, "expert_parallel", -1);
  c_int(c, AT(deploy_cfg, router), ROUTE_ROUND_ROBIN, ROUTE_LEAST_KV, p, "router");
  c_bool(c, AT(deploy_cfg, schedule_lpm), p, "schedule_lpm", -1);
  c_bool(c, AT(deploy_cfg, disagg), p, "disagg", -1);
  c_bool(c, AT(deploy_cfg, resolved), p, "resolved", -1);
  c_u32(c, AT(deploy_cfg, pp), CFG_MAX_PP, p, "pp");
  c_u32(c, AT(deploy_cfg, dp), CFG_MAX_DP, p, "dp");
  c_notnan(c, AT(deploy_cfg, gpu_memory_utilization), p, "gpu_memory_utilization", -1);
}

static void check_mem(chk *c, size_t base, const char *pre) {
  char p[64];
  snprintf(p, sizeof p, "%smem.", pre);
  c_bool(c, AT(mem_plan, kv_capped), p, "kv_capped", -1);
  c_bool(c, AT(mem_plan, fits), p, "fits", -1);
  c_u32(c, AT(mem_plan, pp), CFG_MAX_PP, p, "pp");
  uint32_t pp = rd_u32(c, AT(mem_plan, pp)), stage = rd_u32(c, AT(mem_plan, binding_stage));
  if (!c->rc && stage >= (pp ? pp : 1)) say(c, p, "binding_stage", -1, "%u is not below pp %u", stage, pp ? pp : 1);
}

static void check_sum(chk *c, size_t base, const char *pre, const char *name) {
  char p[64];
  snprintf(p, sizeof p, "%s%s.", pre, name);
  c_bool(c, AT(metrics_summary, has_goodput), p, "has_goodput", -1);
  c_bool(c, AT(metrics_summary, itl_from_histogram), p, "itl_from_histogram", -1);
  c_bool(c, AT(metrics_summary, steps_from_histogram), p, "steps_from_histogram", -1);
}

static void check_bn(chk *c, size_t base, const char *pre) {
  char p[64];
  snprintf(p, sizeof p, "%sbn.", pre);
  c_int(c, AT(bottleneck, primary), LIMIT_NONE, LIMIT_QUEUEING, p, "primary");
  c_int(c, AT(bottleneck, step_bound), LIMIT_NONE, LIMIT_QUEUEING, p, "step_bound");
  c_str(c, AT(bottleneck, explain), sizeof(((bottleneck *)0)->explain), p, "explain", -1);
}

/* slo_result: n objectives, first_fail one of them or -1 (a row that never ran holds zeros: n 0, first_fail 0). */
static void check_slo(chk *c, size_t base, const char *pre, const char *name) {
  char p[64];
  snprintf(p, sizeof p, "%s%s.", pre, name);
  c_int(c, AT(slo_result, n), 0, SLO_MAX, p, "n");
  c_bools(c, AT(slo_result, ok), SLO_MAX, p, "ok");
  c_bool(c, AT(slo_result, all_ok), p, "all_ok", -1);
  int n = rd_int(c, AT(slo_result, n));
  c_int(c, AT(slo_result, first_fail), -1, (n > 1 ? n : 1) - 1, p, "first_fail");
}

static void check_sweep_row(chk *c, size_t base, const char *pre) {
#define STR(f) c_str(c, AT(sweep_row, f), sizeof(((sweep_row *)0)->f), pre, #f, -1)
  check_point(c, AT(sweep_row, pt), pre);
  STR(label);
  c_bool(c, AT(sweep_row, feasible), pre, "feasible", -1);
  STR(reason);
  STR(whatif_note);
  STR(model);
  STR(gpu);
  STR(engine);
  STR(cost_source);
#undef STR
  check_deploy(c, AT(sweep_row, deploy), pre);
  c_notnan(c, AT(sweep_row, rate_scale), pre, "rate_scale", -1);
  c_notnan(c, AT(sweep_row, offered_rate), pre, "offered_rate", -1);
  c_notnan(c, AT(sweep_row, price_per_gpu_hour), pre, "price_per_gpu_hour", -1);
  c_notnan(c, AT(sweep_row, usd_per_hour), pre, "usd_per_hour", -1);
  check_mem(c, AT(sweep_row, mem), pre);
  check_sum(c, AT(sweep_row, sum), pre, "sum");
  check_bn(c, AT(sweep_row, bn), pre);
  check_slo(c, AT(sweep_row, slo), pre, "slo");
  c_bool(c, AT(sweep_row, pareto_user), pre, "pareto_user", -1);
  c_bool(c, AT(sweep_row, pareto_ttft), pre, "pareto_ttft", -1);
}

static void check_bis(chk *c, size_t base) {
  const char *p = "bis.";
  c_bool(c, AT(bisect_result, found), p, "found", -1);
  c_bool(c, AT(bisect_result, unbounded), p, "unbounded", -1);
  c_bool(c, AT(bisect_result, converged), p, "converged", -1);
  c_notnan(c, AT(bisect_result, good), p, "good", -1);
  c_notnan(c, AT(bisect_result, bad), p, "bad", -1);
  c_int(c, AT(bisect_result, n_probes), 0, BISECT_MAX_PROBES, p, "n_probes");
  c_bools(c, AT(bisect_result, probe_ok), BISECT_MAX_PROBES, p, "probe_ok");
  int n = c->rc ? 0 : rd_int(c, AT(bisect_result, n_probes));
  for (int k = 0; k < n && !c->rc; k++) c_notnan(c, AT(bisect_result, probe_x) + (size_t)k * sizeof(double), p, "probe_x", k);
}

/* The probes: every one's bool and enum; the rates of those made (n of them) positive numbers. */
static void check_probes(chk *c, size_t base, int n) {
  for (int k = 0; k < BISECT_MAX_PROBES && !c->rc; k++) {
    size_t b = base + (size_t)k * sizeof(cap_probe);
    char p[32];
    snprintf(p, sizeof p, "probe[%d].", k);
    c_bool(c, b + offsetof(cap_probe, ok), p, "ok", -1);
    c_int(c, b + offsetof(cap_probe, limit), LIMIT_NONE, LIMIT_QUEUEING, p, "limit");
    if (k < n) c_finite(c, b + offsetof(cap_probe, rate), 0, p, "rate", -1);
  }
}

static void check_cand(chk *c) {
  size_t base = 0;
#define STR(f) c_str(c, AT(cap_candidate, f), sizeof(((cap_candidate *)0)->f), "", #f, -1)
  check_point(c, AT(cap_candidate, pt), "");
  STR(label);
  check_sweep_row(c, AT(cap_candidate, cfg), "cfg.");
  c_bool(c, AT(cap_candidate, feasible), "", "feasible", -1);
  STR(reason);
  check_bis(c, AT(cap_candidate, bis));
  int n = c->rc ? 0 : rd_int(c, AT(cap_candidate, bis) + offsetof(bisect_result, n_probes));
  check_probes(c, AT(cap_candidate, probe), n);
  c_finite(c, AT(cap_candidate, max_rate), 0, "", "max_rate", -1);
  for (int k = 0; k < CAP_FLEET_MAX && !c->rc; k++)
    c_bool(c, AT(cap_candidate, fleet) + (size_t)k * sizeof(cap_fleet_probe) + offsetof(cap_fleet_probe, ok), "fleet.",
           "ok", k);
  c_u32(c, AT(cap_candidate, n_fleet), CAP_FLEET_MAX, "", "n_fleet");
  c_int(c, AT(cap_candidate, limit), LIMIT_NONE, LIMIT_QUEUEING, "", "limit");
  c_int(c, AT(cap_candidate, fail_slo), -1, SLO_MAX - 1, "", "fail_slo");
  c_notnan(c, AT(cap_candidate, fail_rate), "", "fail_rate", -1);
  STR(fail_explain);
  STR(why);
  c_int(c, AT(cap_candidate, verified), -1, 1, "", "verified");
  check_slo(c, AT(cap_candidate, verify_slo), "", "verify_slo");
  check_sum(c, AT(cap_candidate, verify_sum), "", "verify_sum");
  c_int(c, AT(cap_candidate, inst), -1, INT32_MAX, "", "inst");
  STR(no_instance);
#undef STR
}

#undef AT

int part_row_check(const char *kind, const unsigned char *raw, const char *path, uint64_t row, sim_err *err) {
  chk c = {raw, path, row, err, SIM_OK};
  if (!strcmp(kind, "sweep")) check_sweep_row(&c, 0, "");
  else if (!strcmp(kind, "capacity")) check_cand(&c);
  else return sim_errf(err, SIM_EINPUT, "%s: row %" PRIu64 ": a part of unknown kind '%s'", path, row, kind);
  return c.rc;
}

/* ---- against the rebuilt set --------------------------------------------------------------------------- */

static int misfit(sim_err *err, const char *path, size_t row, const char *field, const char *fmt, ...) {
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return sim_errf(err, SIM_EINPUT, "%s: row %zu: %s: %s", path, row, field, what);
}

/* An SLO result holds the study's count of objectives (or none: a row that never ran). */
static int slo_fit(const slo_result *r, int n_slo, const char *path, size_t row, const char *field, sim_err *err) {
  if (r->n && r->n != n_slo) return misfit(err, path, row, field, "%d objectives, the study has %d", r->n, n_slo);
  return SIM_OK;
}

int part_sweep_row_fit(sweep_row *x, const sweep_row *grid, const sweep_set *s, const char *path, sim_err *err) {
  size_t i = grid->index;
  if (x->index != i) return misfit(err, path, i, "index", "%zu, the grid's is %zu", x->index, i);
  if (strcmp(x->label, grid->label))
    return misfit(err, path, i, "label", "'%s', the grid's is '%s'", x->label, grid->label);
  if (slo_fit(&x->slo, s->slo.n, path, i, "slo.n", err)) return SIM_EINPUT;
  x->pt = grid->pt; /* nothing of the record's point is used */
  memcpy(x->label, grid->label, sizeof x->label);
  return SIM_OK;
}

/* The GPU a candidate merge sizes is priced and packed by its name: it must be the one its point loads. */
static int gpu_fit(const cap_candidate *x, const cap_candidate *grid, const capacity_set *s, const char *path,
                   sim_err *err) {
  scenario *sc = sim_malloc(sizeof *sc);
  *sc = s->base;
  sim_err e2;
  gpu_cfg *g = sim_malloc(sizeof *g);
  int rc = grid_apply(&grid->pt, sc, &e2) || cfg_gpu_load(g, sc->gpu, &e2) ? SIM_EINPUT : SIM_OK;
  if (rc) misfit(err, path, grid->index, "cfg.gpu", "its point's GPU '%s' does not load: %s", sc->gpu, e2.msg);
  else if (strcmp(x->cfg.gpu, g->name))
    rc = misfit(err, path, grid->index, "cfg.gpu", "'%s', the point's GPU is '%s'", x->cfg.gpu, g->name);
  free(g);
  free(sc);
  return rc;
}

int part_cap_fit(cap_candidate *x, const cap_candidate *grid, const capacity_set *s, const char *path, sim_err *err) {
  size_t i = grid->index;
  if (x->index != i) return misfit(err, path, i, "index", "%zu, the search's is %zu", x->index, i);
  if (strcmp(x->label, grid->label))
    return misfit(err, path, i, "label", "'%s', the search's is '%s'", x->label, grid->label);
  if (x->fail_slo >= s->slo.n)
    return misfit(err, path, i, "fail_slo", "%d, the study has %d objective%s", x->fail_slo, s->slo.n,
                  s->slo.n == 1 ? "" : "s");
  /* a shard leaves inst as calloc did (0) and merge prices the candidates it sizes; without a catalog, 0 is
     that value and is read as none */
  if (x->inst >= (int64_t)s->n_inst && !(x->inst == 0 && !s->n_inst))
    return misfit(err, path, i, "inst", "%d, the catalog has %u instance type%s", x->inst, s->n_inst,
                  s->n_inst == 1 ? "" : "s");
  if (!s->n_inst) x->inst = -1;
  if (x->max_rate != 0 && !(x->max_rate >= s->bo.lo && x->max_rate <= s->bo.hi))
    return misfit(err, path, i, "max_rate", "%g is neither 0 nor in the search's range [%g, %g]", x->max_rate,
                  s->bo.lo, s->bo.hi);
  if (slo_fit(&x->cfg.slo, s->slo.n, path, i, "cfg.slo.n", err) ||
      slo_fit(&x->verify_slo, s->slo.n, path, i, "verify_slo.n", err))
    return SIM_EINPUT;
  if (x->feasible && x->max_rate > 0 && gpu_fit(x, grid, s, path, err)) return SIM_EINPUT;
  x->pt = grid->pt;
  memcpy(x->label, grid->label, sizeof x->label);
  return SIM_OK;
}
