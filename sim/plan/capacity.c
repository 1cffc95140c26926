/* capacity.c: per-candidate rate search (one replica, bisection on the
 * thread pool), replicas for the target, verification of the cheapest, and
 * the verdicts (see capacity.h). Workers write only their own candidate. */
#include "config/mig.h"
#include "config/settings.h"
#include "plan/capacity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/capacity_modes.h"
#include "plan/plan.h"

static void set_rate(scenario *sc, double rate) {
  if (sc->trace_path[0]) sc->target_rate = rate;
  else sc->gen.request_rate = rate;
}

/* Time limit of a probe: last arrival + 30 s + the longest an SLO-meeting
 * request may take (see capacity.h); the scenario's own limit wins. */
static void set_time_limit(const capacity_set *s, scenario *sc) {
  if (s->base.time_limit_s > 0) return;
  trace t;
  sim_err err;
  double last = 0;
  if (!runner_load_workload(sc, &t, &err) && t.n) last = (double)t.reqs[t.n - 1].arrival_ns / 1e9;
  trace_free(&t);
  double ttft = fmax(0, slo_limit(&s->slo, SLO_TTFT)), tpot = fmax(0, slo_limit(&s->slo, SLO_TPOT));
  double e2el = fmax(0, slo_limit(&s->slo, SLO_E2EL));
  double longest_ms = fmax(fmax(ttft, e2el), ttft + tpot * s->base_stats.output_max);
  sc->time_limit_s = last + 30.0 + longest_ms / 1000.0;
}

typedef struct probe_ctx {
  const capacity_set *s;
  cap_candidate *c;
  const scenario *sc; /* the candidate, one replica */
} probe_ctx;

static int probe(void *ctx, double rate, bool *ok, sim_err *err) {
  probe_ctx *p = ctx;
  cap_candidate *c = p->c;
  scenario *sc = sim_malloc(sizeof *sc);
  sweep_row *row = sim_calloc(1, sizeof *row);
  *sc = *p->sc;
  set_rate(sc, rate);
  set_time_limit(p->s, sc);
  sweep_eval(sc, &p->s->slo, &p->s->price, row, NULL);
  capacity_conf_judge(p->s, &row->strat, &row->slo);
  free(sc);
  if (!row->feasible) {
    int rc = sim_errf(err, SIM_EINPUT, "%s", row->reason);
    free(row);
    return rc;
  }
  int k = c->bis.n_probes; /* c->bis is bisect_max's live result: it records this probe at k after we return */
  if (k == 0) c->cfg = *row;
  cap_probe *pr = &c->probe[k];
  pr->rate = rate;
  pr->ok = *ok = row->slo.all_ok;
  memcpy(pr->value_ms, row->slo.value_ms, sizeof pr->value_ms);
  pr->output_tput = row->sum.output_throughput;
  pr->request_tput = row->sum.request_throughput;
  pr->unfinished = row->slo.unfinished;
  pr->limit = row->bn.primary;
  if (!pr->ok && (c->fail_rate == 0 || rate < c->fail_rate)) {
    c->fail_rate = rate;
    c->fail_slo = row->slo.first_fail;
    c->fail_value_ms = row->slo.first_fail >= 0 ? row->slo.value_ms[row->slo.first_fail] : 0;
    c->limit = row->bn.primary;
    snprintf(c->fail_explain, sizeof c->fail_explain, "%s", row->bn.explain);
  }
  free(row);
  return 0;
}

/* A start rate from the plan: half the decode throughput at the largest
 * batch (of the decode pool's workers for --mode disagg), in requests of the
 * mean output length. *dec: the plan of the decode figures. */
static double start_rate(const capacity_set *s, const scenario *sc, cap_candidate *c, plan_result pl[2],
                         const plan_result **dec) {
  const trace_stats *t = &s->base_stats;
  plan_opts po = {(uint32_t)fmin(fmax(16, t->prompt_mean + t->output_mean / 2), 1024), 0, 0};
  sweep_row *e = &c->cfg; /* configuration echo, refined by the first probe */
  snprintf(e->gpu, sizeof e->gpu, "%.63s", sc->gpu);
  snprintf(e->model, sizeof e->model, "%.63s", sc->model);
  e->deploy = sc->deploy;
  settings_fill(&e->deploy, NULL, SD_ONE); /* config/'s rule for the sizes, until the plan resolves them */
  e->replicas = 1;
  e->gpus = capmode_unit_gpus(&e->deploy);
  bool fits;
  *dec = capmode_plan(pl, sc, &po, c, &fits);
  if (!*dec) {
    c->feasible = false;
    return 0;
  }
  e->price_per_gpu_hour = price_lookup(&s->price, &(*dec)->gpu);
  if (!fits) {
    c->feasible = false;
    return 0;
  }
  c->feasible = true;
  double out = t->output_mean > 1 ? t->output_mean : 1;
  uint32_t workers = sc->deploy.disagg && sc->deploy.decode_workers ? sc->deploy.decode_workers : 1;
  double r = (*dec)->max_batch ? 0.5 * workers * (*dec)->decode_max.tokens_per_s / out : 1;
  return r > 0 ? r : 1;
}

static void work(void *ctx, size_t i) {
  capacity_set *s = ctx;
  cap_candidate *c = &s->c[i];
  scenario *sc = sim_malloc(sizeof *sc);
  plan_result *pl = sim_calloc(2, sizeof *pl); /* --mode disagg: the prefill and the decode pool's */
  const plan_result *dec = NULL;
  *sc = s->base;
  sim_err err;
  c->fail_slo = -1;
  if (grid_apply(&c->pt, sc, &err)) {
    snprintf(c->reason, sizeof c->reason, "%s", err.msg);
    goto done;
  }
  sc->deploy.replicas = 1;
  double start = start_rate(s, sc, c, pl, &dec);
  if (!c->feasible) goto done;
  /* early out: TPOT can never beat the decode step of a batch of one */
  double tpot = slo_limit(&s->slo, SLO_TPOT);
  if (tpot > 0 && dec->decode1.ns / 1e6 > tpot) {
    /* one probe at the start rate, for the configuration echo and the chart */
    probe_ctx px = {s, c, sc};
    bool ok;
    memset(&c->bis, 0, sizeof c->bis);
    c->bis.bad = INFINITY;
    if (probe(&px, start, &ok, &err)) goto infeasible;
    c->bis.probe_x[0] = start;
    c->bis.probe_ok[0] = ok;
    c->bis.n_probes = 1;
    /* the verdict is the step time, whatever that probe measured */
    c->fail_slo = -1;
    c->limit = dec->decode1.bound == BOUND_COMPUTE ? LIMIT_COMPUTE
               : dec->decode1.bound == BOUND_COMM  ? LIMIT_INTERCONNECT
               : dec->decode1.bound == BOUND_CPU   ? LIMIT_CPU
                                                   : LIMIT_HBM;
    snprintf(c->fail_explain, sizeof c->fail_explain,
             "a decode step at batch 1 already takes %.1f ms, more than the %g ms TPOT objective (%.0f%% %s)",
             dec->decode1.ns / 1e6, tpot, 100 * dec->decode1.bound_share, limit_name(c->limit));
    goto done;
  }
  bisect_opts bo = s->bo;
  bo.start = start;
  probe_ctx px = {s, c, sc};
  if (bisect_max(&bo, probe, &px, &c->bis, &err)) goto infeasible;
  c->max_rate = c->bis.found ? c->bis.good : 0;
  goto done;
infeasible:
  c->feasible = false;
  snprintf(c->reason, sizeof c->reason, "%s", err.msg);
done:
  free(sc);
  free(pl);
}

/* ---- cost ------------------------------------------------------------------------ */

/* GPUs and dollars of c's replicas: per GPU-hour, or with a catalog per rented instance (the cheapest type
 * that holds them, replicas packed several per instance when they fit). */
static void cost_of(const capacity_set *s, cap_candidate *c) {
  uint32_t per_replica = capmode_unit_gpus(&c->cfg.deploy);
  c->gpus = c->replicas * per_replica;
  c->usd_per_hour = c->gpus * c->cfg.price_per_gpu_hour; /* a MIG slice: its share of the GPU's price (mig.h) */
  c->inst = -1;
  c->no_instance[0] = 0;
  gpu_cfg g, w;
  sim_err err;
  if (cfg_gpu_load(&g, c->cfg.gpu, &err)) {
    if (s->n_inst) snprintf(c->no_instance, sizeof c->no_instance, "%.500s", err.msg);
    return;
  }
  if (g.mig_parent[0] && !cfg_gpu_load(&w, g.mig_parent, &err)) { /* whole GPUs, each cut into this profile */
    const mig_profile *m = mig_find(&w, strchr(g.name, ':') + 1);
    if (m) c->gpus = (c->replicas + m->max_instances - 1) / m->max_instances;
  }
  if (!s->n_inst) return;
  double best = INFINITY;
  char why[256] = "";
  for (uint32_t k = 0; k < s->n_inst; k++) {
    uint32_t n = 0, per; /* per: replicas one instance holds; a disaggregated group's pools are packed apart (0) */
    bool dis = c->cfg.deploy.disagg;
    if (dis) per = 0, n = capmode_instances(&s->inst[k], &g, &c->cfg.deploy, c->replicas, why, sizeof why);
    else per = instance_pack(&s->inst[k], &g, per_replica, c->replicas, &n, why, sizeof why);
    double usd = n * s->inst[k].price_per_hour;
    if ((per || (dis && n)) && usd < best) best = usd, c->inst = (int)k, c->n_instances = n, c->per_instance = per;
  }
  if (c->inst < 0) {
    snprintf(c->no_instance, sizeof c->no_instance, "no instance of the catalog holds it (%s%s)", why,
             s->n_inst > 1 ? ", and the others likewise" : "");
    c->usd_per_hour = 0;
    return;
  }
  c->usd_per_hour = best;
}

int capacity_set_instances(capacity_set *s, const char *list, sim_err *err) {
  char buf[2048];
  if (strlen(list) >= sizeof buf) return sim_errf(err, SIM_EINPUT, "--instances: list too long");
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    s->inst = sim_realloc(s->inst, (s->n_inst + 1) * sizeof *s->inst);
    int rc = cfg_instance_load(&s->inst[s->n_inst], tok, err);
    if (rc) return sim_err_prefix(err, "--instances %s", tok);
    s->n_inst++;
  }
  if (!s->n_inst) return sim_errf(err, SIM_EINPUT, "--instances: no instance named");
  return SIM_OK;
}

/* ---- verification ------------------------------------------------------------ */

/* One fleet of R replicas of c behind a least_outstanding router at the target rate: whether it meets every
 * SLO (the probe recorded on c); *keep gets the run when it does and keep is given, else it is freed. */
static bool fleet_run(capacity_set *s, cap_candidate *c, uint32_t R, run_ctx **keep, bool *feasible) {
  scenario *sc = sim_malloc(sizeof *sc);
  sweep_row *row = sim_calloc(1, sizeof *row);
  sim_err err;
  *sc = s->base;
  grid_apply(&c->pt, sc, &err);
  capmode_scale(&sc->deploy, R); /* R replicas, or a disaggregated group's pools R times over */
  sc->deploy.router = ROUTE_LEAST_OUTSTANDING;
  set_rate(sc, s->target_rate);
  set_time_limit(s, sc);
  run_ctx *run = NULL;
  sweep_eval(sc, &s->slo, &s->price, row, &run);
  capacity_conf_judge(s, &row->strat, &row->slo);
  s->n_verify_runs++;
  free(sc);
  bool ok = row->feasible && row->slo.all_ok;
  *feasible = row->feasible;
  if (c->n_fleet < CAP_FLEET_MAX) {
    cap_fleet_probe *f = &c->fleet[c->n_fleet++];
    f->replicas = R, f->ok = ok;
    memcpy(f->value_ms, row->slo.value_ms, sizeof f->value_ms);
  }
  if (ok) {
    c->verify_slo = row->slo;
    c->verify_sum = row->sum;
  }
  if (ok && keep) {
    if (*keep) {
      runner_free(*keep);
      free(*keep);
    }
    *keep = run;
  } else if (run) {
    runner_free(run);
    free(run);
  }
  free(row);
  return ok;
}

/* Fleet sizing by simulation: the per-replica estimate ceil(target / max_rate) is where the search starts; a
 * fleet behind the router absorbs bursts one replica alone cannot, so the search goes down while the fleet
 * still meets the SLOs, or up (at most CAP_VERIFY_EXTRA) until it does. The answer is the smallest simulated
 * fleet that meets them: one replica fewer was simulated and missed (or it is one replica). Returns its run
 * (for the reports), or NULL when no fleet passed. */
static run_ctx *verify(capacity_set *s, cap_candidate *c) {
  run_ctx *kept = NULL;
  bool feasible = true;
  uint32_t R = c->estimate;
  c->n_fleet = 0;
  if (fleet_run(s, c, R, &kept, &feasible)) {
    /* down in doubling steps (R-1, R-2, R-4, ...) to the first fleet that misses, then bisect between them:
       the usual answer (R or R-1) costs two runs, a fleet far below the estimate log2 of the gap */
    uint32_t pass = R, fail = 0, step = 1;
    while (c->n_fleet < CAP_FLEET_MAX) {
      uint32_t lo = fail + 1;
      if (pass <= lo) break; /* pass == fail + 1, or pass is one replica */
      uint32_t next = fail ? fail + (pass - fail) / 2 : (pass > step ? pass - step : 1);
      if (next < lo) next = lo;
      if (fleet_run(s, c, next, &kept, &feasible)) pass = next;
      else fail = next;
      if (!fail) step *= 2;
    }
    R = pass;
    c->verified = 1;
    c->replicas = R;
    cost_of(s, c);
    return kept;
  }
  for (uint32_t up = R + 1; feasible && up <= R + CAP_VERIFY_EXTRA && c->n_fleet < CAP_FLEET_MAX; up++)
    if (fleet_run(s, c, up, &kept, &feasible)) {
      c->verified = 1;
      c->replicas = up;
      cost_of(s, c);
      return kept;
    }
  c->verified = -1;
  return NULL;
}

/* Every candidate that can start and has a rate is sized by simulation (verify), cheapest estimate first: a
 * fleet can need fewer replicas than its estimate, so a candidate whose estimate costs more than the best so
 * far may still win. The recommendation is the cheapest verified candidate (capmode_cheaper: cost, then GPUs,
 * then the fleet's headroom). */
static void recommend(capacity_set *s) {
  s->best = -1;
  for (;;) {
    int next = -1;
    for (size_t i = 0; i < s->n; i++) {
      cap_candidate *c = &s->c[i];
      if (!c->feasible || c->max_rate <= 0 || c->verified || c->no_instance[0]) continue;
      if (next < 0 || capmode_cheaper(c, &s->c[next])) next = (int)i;
    }
    if (next < 0) break;
    run_ctx *run = verify(s, &s->c[next]);
    if (s->c[next].verified == 1 && (s->best < 0 || capmode_cheaper(&s->c[next], &s->c[s->best]))) {
      s->best = next;
      if (s->verify_run) {
        runner_free(s->verify_run);
        free(s->verify_run);
      }
      s->verify_run = run;
    } else if (run) {
      runner_free(run);
      free(run);
    }
  }
}

/* ---- verdicts -------------------------------------------------------------- */

static void explain(capacity_set *s, cap_candidate *c) {
  char *w = c->why;
  size_t n = sizeof c->why, o = 0;
#define ADD(...) o += (size_t)snprintf(w + o, o < n ? n - o : 0, __VA_ARGS__)
  if (!c->feasible) {
    ADD("cannot start: %s", c->reason);
    return;
  }
  const cap_candidate *b = s->best >= 0 ? &s->c[s->best] : NULL;
  if (c->max_rate <= 0) {
    ADD("misses the SLOs at any rate");
    if (c->fail_slo >= 0)
      ADD(": even at %.3g req/s %s is %.4g ms (objective %g ms); %s", c->fail_rate, s->slo.it[c->fail_slo].key,
          c->fail_value_ms, s->slo.it[c->fail_slo].limit_ms, c->fail_explain);
    else ADD(": %s", c->fail_explain);
    return;
  }
  ADD("one replica sustains %.3g req/s at the SLOs", c->max_rate);
  if (c->bis.unbounded) ADD(" (the top of the search range)");
  else if (c->fail_slo >= 0)
    ADD("; at %.3g req/s %s reaches %.4g ms%s (objective %g ms), %s binds", c->fail_rate, s->slo.it[c->fail_slo].key,
        c->fail_value_ms, capacity_conf_note(s, c, c->fail_slo, c->fail_value_ms), s->slo.it[c->fail_slo].limit_ms,
        limit_name(c->limit));
  ADD(": %u replica%s = %u GPU%s", c->replicas, c->replicas == 1 ? "" : "s", c->gpus, c->gpus == 1 ? "" : "s");
  if (c->verified == 1 && c->replicas != c->estimate)
    ADD(" (the fleet simulated behind the router; %u by one replica's rate)", c->estimate);
  if (c->no_instance[0]) {
    ADD("; %s", c->no_instance);
    return;
  }
  if (c->inst >= 0 && c->per_instance)
    ADD(" on %u x %s (%u replica%s each, $%.2f/h each)", c->n_instances, s->inst[c->inst].name, c->per_instance,
        c->per_instance == 1 ? "" : "s", s->inst[c->inst].price_per_hour);
  else if (c->inst >= 0)
    ADD(" on %u x %s (each pool's workers packed apart, $%.2f/h each)", c->n_instances, s->inst[c->inst].name,
        s->inst[c->inst].price_per_hour);
  if (c->usd_per_hour > 0) ADD(" ($%.2f/h)", c->usd_per_hour);
  if (c->verified == 1) ADD(", verified at %g req/s", s->target_rate);
  else if (c->verified == -1)
    ADD(", but a fleet of %u to %u replicas at %g req/s missed the SLOs", c->estimate, c->estimate + CAP_VERIFY_EXTRA,
        s->target_rate);
  if (b == c) ADD("; the cheapest: recommended");
  else if (b && c->usd_per_hour > 0 && b->usd_per_hour > 0 && c->usd_per_hour > b->usd_per_hour)
    ADD("; $%.2f/h more than the recommendation", c->usd_per_hour - b->usd_per_hour);
  else if (b && c->usd_per_hour > 0 && c->usd_per_hour == b->usd_per_hour)
    ADD("; costs the same as the recommendation, which %s", c->gpus != b->gpus ? "needs fewer GPUs"
                                                          : capmode_headroom(c) != capmode_headroom(b)
                                                              ? "has more headroom (req/s per replica x replicas)"
                                                              : "comes first");
  else if (b) ADD("; %d more GPU%s than the recommendation", (int)c->gpus - (int)b->gpus, c->gpus - b->gpus == 1 ? "" : "s");
#undef ADD
}

static void summarize(capacity_set *s) {
  char d[512];
  slo_describe(&s->slo, d, sizeof d);
  size_t o = 0, n = sizeof s->summary;
  char *w = s->summary;
#define ADD(...) o += (size_t)snprintf(w + o, o < n ? n - o : 0, __VA_ARGS__)
  if (s->best < 0) {
    ADD("No candidate serves %g req/s at %s. ", s->target_rate, d);
  } else {
    const cap_candidate *b = &s->c[s->best];
    char pp[24] = "", lay[160];
    if (b->cfg.deploy.pp > 1) snprintf(pp, sizeof pp, " x PP%u", b->cfg.deploy.pp);
    if (b->cfg.deploy.dp > 1) snprintf(pp, sizeof pp, " x DP%u", b->cfg.deploy.dp);
    if (b->cfg.deploy.disagg) { /* a replica is one xPyD group: R of them are pools R times over */
      deploy_layout_text(&b->cfg.deploy, lay, sizeof lay);
      ADD("Serve %g req/s at %s with %s: %u x (%s) on %s, i.e. %u prefill and %u decode workers = %u GPU%s",
          s->target_rate, d, b->label, b->replicas, lay, b->cfg.gpu, b->replicas * b->cfg.deploy.prefill_workers,
          b->replicas * b->cfg.deploy.decode_workers, b->gpus, b->gpus == 1 ? "" : "s");
    } else {
      ADD("Serve %g req/s at %s with %s: %u replica%s of TP%u%s on %s = %u GPU%s", s->target_rate, d, b->label,
          b->replicas, b->replicas == 1 ? "" : "s", b->cfg.deploy.tp, pp, b->cfg.gpu, b->gpus,
          b->gpus == 1 ? "" : "s");
    }
    if (b->inst >= 0) {
      const instance_cfg *in = &s->inst[b->inst];
      ADD(", rented as %u x %s (%s, %u GPUs each) at $%.2f per hour; price %s%s%s%s", b->n_instances, in->name,
          in->provider, in->gpu_count, b->usd_per_hour, in->price_assumed ? "ASSUMED: " : "from ", in->price_source,
          in->price_date[0] ? ", " : "", in->price_date);
    } else if (b->usd_per_hour > 0) {
      ADD(" ($%.2f per hour)", b->usd_per_hour);
    }
    ADD(". Sized by simulating %g req/s on %u replica%s (least-outstanding router):", s->target_rate, b->replicas,
        b->replicas == 1 ? "" : "s");
    capacity_conf_values(s, w, n, &o);
    const cap_fleet_probe *fewer = NULL; /* the fleet one replica smaller, when it was simulated */
    for (uint32_t k = 0; k < b->n_fleet; k++)
      if (b->fleet[k].replicas + 1 == b->replicas) fewer = &b->fleet[k];
    if (fewer) {
      ADD(" With %u replica%s it misses them (", fewer->replicas, fewer->replicas == 1 ? "" : "s");
      for (int k = 0; k < s->slo.n; k++) ADD("%s%s %.4g ms", k ? ", " : "", s->slo.it[k].key, fewer->value_ms[k]);
      ADD(").");
    }
    if (b->replicas != b->estimate)
      ADD(" One replica's rate alone would have asked for %u: the fleet behind the router absorbs bursts one replica "
          "cannot.", b->estimate);
    ADD(" One replica sustains %.3g req/s at the SLOs", b->max_rate);
    if (!b->bis.unbounded && b->fail_slo >= 0) ADD("; beyond that %s binds", limit_name(b->limit));
    ADD(". ");
  }
  capacity_conf_text(s, w, n, &o);
  capmode_compare(s, w, n, &o);
  size_t nf = 0, nm = 0;
  for (size_t i = 0; i < s->n; i++) nf += !s->c[i].feasible, nm += s->c[i].feasible && s->c[i].max_rate <= 0;
  ADD("%zu candidate%s: %zu cannot start, %zu miss%s the SLOs at any rate, %zu meet%s them.", s->n, s->n == 1 ? "" : "s",
      nf, nm, nm == 1 ? "es" : "", s->n - nf - nm, s->n - nf - nm == 1 ? "s" : "");
#undef ADD
}

/* MIG layouts of one GPU: a slice profile's rate per replica x the instances of it one GPU holds (each slice
 * is isolated: its own SMs, memory and bandwidth, so slices side by side do not slow each other), and
 * NVIDIA's mixed all-balanced layout when every profile of it was a candidate. Names the best per GPU. */
static void mig_layouts(capacity_set *s) {
  size_t o = 0, n = sizeof s->mig_layouts;
  char *w = s->mig_layouts;
  w[0] = 0;
#define ADD(...) o += (size_t)snprintf(w + o, o < n ? n - o : 0, __VA_ARGS__)
  char done[8][64];
  int n_done = 0;
  for (size_t i = 0; i < s->n && n_done < 8; i++) {
    gpu_cfg whole;
    sim_err ignore;
    char parent[64], pname[64];
    /* candidates name slices "gpu:profile" (the slice's name, mig.h): the whole GPU is read once per GPU */
    if (!mig_split(s->c[i].cfg.gpu, parent, sizeof parent, pname, sizeof pname)) continue;
    bool seen = false;
    for (int k = 0; k < n_done; k++) seen |= !strcmp(done[k], parent);
    if (seen || cfg_gpu_load(&whole, parent, &ignore)) continue;
    snprintf(done[n_done++], sizeof done[0], "%s", parent);
    double best = 0;
    char best_name[256] = "";
    ADD("%sMIG layouts of one %s (a profile's req/s per slice x the slices of it one GPU holds; slices are isolated):",
        o ? "\n" : "", whole.name);
    for (size_t j = 0; j < s->n; j++) {
      if (!mig_split(s->c[j].cfg.gpu, parent, sizeof parent, pname, sizeof pname) || strcmp(parent, whole.name))
        continue;
      const mig_profile *m = mig_find(&whole, pname);
      if (!m) continue;
      double per_gpu = s->c[j].feasible ? s->c[j].max_rate * m->max_instances : 0;
      ADD(" %u x %s %s", m->max_instances, pname,
          !s->c[j].feasible ? "cannot start;" : per_gpu > 0 ? "" : "misses the SLOs;");
      if (per_gpu > 0) ADD("%.3g req/s;", per_gpu);
      if (per_gpu > best) {
        best = per_gpu;
        snprintf(best_name, sizeof best_name, "%u x %s (each slice %.3g req/s at the SLOs, then %s binds)",
                 m->max_instances, pname, s->c[j].max_rate, limit_name(s->c[j].limit));
      }
    }
    if (whole.mig_balanced[0]) { /* "2x1g.18gb+1x2g.35gb+1x3g.71gb" */
      double sum = 0;
      bool all = true;
      char buf[128];
      snprintf(buf, sizeof buf, "%s", whole.mig_balanced);
      char *save = NULL;
      for (char *part = strtok_r(buf, "+", &save); part && all; part = strtok_r(NULL, "+", &save)) {
        unsigned cnt = 0;
        char pn[32];
        all = sscanf(part, "%ux%31s", &cnt, pn) == 2;
        double r = 0;
        bool found = false;
        for (size_t j = 0; all && j < s->n && !found; j++) {
          const char *c = strchr(s->c[j].cfg.gpu, ':');
          if (c && !strncmp(s->c[j].cfg.gpu, whole.name, (size_t)(c - s->c[j].cfg.gpu)) && !strcmp(c + 1, pn))
            found = true, r = s->c[j].feasible ? s->c[j].max_rate : 0;
        }
        all = all && found && r > 0;
        sum += cnt * r;
      }
      if (all) {
        ADD(" all-balanced (%s) %.3g req/s;", whole.mig_balanced, sum);
        if (sum > best) best = sum, snprintf(best_name, sizeof best_name, "all-balanced (%s)", whole.mig_balanced);
      } else {
        ADD(" all-balanced (%s): not every profile of it is a candidate that meets the SLOs;", whole.mig_balanced);
      }
    }
    if (best > 0)
      ADD(" best: %s, %.3g req/s per %s. Each slice holds its own copy of the weights: smaller slices leave less "
          "memory for the KV cache and batch fewer requests, while a larger one shares its SMs and bandwidth among "
          "more requests.", best_name, best, whole.name);
    else ADD(" no layout meets the SLOs.");
  }
  if (o && !s->n_inst)
    ADD(" (GPUs above are whole GPUs cut into that profile; $/hour prices a slice at its share N/7 of the GPU-hour, "
        "an assumption: --instances prices what one rents.)");
#undef ADD
}

/* ---- public ---------------------------------------------------------------- */

int capacity_prepare(capacity_set *s, const scenario *base, const grid_spec *g, const bisect_opts *bo, sim_err *err) {
  memset(s, 0, sizeof *s);
  s->best = -1;
  if (!g->slo.n)
    return sim_errf(err, SIM_EINPUT, "capacity needs at least one objective: --slo ttft_p99=2000 --slo tpot_p99=50 "
                    "(or \"slo_ms\" in the spec file)");
  if (!(g->target_rate > 0))
    return sim_errf(err, SIM_EINPUT, "--target-rate R is required: the req/s the deployment must serve (or \"target_rate\" in the spec file)");
  const grid_axis_id banned[] = {(grid_axis_id)grid_axis_of_key("replicas"), AX_RATE, AX_CONC, AX_RATE_SCALE};
  static const char *const why[] = {"capacity computes the replicas", "capacity searches the rate (use --target-rate)",
                                    "capacity needs an open-loop workload", "give one --rate-scale for the base workload"};
  for (size_t k = 0; k < SIM_ARRAY_LEN(banned); k++)
    if (g->n[banned[k]] || (g->n_configs && g->configs[0].set[banned[k]]))
      return sim_errf(err, SIM_EINPUT, "%s: %s is not a candidate axis: %s", g->n[banned[k]] ? g->src[banned[k]] : g->file,
                      grid_axis_key(banned[k]), why[k]);
  if (base->max_concurrency)
    return sim_errf(err, SIM_EINPUT, "--max-concurrency: capacity needs an open-loop workload (a closed loop has no rate)");
  if (!base->trace_path[0] && isinf(base->gen.request_rate) && base->gen.num_prompts < 2)
    return sim_errf(err, SIM_EINPUT, "the generated workload needs at least 2 requests");
  sweep_set tmp; /* checks names, the workload and every point */
  int rc = sweep_prepare(&tmp, base, g, &g->slo, &g->price, err);
  sweep_free(&tmp);
  if (rc) return rc;
  s->base = *base;
  s->grid = *g;
  s->slo = g->slo;
  s->price = g->price;
  s->target_rate = g->target_rate;
  s->bo = *bo;
  trace t;
  if ((rc = runner_load_workload(base, &t, err))) {
    trace_free(&t);
    return rc;
  }
  trace_compute_stats(&t, &s->base_stats);
  trace_free(&t);
  size_t n = grid_size(g);
  s->c = sim_calloc(n, sizeof *s->c);
  bool any_disagg = false;
  for (size_t i = 0; i < n; i++) { /* aggregated points that differ only by pool settings: one candidate */
    cap_candidate *c = &s->c[s->n];
    grid_point_at(g, i, &c->pt);
    if (!capmode_keep_point(g, base, &c->pt)) continue;
    any_disagg |= capmode_point_disagg(base, &c->pt);
    c->index = i;
    grid_label(&c->pt, c->label, sizeof c->label);
    s->n++;
  }
  if (capmode_pool_axes(g) && !any_disagg) {
    capacity_free(s);
    return sim_errf(err, SIM_EINPUT, "the prefill/decode pool settings shape disaggregated candidates only: add "
                    "--mode disagg (or --mode agg,disagg to compare both)");
  }
  return SIM_OK;
}

int capacity_execute(capacity_set *s, unsigned jobs, pool_progress_fn progress, void *pctx, sim_err *err) {
  int rc = pool_run(s->n, jobs, work, s, progress, pctx, err);
  if (rc) return rc;
  capacity_finish(s);
  return SIM_OK;
}

/* Shard k of n: the candidates i with i % n == k - 1 (sweep_shard_rows). */
int capacity_execute_shard(capacity_set *s, size_t k, size_t n, unsigned jobs, pool_progress_fn progress, void *pctx,
                           sim_err *err) {
  return plan_run_shard(s->n, k, n, work, s, jobs, progress, pctx, err);
}

void capacity_finish(capacity_set *s) {
  for (size_t i = 0; i < s->n; i++) {
    cap_candidate *c = &s->c[i];
    if (!c->feasible || c->max_rate <= 0) continue;
    double per = c->bis.unbounded ? s->bo.hi : c->max_rate;
    c->replicas = (uint32_t)ceil(s->target_rate / per - 1e-9);
    if (c->replicas < 1) c->replicas = 1;
    c->estimate = c->replicas;
    cost_of(s, c);
  }
  recommend(s);
  mig_layouts(s);
  for (size_t i = 0; i < s->n; i++) explain(s, &s->c[i]);
  summarize(s);
}

void capacity_free(capacity_set *s) {
  plan_iv_free(&s->iv);
  if (s->verify_run) {
    runner_free(s->verify_run);
    free(s->verify_run);
  }
  free(s->c);
  free(s->inst);
  memset(s, 0, sizeof *s);
  s->best = -1;
}
