/* vreport_json.c: the validation report as JSON and as CSV (one row per point); the errors and their
 * summaries are vstats.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/outfmt.h"
#include "validate/validate.h"
#include "validate/vresid.h"

/* ---- JSON -------------------------------------------------------------------------- */

/* Errors and measurements with 6 significant digits, counts exact, through
 * the project's one JSON writer (core/jsonw.h). */
static void jnum(jw *o, const char *k, double v) { jw_sig(o, k, v, 6); }

static void stats_json(jw *o, const char *key, const verr_stats *st, size_t minp) {
  jw_obj(o, key);
  jw_u64(o, "n", st->n);
  if (minp) jw_bool(o, "too_few_points", st->n < minp);
  jnum(o, "median_abs_pct", st->median_abs);
  jnum(o, "mean_abs_pct", st->mean_abs);
  jnum(o, "median_signed_pct", st->median_signed);
  jnum(o, "worst_abs_pct", st->worst_abs);
  if (st->worst) jw_str(o, "worst_point", st->worst->id);
  else jw_null(o, "worst_point");
  jw_end(o);
}

static void block_json(jw *o, const char *key, const vset *s, vfilter f, const void *arg, const vmetric *ms,
                       size_t n_ms, size_t minp) {
  jw_obj(o, key);
  for (size_t i = 0; i < n_ms; i++) {
    verr_stats st;
    verr_summarize(s, ms[i], f, arg, &st);
    stats_json(o, vmetric_name(ms[i]), &st, minp);
  }
  jw_end(o);
}

/* Whether any point that ran has group key `key` and is (not) an open-loop stage. */
static bool group_has(const vset *s, const vgroup_sel *ga) {
  for (size_t i = 0; i < s->n; i++)
    if (s->pts[i].ran && vfilter_group(&s->pts[i], ga)) return true;
  return false;
}

/* by_group (every point but the open-loop stages, as before them) or
 * by_group_open_loop_stages (staged). */
static void groups_json(jw *o, const char *key, const vset *s, bool staged, size_t minp, bool with_stratum) {
  jw_obj(o, key);
  for (int g = 0; g < VG_COUNT; g++) {
    if (g == VG_STRATUM && !with_stratum) continue; /* only when asked (--group-by stratum): older files stay as they were */
    jw_obj(o, vgroup_name((vgroup_by)g));
    char keys[64][96];
    int nk = vgroup_keys(s, (vgroup_by)g, keys, 64);
    for (int k = 0; k < nk; k++) {
      vgroup_sel ga = {(vgroup_by)g, keys[k], staged};
      if (!group_has(s, &ga)) continue;
      if (staged) block_json(o, keys[k], s, vfilter_group, &ga, vmetrics_stage, SIM_ARRAY_LEN(vmetrics_stage), minp);
      else block_json(o, keys[k], s, vfilter_group, &ga, vmetrics_base, SIM_ARRAY_LEN(vmetrics_base), minp);
    }
    jw_end(o);
  }
  jw_end(o);
}

/* The summary's blocks before its cliffs and counts. */
static void summary_json(jw *o, const vset *s, size_t minp, bool with_stratum) {
  const size_t nb = SIM_ARRAY_LEN(vmetrics_base), ns = SIM_ARRAY_LEN(vmetrics_stage);
  block_json(o, "closed_loop", s, vfilter_closed, NULL, vmetrics_base, nb, minp);
  bool t = true;
  const size_t na = SIM_ARRAY_LEN(vmetrics_all);
  block_json(o, "train", s, vfilter_train, &t, vmetrics_all, na, minp);
  block_json(o, "held_out", s, vfilter_held_out, NULL, vmetrics_all, na, minp);
  jw_obj(o, "by_shape");
  for (int sh = 0; sh < VSHAPE_COUNT; sh++) {
    vshape v = (vshape)sh;
    bool st = v == VSHAPE_STAGED;
    block_json(o, vshape_name(v), s, vfilter_shape, &v, st ? vmetrics_stage : vmetrics_base, st ? ns : nb, minp);
  }
  jw_end(o);
  groups_json(o, "by_group", s, false, minp, with_stratum);
  block_json(o, "open_loop_stages", s, vfilter_staged, NULL, vmetrics_stage, ns, minp);
  groups_json(o, "by_group_open_loop_stages", s, true, minp, with_stratum);
  vkept k;
  vkept_count(s, &k);
  jw_obj(o, "kept_up");
  jnum(o, "min_served_fraction", VAL_KEPT_UP_RATE);
  jnum(o, "max_p99_ttft_fraction_of_duration", VAL_KEPT_UP_TTFT_FRAC);
  jw_u64(o, "measured_kept_up_predicted_kept_up", k.both_up);
  jw_u64(o, "measured_overloaded_predicted_overloaded", k.both_over);
  jw_u64(o, "measured_kept_up_predicted_overloaded", k.false_over);
  jw_u64(o, "measured_overloaded_predicted_kept_up", k.missed_over);
  jw_u64(o, "unclassified", k.unclassified);
  jw_end(o);
}

static void stage_out_json(jw *j, const char *key, const vstage_out *o) {
  jw_obj(j, key);
  jw_u64(j, "sent", o->sent);
  jw_u64(j, "answered", o->ok);
  jnum(j, "answered_per_s", o->served_rate);
  jnum(j, "mean_input_tokens", o->mean_input_tokens);
  jw_bool(j, "kept_up", o->kept_up);
  jw_end(j);
}

/* The "stage" object of an open-loop stage point. */
static void stage_json(jw *j, const vpoint *p) {
  const vstaged *st = p->staged;
  const vopen_run *r = &st->run;
  jw_obj(j, "stage");
  jw_str(j, "run", r->dir);
  jw_u64(j, "stage", st->stage);
  jnum(j, "rate_per_s", r->rate_per_s[st->stage]);
  jnum(j, "duration_s", r->duration_s[st->stage]);
  jw_str(j, "model_name", r->model_label);
  jnum(j, "measured_mean_input_tokens", r->meas_input_tokens);
  jw_u64(j, "rebuilt_prompt_tokens", r->prompt_tokens);
  jw_u64(j, "rebuilt_shared_tokens", r->shared_tokens);
  jnum(j, "client_timeout_s", r->timeout_s);
  stage_out_json(j, "measured", &st->meas);
  if (p->ran) {
    stage_out_json(j, "predicted", &st->pred);
    jw_arr(j, "predicted_stage_starts_s");
    for (uint32_t k = 0; k <= st->stage; k++) jnum(j, NULL, st->start_s[k]);
    jw_end(j);
    jw_u64(j, "first_request", st->first_req);
  }
  char m[2048];
  vstage_method(p, NULL, m, sizeof m);
  jw_str(j, "method", m);
  if (r->profile_note[0]) jw_str(j, "profile_note", r->profile_note);
  jw_end(j);
}

static void point_json(jw *e, const vpoint *p, uint8_t side, const voverrides *ov) {
  jw_obj(e, NULL);
  jw_str(e, "id", p->id);
  jw_str(e, "where", p->where);
  jw_str(e, "source", vsource_name(p->src));
  jw_str(e, "shape", vshape_name(p->shape));
  jw_str(e, "status", p->skip[0] ? "skipped" : p->fail[0] ? "failed" : p->ran ? "predicted" : "not_run");
  if (p->skip[0]) jw_str(e, "reason", p->skip);
  else if (p->fail[0]) jw_str(e, "reason", p->fail);
  jw_str(e, "model", p->model);
  if (p->stratum[0]) jw_str(e, "stratum", p->stratum); /* what the prediction rests on (runner/stratum.h) */
  jw_str(e, "gpu", p->gpu);
  jw_str(e, "engine", p->engine);
  jw_u64(e, "tp", p->tp);
  jw_str(e, "weight_dtype", dtype_name(p->weight_dtype));
  jw_str(e, "kv_cache_dtype", dtype_name(p->kv_dtype));
  jw_u64(e, "isl", p->isl);
  jw_u64(e, "osl", p->osl);
  jw_u64(e, "concurrency", p->concurrency);
  jw_u64(e, "num_prompts", p->num_prompts);
  jw_bool(e, "train", p->train);
  int n_m = p->shape == VSHAPE_STAGED ? VM_COUNT : VM_BASE_COUNT; /* the stage metrics only where they exist */
  jw_obj(e, "measured");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), p->meas[m]);
  jw_end(e);
  jw_obj(e, "predicted");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), p->pred[m]);
  jw_end(e);
  jw_obj(e, "error_pct");
  for (int m = 0; m < n_m; m++) jnum(e, vmetric_name((vmetric)m), verr_pct(p, (vmetric)m));
  jw_end(e);
  jw_bool(e, "output_tok_s_derived", p->tput_derived);
  if (side & 4) {
    jw_obj(e, "cliff");
    jw_bool(e, "measured", side & 1);
    jw_bool(e, "predicted", (side & 2) != 0);
    jw_end(e);
  }
  if (p->ran) {
    jnum(e, "kv_pool_tokens", p->pred_kv_tokens);
    jnum(e, "mean_queue_ms", p->pred_queue_ms);
    jw_u64(e, "preemptions", p->pred_preemptions);
  }
  if (p->staged) {
    stage_json(e, p);
  } else {
    char m[3000];
    vpoint_method(p, ov, m, sizeof m);
    jw_str(e, "method", m);
  }
  jw_end(e);
}

int vreport_json(const vset *s, const vreport_opts *o, FILE *f, sim_err *err) {
  jw jr, *root = &jr;
  jw_begin(root, f);
  jw_str(root, "tool", "servesim validate");
  jw_str(root, "version", SERVESIM_VERSION);
  if (o && o->title) jw_str(root, "parameters", o->title);
  jw_arr(root, "sources");
  for (int i = 0; i < s->n_notes; i++) jw_str(root, NULL, s->notes[i]);
  jw_end(root);
  uint8_t *side = sim_calloc(s->n ? s->n : 1, 1);
  vcliff cl;
  vcliff_count(s, NULL, NULL, &cl, side);
  size_t counts[3] = {0, 0, 0};
  for (size_t i = 0; i < s->n; i++) counts[s->pts[i].skip[0] ? 2 : s->pts[i].fail[0] ? 1 : 0]++;
  jw_obj(root, "summary");
  summary_json(root, s, o ? o->min_points : 0, o && o->groups[VG_STRATUM]);
  jw_obj(root, "cliffs");
  jnum(root, "factor", VAL_CLIFF_FACTOR);
  jw_u64(root, "measured_yes_predicted_yes", cl.tp);
  jw_u64(root, "measured_no_predicted_no", cl.tn);
  jw_u64(root, "measured_no_predicted_yes", cl.fp);
  jw_u64(root, "measured_yes_predicted_no", cl.fn);
  jw_u64(root, "unclassified", cl.unclassified);
  jw_end(root);
  jw_obj(root, "points");
  jw_u64(root, "total", s->n);
  jw_u64(root, "predicted", counts[0]);
  jw_u64(root, "failed", counts[1]);
  jw_u64(root, "skipped", counts[2]);
  jw_end(root);
  jw_end(root); /* summary */
  vcover_json(s, root);
  if (o && o->cal) vcal_json(o->cal, VRESID_MIN_POINTS, root);
  jw_arr(root, "points");
  for (size_t i = 0; i < s->n; i++) point_json(root, &s->pts[i], side[i], o ? o->ov : NULL);
  jw_end(root);
  free(side);
  return jw_finish(root, err);
}

/* ---- CSV --------------------------------------------------------------------------------- */

/* Columns: the base metrics, `where`, then the open-loop stages' columns
 * (empty for other points), so the columns before them are as they were. */
int vreport_csv(const vset *s, const voverrides *ov, FILE *f, sim_err *err) {
  fprintf(f, "id,source,shape,model,gpu,engine,tp,weight_dtype,kv_cache_dtype,isl,osl,concurrency,num_prompts,train,"
             "status,reason");
  for (int m = 0; m < VM_BASE_COUNT; m++)
    fprintf(f, ",measured_%s,predicted_%s,error_pct_%s", vmetric_name((vmetric)m), vmetric_name((vmetric)m),
            vmetric_name((vmetric)m));
  fprintf(f, ",where,stage,rate_per_s");
  for (int m = VM_BASE_COUNT; m < VM_COUNT; m++)
    fprintf(f, ",measured_%s,predicted_%s,error_pct_%s", vmetric_name((vmetric)m), vmetric_name((vmetric)m),
            vmetric_name((vmetric)m));
  fprintf(f, ",measured_answered,predicted_answered,measured_kept_up,predicted_kept_up,method\n");
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    outfmt_csv_str(f, p->id);
    fprintf(f, ",%s,%s,%s,%s,%s,%u,%s,%s,%u,%u,%u,%llu,%d,%s,", vsource_name(p->src), vshape_name(p->shape),
            p->model, p->gpu, p->engine, p->tp, dtype_name(p->weight_dtype), dtype_name(p->kv_dtype), p->isl, p->osl,
            p->concurrency, (unsigned long long)p->num_prompts, p->train ? 1 : 0,
            p->skip[0] ? "skipped" : p->fail[0] ? "failed" : p->ran ? "predicted" : "not_run");
    outfmt_csv_str(f, p->skip[0] ? p->skip : p->fail);
    for (int m = 0; m < VM_BASE_COUNT; m++) {
      outfmt_csv_num(f, p->meas[m]);
      outfmt_csv_num(f, p->pred[m]);
      outfmt_csv_num(f, verr_pct(p, (vmetric)m));
    }
    fputc(',', f);
    outfmt_csv_str(f, p->where);
    const vstaged *st = p->staged;
    if (!st) {
      fputs(",,,,,,,,,,,,,,,,", f); /* the 15 stage columns, empty, then the method */
      char m[3000];
      vpoint_method(p, ov, m, sizeof m);
      outfmt_csv_str(f, m);
    } else {
      fprintf(f, ",%u", st->stage);
      outfmt_csv_num(f, st->run.rate_per_s[st->stage]);
      for (int m = VM_BASE_COUNT; m < VM_COUNT; m++) {
        outfmt_csv_num(f, p->meas[m]);
        outfmt_csv_num(f, p->pred[m]);
        outfmt_csv_num(f, verr_pct(p, (vmetric)m));
      }
      fprintf(f, ",%llu", (unsigned long long)st->meas.ok);
      if (p->ran) fprintf(f, ",%llu,%d,%d,", (unsigned long long)st->pred.ok, st->meas.kept_up, st->pred.kept_up);
      else fprintf(f, ",,%d,,", st->meas.kept_up);
      char m[2048];
      vstage_method(p, NULL, m, sizeof m);
      outfmt_csv_str(f, m);
    }
    fputc('\n', f);
  }
  if (ferror(f)) return sim_errf(err, SIM_EINPUT, "cannot write the CSV report");
  return SIM_OK;
}
