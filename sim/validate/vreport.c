/* vreport.c: the validation report as text.
 *
 * Points that failed to run are counted apart (they have no prediction) and
 * are listed; skipped points are listed with their reason.
 * Text layout: the per-point table (one row per point and published metric),
 * then "closed-loop targets", per-shape and per-group summaries, the cliff
 * confusion counts, the failed and skipped points. The errors and their
 * summaries are vstats.c's; JSON and CSV are vreport_json.c's. */
#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate.h"
#include "validate/vresid.h"

#define VREPORT_METHODS_MAX 12 /* the text names each point's method up to this many points */

/* ---- text ---------------------------------------------------------------------------- */

/* Natural order of ids: digit runs compare as numbers (c8 before c16). */
static int natcmp(const char *a, const char *b) {
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      char *ea, *eb;
      unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
      if (x != y) return x < y ? -1 : 1;
      a = ea, b = eb;
      continue;
    }
    if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

/* qsort on pointers into the set: ties keep the set's order (address order). */
static int cmp_by_id(const void *x, const void *y) {
  const vpoint *a = *(const vpoint *const *)x, *b = *(const vpoint *const *)y;
  int c = natcmp(a->id, b->id);
  return c ? c : (a < b ? -1 : a > b);
}

static void fmt_val(char *b, size_t n, double v) {
  if (!isfinite(v)) vfmt(b, n, "-");
  else if (v >= 1e5) vfmt(b, n, "%.0f", v);
  else if (v >= 100) vfmt(b, n, "%.1f", v);
  else vfmt(b, n, "%.2f", v);
}

/* minp: fewer points than this are flagged (--min-points). */
static void stats_line(FILE *f, const char *label, const verr_stats *st, size_t minp) {
  if (!st->n) {
    fprintf(f, "  %-38s %5s\n", label, "0");
    return;
  }
  fprintf(f, "  %-38s %5zu %9.1f%% %9.1f%% %+9.1f%%   %7.1f%%  %s%s\n", label, st->n, st->median_abs, st->mean_abs,
          st->median_signed, st->worst_abs, st->worst ? st->worst->id : "",
          st->n < minp ? "  [too few points to judge]" : "");
}

static void stats_header(FILE *f, const char *title) {
  fprintf(f, "\n%s\n  %-38s %5s %10s %10s %10s   %8s  %s\n", title, "metric", "n", "median|e|", "mean|e|",
          "median e", "worst", "worst point");
}

static void summary_block(FILE *f, const vset *s, const char *title, vfilter flt, const void *arg,
                          const vmetric *ms, size_t n_ms, size_t minp) {
  stats_header(f, title);
  for (size_t i = 0; i < n_ms; i++) {
    verr_stats st;
    verr_summarize(s, ms[i], flt, arg, &st);
    if (!st.n) continue;
    char label[64];
    vfmt(label, sizeof label, "%s", vmetric_name(ms[i]));
    stats_line(f, label, &st, minp);
  }
}

/* The per-point table: rows in id order, so a series reads down the page. */
static void text_table(const vset *s, const uint8_t *side, FILE *f) {
  fprintf(f, "\n%-48s %-14s %11s %11s %8s  %s\n", "point", "metric", "measured", "predicted", "error", "notes");
  const vpoint **ord = sim_malloc((s->n ? s->n : 1) * sizeof *ord);
  for (size_t i = 0; i < s->n; i++) ord[i] = &s->pts[i];
  qsort(ord, s->n, sizeof *ord, cmp_by_id);
  for (size_t oi = 0; oi < s->n; oi++) {
    const vpoint *p = ord[oi];
    size_t i = (size_t)(p - s->pts);
    if (p->skip[0] || !p->ran) continue;
    for (int m = 0; m < VM_COUNT; m++) {
      if (!isfinite(p->meas[m])) continue;
      char a[32], b[32], note[96] = "";
      fmt_val(a, sizeof a, p->meas[m]);
      fmt_val(b, sizeof b, p->pred[m]);
      double e = verr_pct(p, (vmetric)m);
      if (m == VM_TPUT && p->tput_derived) vfmt(note, sizeof note, "derived C*osl/E2EL");
      if (m == VM_TTFT && (side[i] & 4))
        vfmt(note, sizeof note, "cliff: measured %s, predicted %s", (side[i] & 1) ? "yes" : "no",
             (side[i] & 2) ? "yes" : "no");
      if (m == VM_TTFT && p->staged)
        vfmt(note, sizeof note, "kept up: measured %s, predicted %s", p->staged->meas.kept_up ? "yes" : "no",
             p->staged->pred.kept_up ? "yes" : "no");
      if (p->train && m != VM_TPUT) strncat(note, note[0] ? ", train" : "train", sizeof note - strlen(note) - 1);
      fprintf(f, "%-48s %-14s %11s %11s %+7.1f%%  %s\n", p->id, vmetric_name((vmetric)m), a, b, e, note);
    }
  }
  free(ord);
}

/* Per-group summaries: each group's points but the open-loop stages, then
 * the group's stages on their own metrics (labelled "stages"). */
static void text_groups(const vset *s, const vreport_opts *o, FILE *f) {
  for (int g = 0; g < VG_COUNT; g++) {
    if (!o || !o->groups[g]) continue;
    char keys[64][96];
    int nk = vgroup_keys(s, (vgroup_by)g, keys, 64);
    fprintf(f, "\nBy %s:\n  %-38s %5s %10s %10s %10s   %8s  %s\n", vgroup_name((vgroup_by)g), "group / metric", "n",
            "median|e|", "mean|e|", "median e", "worst", "worst point");
    for (int k = 0; k < nk; k++)
      for (int staged = 0; staged < 2; staged++) {
        vgroup_sel ga = {(vgroup_by)g, keys[k], staged != 0};
        const vmetric *ms = staged ? vmetrics_stage : vmetrics_base;
        size_t nm = staged ? SIM_ARRAY_LEN(vmetrics_stage) : SIM_ARRAY_LEN(vmetrics_base);
        for (size_t i = 0; i < nm; i++) {
          verr_stats st;
          verr_summarize(s, ms[i], vfilter_group, &ga, &st);
          if (!st.n) continue;
          char label[128];
          vfmt(label, sizeof label, "%s%s %s", keys[k], staged ? " stages" : "", vmetric_name(ms[i]));
          stats_line(f, label, &st, o->min_points);
        }
      }
  }
}

/* The open-loop stages: their summary (any that ran), then the kept-up counts
 * and how each run is reproduced (once per run: its last stage in the set,
 * whose rebuilt workload holds the earlier ones). */
static void text_stages_summary(const vset *s, FILE *f, size_t minp) {
  summary_block(f, s,
                "Open-loop stages (inference-perf runs; over each stage's requests answered within the client timeout; "
                "not in the summaries above):",
                vfilter_staged, NULL, vmetrics_stage, SIM_ARRAY_LEN(vmetrics_stage), minp);
}

static void text_stages_tail(const vset *s, FILE *f) {
  vkept k;
  vkept_count(s, &k);
  fprintf(f,
          "\nKept up / overloaded (open-loop stages; kept up = answered >= %.0f%% of the offered rate and p99 TTFT <= "
          "%.0f%% of the stage's duration):\n  measured kept up / predicted kept up %zu, measured overloaded / "
          "predicted overloaded %zu, measured kept up / predicted overloaded %zu, measured overloaded / predicted "
          "kept up %zu (%zu without a prediction)\n",
          100 * VAL_KEPT_UP_RATE, 100 * VAL_KEPT_UP_TTFT_FRAC, k.both_up, k.both_over, k.false_over, k.missed_over,
          k.unclassified);
  fprintf(f, "\nOpen-loop runs, as rebuilt (stage: answered measured / predicted of sent):\n");
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (!p->staged || p->skip[0]) continue;
    bool later = false; /* print a run once, at its last stage in the set */
    for (size_t j = 0; j < s->n && !later; j++)
      later = j != i && s->pts[j].staged && !s->pts[j].skip[0] && !strcmp(s->pts[j].staged->run.dir, p->staged->run.dir) &&
              s->pts[j].staged->stage > p->staged->stage;
    if (later) continue;
    char m[2048], counts[256] = "";
    for (size_t j = 0; j < s->n; j++) {
      const vpoint *q = &s->pts[j];
      if (!q->staged || strcmp(q->staged->run.dir, p->staged->run.dir)) continue;
      char one[96];
      vfmt(one, sizeof one, "%sstage %u: %llu / %llu of %llu", counts[0] ? ", " : "", q->staged->stage,
           (unsigned long long)q->staged->meas.ok, (unsigned long long)q->staged->pred.ok,
           (unsigned long long)q->staged->meas.sent);
      strncat(counts, one, sizeof counts - strlen(counts) - 1);
    }
    vstage_method(p, NULL, m, sizeof m);
    fprintf(f, "  %s (%s): %s\n    %s\n", p->staged->run.name, counts, m,
            p->staged->run.profile_note[0] ? p->staged->run.profile_note : "profile.yaml: as config.yaml");
  }
}

void vreport_text(const vset *s, const vreport_opts *o, FILE *f) {
  size_t n_run = 0, n_skip = 0, n_fail = 0, n_staged = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (p->skip[0]) n_skip++;
    else if (p->fail[0]) n_fail++;
    else if (p->ran) n_run++;
    n_staged += p->shape == VSHAPE_STAGED;
  }
  fprintf(f, "servesim validate: %zu points: %zu predicted, %zu failed, %zu skipped", s->n, n_run, n_fail, n_skip);
  if (o && o->wall_s > 0) fprintf(f, " (%.1f s)", o->wall_s);
  fprintf(f, "\n");
  vcover_text(s, f);
  for (int i = 0; i < s->n_notes; i++) fprintf(f, "  %s\n", s->notes[i]);
  if (o && o->title) fprintf(f, "  parameters: %s\n", o->title);
  uint8_t *side = sim_calloc(s->n ? s->n : 1, 1);
  size_t minp = o ? o->min_points : 0;
  vcliff cl;
  vcliff_count(s, NULL, NULL, &cl, side);
  if (!o || o->table) text_table(s, side, f);
  if (s->n <= VREPORT_METHODS_MAX) { /* a small selection (--only): how each point is redone */
    fprintf(f, "\nHow each point is reproduced:\n");
    for (size_t i = 0; i < s->n; i++) {
      char m[3000];
      vpoint_method(&s->pts[i], o ? o->ov : NULL, m, sizeof m);
      fprintf(f, "  %s: %s\n", s->pts[i].id, m);
    }
  }
  /* the targets: closed-loop points */
  summary_block(f, s, "Closed-loop points (targets: median |error| <= 15% TTFT, <= 10% TPOT and throughput):",
                vfilter_closed, NULL, vmetrics_base, SIM_ARRAY_LEN(vmetrics_base), minp);
  bool t = true;
  bool any_train = false;
  for (size_t i = 0; i < s->n; i++) any_train |= s->pts[i].train;
  if (any_train) {
    summary_block(f, s, "Training subset (the fit saw these):", vfilter_train, &t, vmetrics_all,
                  SIM_ARRAY_LEN(vmetrics_all), minp);
    summary_block(f, s, "Held-out points (everything else):", vfilter_held_out, NULL, vmetrics_all,
                  SIM_ARRAY_LEN(vmetrics_all), minp);
  }
  for (int sh = 0; sh < VSHAPE_COUNT; sh++) {
    vshape v = (vshape)sh;
    bool any = false;
    for (size_t i = 0; i < s->n; i++) any |= s->pts[i].ran && s->pts[i].shape == v;
    if (!any || v == VSHAPE_CLOSED || v == VSHAPE_STAGED) continue;
    char title[96];
    vfmt(title, sizeof title, "%s points:", vshape_name(v));
    summary_block(f, s, title, vfilter_shape, &v, vmetrics_base, SIM_ARRAY_LEN(vmetrics_base), minp);
  }
  if (n_staged) text_stages_summary(s, f, minp);
  text_groups(s, o, f);
  fprintf(f,
          "\nSaturation cliffs (closed loop; on the cliff = TTFT > %.0fx the TTFT at the next lower concurrency of "
          "the same series, or already on it there):\n  measured yes / predicted yes %zu, measured no / predicted no %zu, measured no / predicted yes "
          "%zu, measured yes / predicted no %zu (%zu baselines unclassified)\n",
          VAL_CLIFF_FACTOR, cl.tp, cl.tn, cl.fp, cl.fn, cl.unclassified);
  if (o && o->cal) vcal_text(o->cal, VRESID_MIN_POINTS, f);
  if (n_staged) text_stages_tail(s, f);
  if (n_fail) {
    fprintf(f, "\nFailed (servesim could not reproduce a run that happened; counted against the model):\n");
    for (size_t i = 0; i < s->n; i++)
      if (s->pts[i].fail[0]) fprintf(f, "  %s (%s): %s\n", s->pts[i].id, s->pts[i].where, s->pts[i].fail);
  }
  if (n_skip) {
    fprintf(f, "\nSkipped (cannot be represented; measured values kept in --json/--csv):\n");
    for (size_t i = 0; i < s->n; i++)
      if (s->pts[i].skip[0] && (!o || o->show_skipped))
        fprintf(f, "  %s (%s): %s\n", s->pts[i].id, s->pts[i].where, s->pts[i].skip);
    if (o && !o->show_skipped) {
      /* one line per distinct reason */
      for (size_t i = 0; i < s->n; i++) {
        const vpoint *p = &s->pts[i];
        if (!p->skip[0]) continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++) seen = s->pts[k].skip[0] && !strcmp(s->pts[k].skip, p->skip);
        if (seen) continue;
        size_t cnt = 0;
        for (size_t k = i; k < s->n; k++) cnt += !strcmp(s->pts[k].skip, p->skip);
        fprintf(f, "  %3zu x %s (e.g. %s)\n", cnt, p->skip, p->id);
      }
      fprintf(f, "  (--show-skipped lists each one)\n");
    }
  }
  free(side);
}
