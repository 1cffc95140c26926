/* capacity_conf.c: capacity at a stated confidence and the recommendation's intervals (see capacity.h and
 * plan_iv.h for the rule: an SLO is met at confidence P when value x e^{q(P)} <= limit, q the one-sided P quantile
 * of the residuals of the SLO metric's mean in the candidate's stratum). */
#include <math.h>
#include <string.h>

#include "plan/capacity.h"

int capacity_set_intervals(capacity_set *s, double level, const char *path, double confidence, sim_err *err) {
  if (!(confidence == 0 || (confidence > 0 && confidence <= UNC_MAX_LEVEL)))
    return sim_errf(err, SIM_EINPUT, "--confidence must be 0 (the point estimate) or in (0, %g], got %g",
                    UNC_MAX_LEVEL, confidence);
  plan_iv_free(&s->iv);
  s->confidence = confidence;
  return plan_iv_load(&s->iv, level, path, confidence > 0, err);
}

void capacity_set_alone(capacity_set *s, const capacity_set *point) {
  cap_alone *a = &s->alone;
  memset(a, 0, sizeof *a);
  a->have = true;
  if (point->best < 0) return;
  const cap_candidate *b = &point->c[point->best];
  a->found = true;
  snprintf(a->label, sizeof a->label, "%s", b->label);
  a->replicas = b->replicas;
  a->gpus = b->gpus;
  a->usd_per_hour = b->usd_per_hour;
  a->max_rate = b->max_rate;
}

void capacity_conf_judge(const capacity_set *s, const stratum *st, slo_result *r) {
  if (!(s->confidence > 0) || !s->iv.loaded || r->n <= 0) return; /* n 0: the run did not start (no values) */
  r->all_ok = true;
  r->first_fail = -1;
  for (int k = 0; k < r->n && k < s->slo.n; k++) {
    char key[32];
    double f = plan_iv_factor(&s->iv.t, st, s->slo.it[k].metric, s->confidence, key);
    r->ok[k] = r->value_ms[k] * f <= s->slo.it[k].limit_ms; /* an infinite value stays a miss */
    if (!r->ok[k] && r->all_ok) r->first_fail = k;
    r->all_ok = r->all_ok && r->ok[k];
  }
}

/* "ttft_p99 x 2.98 (ttft residuals of KEY), ...": each SLO's factor in stratum st. */
static void factors(const capacity_set *s, const stratum *st, char *w, size_t n, size_t *o) {
#define ADD(...) *o += (size_t)snprintf(w + *o, *o < n ? n - *o : 0, __VA_ARGS__)
  for (int k = 0; k < s->slo.n; k++) {
    char key[32];
    double f = plan_iv_factor(&s->iv.t, st, s->slo.it[k].metric, s->confidence, key);
    if (key[0])
      ADD("%s%s x %.3g (%s residuals of %s)", k ? ", " : "", s->slo.it[k].key, f,
          unc_metric_name(plan_iv_slo_metric(s->slo.it[k].metric)), key);
    else ADD("%s%s x 1 (no residual data: the point estimate)", k ? ", " : "", s->slo.it[k].key);
  }
#undef ADD
}

void capacity_conf_text(const capacity_set *s, char *w, size_t n, size_t *o) {
  if (!(s->confidence > 0)) return;
#define ADD(...) *o += (size_t)snprintf(w + *o, *o < n ? n - *o : 0, __VA_ARGS__)
  ADD("At confidence %g: every SLO judged on the predicted value times e^q, q the %g quantile of ln(measured / "
      "predicted) of each candidate's stratum (%s)", s->confidence, s->confidence, s->iv.t.source);
  if (s->best >= 0) {
    const cap_candidate *b = &s->c[s->best];
    char key[32];
    stratum_key(&b->cfg.strat, key, sizeof key);
    ADD("; the recommendation's stratum %s: ", key);
    factors(s, &b->cfg.strat, w, n, o);
  }
  ADD(". ");
  const cap_alone *a = &s->alone;
  if (!a->have) return;
  const cap_candidate *b = s->best >= 0 ? &s->c[s->best] : NULL;
  if (!a->found) ADD("The point estimate alone found no candidate either way. ");
  else if (b && !strcmp(a->label, b->label) && a->replicas == b->replicas)
    ADD("The point estimate alone buys the same: %s, %u replica%s = %u GPU%s. ", a->label, a->replicas,
        a->replicas == 1 ? "" : "s", a->gpus, a->gpus == 1 ? "" : "s");
  else {
    ADD("The point estimate alone would have bought %s: %u replica%s = %u GPU%s", a->label, a->replicas,
        a->replicas == 1 ? "" : "s", a->gpus, a->gpus == 1 ? "" : "s");
    if (a->usd_per_hour > 0) ADD(" ($%.2f per hour)", a->usd_per_hour);
    ADD(", one replica sustaining %.3g req/s on the point estimate", a->max_rate);
    if (b && a->usd_per_hour > 0 && b->usd_per_hour > 0) ADD("; confidence %g costs $%.2f per hour %s", s->confidence,
                                                             fabs(b->usd_per_hour - a->usd_per_hour),
                                                             b->usd_per_hour >= a->usd_per_hour ? "more" : "less");
    ADD(". ");
  }
#undef ADD
}

void capacity_conf_values(const capacity_set *s, char *w, size_t n, size_t *o) {
  const cap_candidate *b = s->best >= 0 ? &s->c[s->best] : NULL;
  if (!b) return;
#define ADD(...) *o += (size_t)snprintf(w + *o, *o < n ? n - *o : 0, __VA_ARGS__)
  for (int k = 0; k < s->slo.n; k++) {
    unc_interval it;
    char t[80];
    plan_iv_slo(&s->iv, &b->cfg.strat, s->slo.it[k].metric, b->verify_slo.value_ms[k], &it);
    plan_iv_text(&it, "%.4g", t, sizeof t);
    ADD(" %s %.4g ms%s%s", s->slo.it[k].key, b->verify_slo.value_ms[k], t, k + 1 < s->slo.n ? "," : ".");
  }
#undef ADD
}

const char *capacity_conf_note(const capacity_set *s, const cap_candidate *c, int k, double value) {
  static _Thread_local char buf[96];
  buf[0] = 0;
  if (!(s->confidence > 0) || !s->iv.loaded || k < 0 || k >= s->slo.n) return buf;
  char key[32];
  double f = plan_iv_factor(&s->iv.t, &c->cfg.strat, s->slo.it[k].metric, s->confidence, key);
  snprintf(buf, sizeof buf, " (x %.3g = %.4g ms at confidence %g)", f, value * f, s->confidence);
  return buf;
}
