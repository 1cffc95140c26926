/* capacity_modes.c: aggregated and disaggregated candidates in one capacity search (capacity_modes.h). */
#include "plan/capacity_modes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/settings.h"
#include "plan/pools.h"

/* A pool setting: a SET_DISAGG row of the settings table other than `mode` itself. */
static bool pool_axis(int a) {
  if (a < AX_SET0 || a >= AX_SET0 + (int)settings_count()) return false;
  const setting *st = settings_at((size_t)(a - AX_SET0));
  return (st->use & SET_DISAGG) && strcmp(st->key, "mode");
}

bool capmode_point_disagg(const scenario *base, const grid_point *p) {
  int m = grid_axis_of_key("mode");
  if (m >= 0 && p->set[m]) return !strcmp(p->v[m].s, "disagg");
  return base->deploy.disagg;
}

bool capmode_pool_axes(const grid_spec *g) {
  for (int a = AX_SET0; a < AX_SET0 + (int)settings_count(); a++)
    if (pool_axis(a) && g->n[a]) return true;
  return false;
}

bool capmode_keep_point(const grid_spec *g, const scenario *base, grid_point *p) {
  if (capmode_point_disagg(base, p)) return true;
  for (int a = AX_SET0; a < AX_SET0 + (int)settings_count(); a++) {
    if (!pool_axis(a) || !p->set[a]) continue;
    if (g->n[a] && strcmp(p->v[a].s, g->v[a][0].s)) return false; /* the same aggregated deployment again */
  }
  for (int a = AX_SET0; a < AX_SET0 + (int)settings_count(); a++)
    if (pool_axis(a)) p->set[a] = false;
  return true;
}

static uint32_t or1(uint32_t v) { return v ? v : 1; }

uint32_t capmode_unit_gpus(const deploy_cfg *d) {
  if (!d->disagg) return deploy_gpus(d);
  return or1(d->prefill_workers) * or1(d->prefill_tp) * or1(d->prefill_dp) +
         or1(d->decode_workers) * or1(d->decode_tp) * or1(d->decode_dp);
}

void capmode_scale(deploy_cfg *d, uint32_t R) {
  if (!d->disagg) {
    d->replicas = R;
    return;
  }
  d->prefill_workers = or1(d->prefill_workers) * R;
  d->decode_workers = or1(d->decode_workers) * R;
  d->replicas = 1;
}

/* The disaggregated deployment resolved (the pools' shapes filled in), for the echo of a candidate that stops
 * before its first run; the scenario's as given when it cannot be resolved. */
static void resolved_deploy(const scenario *sc, deploy_cfg *out) {
  model_cfg *m = sim_malloc(sizeof *m);
  gpu_cfg *g = sim_malloc(sizeof *g);
  engine_cfg *e = sim_malloc(sizeof *e);
  sim_err err;
  if (scenario_load_configs(sc, m, g, e, out, &err)) {
    *out = sc->deploy;
    settings_fill(out, NULL, SD_ONE);
  }
  free(m);
  free(g);
  free(e);
}

const plan_result *capmode_plan(plan_result pl[2], const scenario *sc, const plan_opts *po, cap_candidate *c,
                                bool *fits) {
  sweep_row *e = &c->cfg;
  sim_err err;
  *fits = false;
  bool dis = sc->deploy.disagg;
  if (dis ? plan_analyze_pools(pl, sc, po, &err) : plan_analyze(&pl[0], sc, po, &err)) {
    snprintf(c->reason, sizeof c->reason, "%s", err.msg);
    return NULL;
  }
  const plan_result *dec = dis ? &pl[1] : &pl[0];
  snprintf(e->gpu, sizeof e->gpu, "%s", dec->gpu.name);
  snprintf(e->model, sizeof e->model, "%s", dec->model.name);
  if (dis) resolved_deploy(sc, &e->deploy);
  else e->deploy = pl[0].deploy;
  e->gpus = capmode_unit_gpus(&e->deploy);
  e->mem = dec->mem;
  *fits = true;
  for (int k = 0; k < (dis ? 2 : 1) && *fits; k++) {
    if (pl[k].fits) continue;
    *fits = false;
    if (dis)
      snprintf(c->reason, sizeof c->reason, "%s pool (TP%u): %.900s", k ? "decode" : "prefill", pl[k].deploy.tp,
               pl[k].refusal);
    else snprintf(c->reason, sizeof c->reason, "%s", pl[k].refusal);
  }
  return dec;
}

uint32_t capmode_instances(const instance_cfg *in, const gpu_cfg *g, const deploy_cfg *d, uint32_t R, char *why,
                           size_t n) {
  uint32_t total = 0;
  for (int k = 0; k < 2; k++) {
    uint32_t per_worker = k ? or1(d->decode_tp) * or1(d->decode_dp) : or1(d->prefill_tp) * or1(d->prefill_dp);
    uint32_t workers = R * (k ? or1(d->decode_workers) : or1(d->prefill_workers)), inst = 0;
    if (!instance_pack(in, g, per_worker, workers, &inst, why, n)) return 0;
    total += inst;
  }
  return total;
}

double capmode_headroom(const cap_candidate *c) { return c->max_rate * c->replicas; }

/* Cost order: known cost ascending (unknown last), then GPUs, then the fleet's headroom (max rate per replica x
 * replicas: a per-replica rate alone favours the larger unit, e.g. one 2P1D group over three TP1 replicas of the
 * same GPUs), then index. */
bool capmode_cheaper(const cap_candidate *a, const cap_candidate *b) {
  double ca = a->usd_per_hour > 0 ? a->usd_per_hour : INFINITY, cb = b->usd_per_hour > 0 ? b->usd_per_hour : INFINITY;
  if (ca != cb) return ca < cb;
  if (a->gpus != b->gpus) return a->gpus < b->gpus;
  double ha = capmode_headroom(a), hb = capmode_headroom(b);
  if (ha != hb) return ha > hb;
  return a->index < b->index;
}

bool capmode_best_by_mode(const capacity_set *s, int *agg, int *disagg) {
  bool seen[2] = {false, false};
  int best[2] = {-1, -1};
  for (size_t i = 0; i < s->n; i++) {
    const cap_candidate *c = &s->c[i];
    int k = c->cfg.deploy.disagg ? 1 : 0;
    seen[k] = true;
    if (!c->feasible || c->max_rate <= 0 || c->verified != 1 || c->no_instance[0]) continue;
    if (best[k] < 0 || capmode_cheaper(c, &s->c[best[k]])) best[k] = (int)i;
  }
  *agg = best[0];
  *disagg = best[1];
  return seen[0] && seen[1];
}

/* "LABEL: R replica(s) of LAYOUT = G GPUs ($X/h), p99 ... at the target" */
static void one(const capacity_set *s, const cap_candidate *c, char *buf, size_t n, size_t *o) {
#define ADD(...) *o += (size_t)snprintf(buf + *o, *o < n ? n - *o : 0, __VA_ARGS__)
  char lay[160];
  deploy_layout_text(&c->cfg.deploy, lay, sizeof lay);
  ADD("%s, %u x (%s) = %u GPU%s", c->label, c->replicas, lay, c->gpus, c->gpus == 1 ? "" : "s");
  if (c->usd_per_hour > 0) ADD(" at $%.2f/h", c->usd_per_hour);
  ADD(" (");
  for (int k = 0; k < s->slo.n; k++) ADD("%s%s %.4g ms", k ? ", " : "", s->slo.it[k].key, c->verify_slo.value_ms[k]);
  ADD("; one replica %.3g req/s)", c->max_rate);
#undef ADD
}

void capmode_compare(const capacity_set *s, char *buf, size_t n, size_t *o) {
  int a, d;
  if (!capmode_best_by_mode(s, &a, &d)) return;
#define ADD(...) *o += (size_t)snprintf(buf + *o, *o < n ? n - *o : 0, __VA_ARGS__)
  ADD("Aggregated or disaggregated at %g req/s: ", s->target_rate);
  if (a < 0 && d < 0) {
    ADD("no candidate of either mode meets the SLOs. ");
    return;
  }
  for (int k = 0; k < 2; k++) {
    int i = k ? d : a;
    ADD("%s", k ? "; disaggregated: " : "aggregated: ");
    if (i < 0) ADD("no candidate meets the SLOs");
    else one(s, &s->c[i], buf, n, o);
  }
  if (a >= 0 && d >= 0) {
    const cap_candidate *A = &s->c[a], *D = &s->c[d];
    bool usd = A->usd_per_hour > 0 && D->usd_per_hour > 0;
    double x = usd ? A->usd_per_hour : A->gpus, y = usd ? D->usd_per_hour : D->gpus;
    double lo = x < y ? x : y, hi = x < y ? y : x;
    double ha = capmode_headroom(A), hd = capmode_headroom(D);
    if (x == y && ha != hd)
      ADD(": both cost the same, and the %s one has more headroom (%.3g vs %.3g req/s: req/s per replica x "
          "replicas)", ha > hd ? "aggregated" : "disaggregated", ha > hd ? ha : hd, ha > hd ? hd : ha);
    else if (x == y) ADD(": both cost the same");
    else if (usd) ADD(": %s is %.0f%% cheaper ($%.2f/h vs $%.2f/h)", x < y ? "aggregated" : "disaggregated",
                      100.0 * (hi - lo) / hi, lo, hi);
    else ADD(": %s needs %.0f%% fewer GPUs (%.0f vs %.0f)", x < y ? "aggregated" : "disaggregated",
             100.0 * (hi - lo) / hi, lo, hi);
  }
  ADD(". ");
#undef ADD
}
