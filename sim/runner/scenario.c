/* scenario.c: scenario files (JSON) and the built-in default.
 *
 * Schema (every key optional; unknown keys are errors):
 * { "name": str, "description": str,
 *   "model": name|path, "gpu": name|path, "engine": name|path, "profile": "auto"|"none"|path,
 *   "deployment": { every deployment setting by its vLLM name (config/settings.c: "tensor_parallel_size",
 *                   "max_num_seqs", ...; `servesim list settings` prints them) },
 *   "workload": { "trace", "trace_format",                        -- a trace file, or a generator:
 *                 "num_prompts", "request_rate" (number or "inf"), "burstiness",
 *                 "random_input_len", "random_output_len", "random_range_ratio",
 *                 "input_lengths": {"dist": "lognormal", "median", "sigma", "min", "max"},
 *                 "output_lengths": {...},
 *                 "max_concurrency", "window_s": [start, end], "rate_scale", "request_rate_target",
 *                 "prompt_scale", "output_scale", "max_requests", "duration_s", "repeat_shares_prefixes",
 *                 "replica_failures": [{"replica": i, "at_s": t}],
 *                 "traffic_step": {"at_s": T, "factor": X},                 -- at most one of these two
 *                 "traffic_ramp": {"from_s": T0, "to_s": T1, "factor": X} },
 *   "goodput_ms": {"ttft", "tpot", "e2el"},
 *   "autoscale": "key=value,..." (the --autoscale spec: config/scalecfg.h, docs/planning.md "Autoscaling"),
 *   "sample_interval_s", "time_limit_s", "seed" } */
#include "runner/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/jsonx.h"
#include "config/settings.h"

void scenario_init(scenario *s) {
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "custom");
  snprintf(s->model, sizeof s->model, "llama-3.1-70b");
  snprintf(s->gpu, sizeof s->gpu, "h200");
  snprintf(s->engine, sizeof s->engine, "vllm");
  snprintf(s->profile, sizeof s->profile, "auto");
  deploy_init(&s->deploy);
  s->trace_fmt = TRACE_FMT_AUTO;
  gen_params_default(&s->gen);
  s->window_start_s = 0;
  s->window_end_s = -1;
  s->rate_scale = 1;
  s->prompt_scale = 1;
  s->output_scale = 1;
  s->goodput.ttft_ms = s->goodput.tpot_ms = s->goodput.e2el_ms = -1;
  autoscale_cfg_init(&s->autoscale);
}

void scenario_default(scenario *s) {
  sim_err err;
  scenario_init(s);
  /* the embedded file is part of the binary: failing to read it is a bug */
  int rc = scenario_load(s, "configs/examples/default.json", &err);
  if (rc) {
    fprintf(stderr, "servesim: internal error: built-in default scenario: %s\n", err.msg);
    abort();
  }
}

/* --- reading (config/jsonx.h: strict keys and types, errors with lines) ------ */

#define TRY(x)            \
  do {                    \
    int rc_ = (x);        \
    if (rc_) return rc_;  \
  } while (0)

static int parse_lengths(const jx *j, const cJSON *o, const char *where, len_dist *d) {
  static const char *const known[] = {"dist", "median", "sigma", "min", "max", NULL};
  TRY(jx_keys(j, o, where, known, NULL));
  char dist[32] = "";
  TRY(jx_str(j, o, where, "dist", dist, sizeof dist));
  if (strcmp(dist, "lognormal")) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "dist");
    return jx_fail(j, v ? v : o, where, "dist", "expected \"lognormal\" (use random_*_len for uniform)");
  }
  d->kind = LEN_LOGNORMAL;
  TRY(jx_num(j, o, where, "median", &d->median, 1, 1e7, 0));
  TRY(jx_num(j, o, where, "sigma", &d->sigma, 0, 10, 0));
  TRY(jx_u32(j, o, where, "min", &d->min, 0, 1e7, 0));
  TRY(jx_u32(j, o, where, "max", &d->max, 0, 1e7, 0));
  return 0;
}

/* "traffic_step": {"at_s", "factor"} or "traffic_ramp": {"from_s", "to_s", "factor"} (workload/warp.h). */
static int parse_traffic(const jx *j, const cJSON *w, scenario *s) {
  const cJSON *st, *rp;
  TRY(jx_obj(j, w, "workload", "traffic_step", &st));
  TRY(jx_obj(j, w, "workload", "traffic_ramp", &rp));
  if (st && rp) return jx_fail(j, rp, "workload", NULL, "give traffic_step or traffic_ramp, not both");
  char what[1200];
  if (st) {
    static const char *const k[] = {"at_s", "factor", NULL};
    const char *W = "workload.traffic_step";
    TRY(jx_keys(j, st, W, k, NULL));
    traffic_warp t = {WARP_STEP, -1, -1, -1};
    TRY(jx_num(j, st, W, "at_s", &t.t0_s, 0, 1e9, 0));
    TRY(jx_num(j, st, W, "factor", &t.factor, 1e-6, 1e6, 0));
    t.t1_s = t.t0_s;
    jx_where(j, st, "workload.traffic_step (needs at_s and factor)", what, sizeof what);
    TRY(warp_check(&t, what, j->err));
    s->traffic = t;
  }
  if (rp) {
    static const char *const k[] = {"from_s", "to_s", "factor", NULL};
    const char *W = "workload.traffic_ramp";
    TRY(jx_keys(j, rp, W, k, NULL));
    traffic_warp t = {WARP_RAMP, -1, -1, -1};
    TRY(jx_num(j, rp, W, "from_s", &t.t0_s, 0, 1e9, 0));
    TRY(jx_num(j, rp, W, "to_s", &t.t1_s, 0, 1e9, 0));
    TRY(jx_num(j, rp, W, "factor", &t.factor, 1e-6, 1e6, 0));
    jx_where(j, rp, "workload.traffic_ramp (needs from_s < to_s and factor)", what, sizeof what);
    TRY(warp_check(&t, what, j->err));
    s->traffic = t;
  }
  return 0;
}

static int parse_failures(const jx *j, const cJSON *fa, scenario *s) {
  static const char *const fk[] = {"replica", "at_s", NULL};
  int i = 0;
  for (const cJSON *e = fa->child; e; e = e->next, i++) {
    char where[64];
    snprintf(where, sizeof where, "workload.replica_failures[%d]", i);
    if (!cJSON_IsObject(e)) return jx_fail(j, e, where, NULL, "expected an object, got %s", jx_type_name(e));
    TRY(jx_keys(j, e, where, fk, NULL));
    if (s->n_failures >= SCENARIO_MAX_FAILURES)
      return jx_fail(j, e, "workload.replica_failures", NULL, "at most %d", SCENARIO_MAX_FAILURES);
    uint32_t rep = 0;
    double at = 0;
    TRY(jx_u32(j, e, where, "replica", &rep, 0, 4095, 0));
    TRY(jx_num(j, e, where, "at_s", &at, 0, 1e9, 0));
    s->failures[s->n_failures].replica = rep;
    s->failures[s->n_failures].at_s = at;
    s->n_failures++;
  }
  return 0;
}

static int parse_workload(const jx *j, const cJSON *w, scenario *s) {
  static const char *const known[] = {"trace", "trace_format", "num_prompts", "request_rate", "burstiness",
                                      "random_input_len", "random_output_len", "random_range_ratio", "input_lengths",
                                      "output_lengths", "max_concurrency", "window_s", "rate_scale",
                                      "request_rate_target", "prompt_scale", "output_scale", "max_requests", "duration_s",
                                      "repeat_shares_prefixes",
                                      "replica_failures", "traffic_step", "traffic_ramp", NULL};
  const char *W = "workload";
  TRY(jx_keys(j, w, W, known, NULL));
  TRY(jx_str(j, w, W, "trace", s->trace_path, sizeof s->trace_path));
  char fmt[32] = "";
  TRY(jx_str(j, w, W, "trace_format", fmt, sizeof fmt));
  if (fmt[0] && !trace_format_parse(fmt, &s->trace_fmt))
    return jx_fail(j, cJSON_GetObjectItemCaseSensitive(w, "trace_format"), W, "trace_format",
                   "unknown format '%s' (auto, native, azure, burstgpt, mooncake)", fmt);
  double np = -1;
  TRY(jx_num(j, w, W, "num_prompts", &np, 1, 1e9, 0));
  if (np > 0) s->gen.num_prompts = (uint64_t)np;
  TRY(jx_num(j, w, W, "request_rate", &s->gen.request_rate, 1e-9, 1e9, JX_INF));
  TRY(jx_num(j, w, W, "burstiness", &s->gen.burstiness, 1e-6, 1e6, 0));
  TRY(jx_num(j, w, W, "random_input_len", &s->gen.input.len, 1, 1e7, 0));
  TRY(jx_num(j, w, W, "random_output_len", &s->gen.output.len, 1, 1e7, 0));
  double rr = -1;
  TRY(jx_num(j, w, W, "random_range_ratio", &rr, 0, 0.999999, 0));
  if (rr >= 0) s->gen.input.range_ratio = s->gen.output.range_ratio = rr;
  const cJSON *o;
  TRY(jx_obj(j, w, W, "input_lengths", &o));
  if (o) TRY(parse_lengths(j, o, "workload.input_lengths", &s->gen.input));
  TRY(jx_obj(j, w, W, "output_lengths", &o));
  if (o) TRY(parse_lengths(j, o, "workload.output_lengths", &s->gen.output));
  TRY(jx_u32(j, w, W, "max_concurrency", &s->max_concurrency, 0, 1e7, 0));
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(w, "window_s");
  if (win) {
    if (!cJSON_IsArray(win) || cJSON_GetArraySize(win) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(win, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(win, 1)))
      return jx_fail(j, win, W, "window_s", "expected [start, end] in seconds (end -1 = no end)");
    s->window_start_s = cJSON_GetArrayItem(win, 0)->valuedouble;
    s->window_end_s = cJSON_GetArrayItem(win, 1)->valuedouble;
  }
  TRY(jx_num(j, w, W, "rate_scale", &s->rate_scale, 1e-6, 1e6, 0));
  TRY(jx_num(j, w, W, "request_rate_target", &s->target_rate, 1e-9, 1e9, 0));
  TRY(jx_num(j, w, W, "prompt_scale", &s->prompt_scale, 1e-6, 1e6, 0));
  TRY(jx_num(j, w, W, "output_scale", &s->output_scale, 1e-6, 1e6, 0));
  double mr = -1;
  TRY(jx_num(j, w, W, "max_requests", &mr, 1, 1e12, 0));
  if (mr > 0) s->max_requests = (uint64_t)mr;
  TRY(jx_num(j, w, W, "duration_s", &s->duration_s, 1e-3, 1e9, 0));
  TRY(jx_bool(j, w, W, "repeat_shares_prefixes", &s->repeat_shares_prefixes));
  const cJSON *fa;
  TRY(jx_arr(j, w, W, "replica_failures", &fa));
  if (fa) TRY(parse_failures(j, fa, s));
  return parse_traffic(j, w, s);
}

static int parse_root(const jx *j, scenario *s) {
  static const char *const known[] = {"name", "description", "model", "gpu", "engine", "profile", "deployment",
                                      "workload", "goodput_ms", "sample_interval_s", "time_limit_s", "seed", "autoscale",
                                      NULL};
  const cJSON *root = j->root, *o;
  TRY(jx_keys(j, root, NULL, known, NULL));
  TRY(jx_str(j, root, NULL, "name", s->name, sizeof s->name));
  char desc[1024];
  TRY(jx_str(j, root, NULL, "description", desc, sizeof desc));
  TRY(jx_str(j, root, NULL, "model", s->model, sizeof s->model));
  TRY(jx_str(j, root, NULL, "gpu", s->gpu, sizeof s->gpu));
  TRY(jx_str(j, root, NULL, "engine", s->engine, sizeof s->engine));
  TRY(jx_str(j, root, NULL, "profile", s->profile, sizeof s->profile));
  TRY(jx_obj(j, root, NULL, "deployment", &o));
  if (o) TRY(settings_read_json(j, o, "deployment", &s->deploy)); /* config/settings.c's table */
  TRY(jx_obj(j, root, NULL, "workload", &o));
  if (o) TRY(parse_workload(j, o, s));
  TRY(jx_obj(j, root, NULL, "goodput_ms", &o));
  if (o) {
    static const char *const gk[] = {"ttft", "tpot", "e2el", NULL};
    TRY(jx_keys(j, o, "goodput_ms", gk, NULL));
    TRY(jx_num(j, o, "goodput_ms", "ttft", &s->goodput.ttft_ms, 0, 1e12, 0));
    TRY(jx_num(j, o, "goodput_ms", "tpot", &s->goodput.tpot_ms, 0, 1e12, 0));
    TRY(jx_num(j, o, "goodput_ms", "e2el", &s->goodput.e2el_ms, 0, 1e12, 0));
  }
  char spec[1536] = "";
  TRY(jx_str(j, root, NULL, "autoscale", spec, sizeof spec));
  if (spec[0]) {
    char what[1200];
    snprintf(what, sizeof what, "%s:%d: autoscale", j->what, jx_line(j, cJSON_GetObjectItemCaseSensitive(root, "autoscale")));
    autoscale_cfg_init(&s->autoscale);
    TRY(autoscale_parse(&s->autoscale, spec, what, j->err));
  }
  TRY(jx_num(j, root, NULL, "sample_interval_s", &s->sample_interval_s, 0, 1e9, 0));
  TRY(jx_num(j, root, NULL, "time_limit_s", &s->time_limit_s, 0, 1e12, 0));
  double seed = -1;
  TRY(jx_num(j, root, NULL, "seed", &seed, 0, 9007199254740992.0, 0));
  if (seed >= 0) s->seed = s->gen.seed = (uint64_t)seed;
  return 0;
}

int scenario_parse(scenario *s, const char *json, const char *what, sim_err *err) {
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  rc = parse_root(&j, s);
  jx_free(&j);
  return rc;
}

int scenario_load(scenario *s, const char *path, sim_err *err) {
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  rc = scenario_parse(s, text, path, err);
  free(text);
  if (!rc) snprintf(s->source, sizeof s->source, "%s", path);
  return rc;
}

int scenario_load_configs(const scenario *s, model_cfg *m, gpu_cfg *g, engine_cfg *e, deploy_cfg *d, sim_err *err) {
  int rc;
  if ((rc = cfg_model_load(m, s->model, err))) return rc;
  if ((rc = cfg_gpu_load(g, s->gpu, err))) return rc;
  if ((rc = cfg_engine_load(e, s->engine, err))) return rc;
  *d = s->deploy;
  return cfg_resolve(d, m, g, e, err);
}
