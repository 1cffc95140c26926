/* scenario.c: scenario files (JSON) and the built-in default.
 *
 * Schema (every key optional; unknown keys are errors):
 * { "name": str, "description": str,
 *   "model": name|path, "gpu": name|path, "engine": name|path, "profile": "auto"|"none"|path,
 *   "deployment": { "tensor_parallel_size", "replicas", "dtype", "quantization", "kv_cache_dtype",
 *                   "max_num_seqs", "max_num_batched_tokens", "block_size", "max_model_len",
 *                   "gpu_memory_utilization", "enable_prefix_caching", "enable_chunked_prefill", "router" },
 *   "workload": { "trace", "trace_format",                        -- a trace file, or a generator:
 *                 "num_prompts", "request_rate" (number or "inf"), "burstiness",
 *                 "random_input_len", "random_output_len", "random_range_ratio",
 *                 "input_lengths": {"dist": "lognormal", "median", "sigma", "min", "max"},
 *                 "output_lengths": {...},
 *                 "max_concurrency", "window_s": [start, end], "rate_scale", "request_rate_target",
 *                 "prompt_scale", "output_scale", "max_requests",
 *                 "replica_failures": [{"replica": i, "at_s": t}],
 *                 "traffic_step": {"at_s": T, "factor": X},                 -- at most one of these two
 *                 "traffic_ramp": {"from_s": T0, "to_s": T1, "factor": X} },
 *   "goodput_ms": {"ttft", "tpot", "e2el"},
 *   "sample_interval_s", "time_limit_s", "seed" } */
#include "runner/scenario.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --- strict JSON access ------------------------------------------------------ */

typedef struct jctx {
  const char *what; /* file name */
  sim_err *err;
} jctx;

static int unknown_keys(jctx *j, const cJSON *obj, const char *where, const char *const *known) {
  for (const cJSON *it = obj->child; it; it = it->next) {
    bool ok = false;
    for (const char *const *k = known; *k; k++)
      if (!strcmp(it->string, *k)) ok = true;
    if (!ok) {
      char list[512] = "";
      for (const char *const *k = known; *k; k++) {
        strncat(list, *k, sizeof list - strlen(list) - 1);
        if (k[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
      }
      return sim_errf(j->err, SIM_EINPUT, "%s: %s: unknown key '%s' (known: %s)", j->what, where, it->string, list);
    }
  }
  return 0;
}

static int get_str(jctx *j, const cJSON *o, const char *key, const char *where, char *dst, size_t n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return 0;
  if (!cJSON_IsString(v) || !v->valuestring[0])
    return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: expected a non-empty string", j->what, where, key);
  if (strlen(v->valuestring) >= n)
    return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: string too long", j->what, where, key);
  snprintf(dst, n, "%s", v->valuestring);
  return 0;
}

static int get_num(jctx *j, const cJSON *o, const char *key, const char *where, double *dst, double lo, double hi,
                   bool allow_inf) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return 0;
  double x;
  if (allow_inf && cJSON_IsString(v) && !strcmp(v->valuestring, "inf")) x = INFINITY;
  else if (cJSON_IsNumber(v)) x = v->valuedouble;
  else
    return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: expected a number%s", j->what, where, key,
                    allow_inf ? " or \"inf\"" : "");
  if (!(x >= lo && x <= hi) && !(allow_inf && isinf(x)))
    return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: %g is out of range [%g, %g]", j->what, where, key, x, lo, hi);
  *dst = x;
  return 0;
}

static int get_u32(jctx *j, const cJSON *o, const char *key, const char *where, uint32_t *dst, double lo, double hi) {
  double x = -1;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return 0;
  int rc = get_num(j, o, key, where, &x, lo, hi, false);
  if (rc) return rc;
  if (x != floor(x)) return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: expected an integer, got %g", j->what, where, key, x);
  *dst = (uint32_t)x;
  return 0;
}

static int get_bool(jctx *j, const cJSON *o, const char *key, const char *where, int8_t *dst) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return 0;
  if (!cJSON_IsBool(v)) return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: expected true or false", j->what, where, key);
  *dst = cJSON_IsTrue(v) ? 1 : 0;
  return 0;
}

static int get_obj(jctx *j, const cJSON *o, const char *key, const char *where, const cJSON **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  *out = NULL;
  if (!v) return 0;
  if (!cJSON_IsObject(v)) return sim_errf(j->err, SIM_EINPUT, "%s: %s.%s: expected an object", j->what, where, key);
  *out = v;
  return 0;
}

#define TRY(x)            \
  do {                    \
    int rc_ = (x);        \
    if (rc_) return rc_;  \
  } while (0)

static int parse_dtype(jctx *j, const cJSON *o, const char *key, sim_dtype *dst, bool *set) {
  char buf[32] = "";
  TRY(get_str(j, o, key, "deployment", buf, sizeof buf));
  if (!buf[0] || !strcmp(buf, "auto")) return 0;
  if (!dtype_parse(buf, dst))
    return sim_errf(j->err, SIM_EINPUT, "%s: deployment.%s: unknown dtype '%s' (bf16, fp16, fp8, int8, int4)", j->what,
                    key, buf);
  *set = true;
  return 0;
}

static int parse_deployment(jctx *j, const cJSON *d, scenario *s) {
  static const char *const known[] = {"tensor_parallel_size", "replicas", "dtype", "quantization", "kv_cache_dtype",
                                      "max_num_seqs", "max_num_batched_tokens", "block_size", "max_model_len",
                                      "gpu_memory_utilization", "enable_prefix_caching", "enable_chunked_prefill",
                                      "router", NULL};
  TRY(unknown_keys(j, d, "deployment", known));
  deploy_cfg *p = &s->deploy;
  TRY(get_u32(j, d, "tensor_parallel_size", "deployment", &p->tp, 1, 64));
  TRY(get_u32(j, d, "replicas", "deployment", &p->replicas, 1, 4096));
  TRY(parse_dtype(j, d, "dtype", &p->act_dtype, &p->act_dtype_set));
  TRY(parse_dtype(j, d, "kv_cache_dtype", &p->kv_dtype, &p->kv_dtype_set));
  char q[32] = "";
  TRY(get_str(j, d, "quantization", "deployment", q, sizeof q));
  if (q[0]) {
    sim_dtype act = p->act_dtype_set ? p->act_dtype : DT_BF16;
    if (!cfg_parse_quantization(q, act, &p->weight_dtype))
      return sim_errf(j->err, SIM_EINPUT,
                      "%s: deployment.quantization: unknown method '%s' (none, fp8, int8, int4, awq, gptq)", j->what, q);
    p->weight_dtype_set = strcmp(q, "none") != 0;
  }
  TRY(get_u32(j, d, "max_num_seqs", "deployment", &p->max_num_seqs, 1, 1e6));
  TRY(get_u32(j, d, "max_num_batched_tokens", "deployment", &p->max_num_batched_tokens, 1, 1e7));
  TRY(get_u32(j, d, "block_size", "deployment", &p->block_size, 1, 1024));
  TRY(get_u32(j, d, "max_model_len", "deployment", &p->max_model_len, 1, 1e8));
  TRY(get_num(j, d, "gpu_memory_utilization", "deployment", &p->gpu_memory_utilization, 0.01, 1.0, false));
  TRY(get_bool(j, d, "enable_prefix_caching", "deployment", &p->enable_prefix_caching));
  TRY(get_bool(j, d, "enable_chunked_prefill", "deployment", &p->enable_chunked_prefill));
  char rt[32] = "";
  TRY(get_str(j, d, "router", "deployment", rt, sizeof rt));
  if (rt[0] && !route_policy_parse(rt, &p->router))
    return sim_errf(j->err, SIM_EINPUT,
                    "%s: deployment.router: unknown policy '%s' (round_robin, least_outstanding, least_kv)", j->what, rt);
  return 0;
}

static int parse_lengths(jctx *j, const cJSON *o, const char *where, len_dist *d) {
  static const char *const known[] = {"dist", "median", "sigma", "min", "max", NULL};
  TRY(unknown_keys(j, o, where, known));
  char dist[32] = "";
  TRY(get_str(j, o, "dist", where, dist, sizeof dist));
  if (strcmp(dist, "lognormal"))
    return sim_errf(j->err, SIM_EINPUT, "%s: %s.dist: expected \"lognormal\" (use random_*_len for uniform)", j->what,
                    where);
  d->kind = LEN_LOGNORMAL;
  TRY(get_num(j, o, "median", where, &d->median, 1, 1e7, false));
  TRY(get_num(j, o, "sigma", where, &d->sigma, 0, 10, false));
  TRY(get_u32(j, o, "min", where, &d->min, 0, 1e7));
  TRY(get_u32(j, o, "max", where, &d->max, 0, 1e7));
  return 0;
}

/* "traffic_step": {"at_s", "factor"} or "traffic_ramp": {"from_s", "to_s", "factor"} (workload/warp.h). */
static int parse_traffic(jctx *j, const cJSON *w, scenario *s) {
  const cJSON *st, *rp;
  TRY(get_obj(j, w, "traffic_step", "workload", &st));
  TRY(get_obj(j, w, "traffic_ramp", "workload", &rp));
  if (st && rp)
    return sim_errf(j->err, SIM_EINPUT, "%s: workload: give traffic_step or traffic_ramp, not both", j->what);
  char what[1200];
  if (st) {
    static const char *const k[] = {"at_s", "factor", NULL};
    TRY(unknown_keys(j, st, "workload.traffic_step", k));
    traffic_warp t = {WARP_STEP, -1, -1, -1};
    TRY(get_num(j, st, "at_s", "workload.traffic_step", &t.t0_s, 0, 1e9, false));
    TRY(get_num(j, st, "factor", "workload.traffic_step", &t.factor, 1e-6, 1e6, false));
    t.t1_s = t.t0_s;
    snprintf(what, sizeof what, "%s: workload.traffic_step (needs at_s and factor)", j->what);
    TRY(warp_check(&t, what, j->err));
    s->traffic = t;
  }
  if (rp) {
    static const char *const k[] = {"from_s", "to_s", "factor", NULL};
    TRY(unknown_keys(j, rp, "workload.traffic_ramp", k));
    traffic_warp t = {WARP_RAMP, -1, -1, -1};
    TRY(get_num(j, rp, "from_s", "workload.traffic_ramp", &t.t0_s, 0, 1e9, false));
    TRY(get_num(j, rp, "to_s", "workload.traffic_ramp", &t.t1_s, 0, 1e9, false));
    TRY(get_num(j, rp, "factor", "workload.traffic_ramp", &t.factor, 1e-6, 1e6, false));
    snprintf(what, sizeof what, "%s: workload.traffic_ramp (needs from_s < to_s and factor)", j->what);
    TRY(warp_check(&t, what, j->err));
    s->traffic = t;
  }
  return 0;
}

static int parse_workload(jctx *j, const cJSON *w, scenario *s) {
  static const char *const known[] = {"trace", "trace_format", "num_prompts", "request_rate", "burstiness",
                                      "random_input_len", "random_output_len", "random_range_ratio", "input_lengths",
                                      "output_lengths", "max_concurrency", "window_s", "rate_scale",
                                      "request_rate_target", "prompt_scale", "output_scale", "max_requests",
                                      "replica_failures", "traffic_step", "traffic_ramp", NULL};
  TRY(unknown_keys(j, w, "workload", known));
  TRY(get_str(j, w, "trace", "workload", s->trace_path, sizeof s->trace_path));
  char fmt[32] = "";
  TRY(get_str(j, w, "trace_format", "workload", fmt, sizeof fmt));
  if (fmt[0] && !trace_format_parse(fmt, &s->trace_fmt))
    return sim_errf(j->err, SIM_EINPUT, "%s: workload.trace_format: unknown format '%s' (auto, native, azure, "
                    "burstgpt, mooncake)", j->what, fmt);
  double np = -1;
  TRY(get_num(j, w, "num_prompts", "workload", &np, 1, 1e9, false));
  if (np > 0) s->gen.num_prompts = (uint64_t)np;
  TRY(get_num(j, w, "request_rate", "workload", &s->gen.request_rate, 1e-9, 1e9, true));
  TRY(get_num(j, w, "burstiness", "workload", &s->gen.burstiness, 1e-6, 1e6, false));
  TRY(get_num(j, w, "random_input_len", "workload", &s->gen.input.len, 1, 1e7, false));
  TRY(get_num(j, w, "random_output_len", "workload", &s->gen.output.len, 1, 1e7, false));
  double rr = -1;
  TRY(get_num(j, w, "random_range_ratio", "workload", &rr, 0, 0.999999, false));
  if (rr >= 0) s->gen.input.range_ratio = s->gen.output.range_ratio = rr;
  const cJSON *o;
  TRY(get_obj(j, w, "input_lengths", "workload", &o));
  if (o) TRY(parse_lengths(j, o, "workload.input_lengths", &s->gen.input));
  TRY(get_obj(j, w, "output_lengths", "workload", &o));
  if (o) TRY(parse_lengths(j, o, "workload.output_lengths", &s->gen.output));
  TRY(get_u32(j, w, "max_concurrency", "workload", &s->max_concurrency, 0, 1e7));
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(w, "window_s");
  if (win) {
    if (!cJSON_IsArray(win) || cJSON_GetArraySize(win) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(win, 0)) ||
        !cJSON_IsNumber(cJSON_GetArrayItem(win, 1)))
      return sim_errf(j->err, SIM_EINPUT, "%s: workload.window_s: expected [start, end] in seconds (end -1 = no end)",
                      j->what);
    s->window_start_s = cJSON_GetArrayItem(win, 0)->valuedouble;
    s->window_end_s = cJSON_GetArrayItem(win, 1)->valuedouble;
  }
  TRY(get_num(j, w, "rate_scale", "workload", &s->rate_scale, 1e-6, 1e6, false));
  TRY(get_num(j, w, "request_rate_target", "workload", &s->target_rate, 1e-9, 1e9, false));
  TRY(get_num(j, w, "prompt_scale", "workload", &s->prompt_scale, 1e-6, 1e6, false));
  TRY(get_num(j, w, "output_scale", "workload", &s->output_scale, 1e-6, 1e6, false));
  double mr = -1;
  TRY(get_num(j, w, "max_requests", "workload", &mr, 1, 1e12, false));
  if (mr > 0) s->max_requests = (uint64_t)mr;
  const cJSON *fa = cJSON_GetObjectItemCaseSensitive(w, "replica_failures");
  if (fa) {
    if (!cJSON_IsArray(fa))
      return sim_errf(j->err, SIM_EINPUT, "%s: workload.replica_failures: expected an array", j->what);
    const cJSON *e;
    cJSON_ArrayForEach(e, fa) {
      static const char *const fk[] = {"replica", "at_s", NULL};
      if (!cJSON_IsObject(e))
        return sim_errf(j->err, SIM_EINPUT, "%s: workload.replica_failures: expected objects", j->what);
      TRY(unknown_keys(j, e, "workload.replica_failures[]", fk));
      if (s->n_failures >= CLUSTER_MAX_FAILURES)
        return sim_errf(j->err, SIM_EINPUT, "%s: workload.replica_failures: at most %d", j->what, CLUSTER_MAX_FAILURES);
      uint32_t rep = 0;
      double at = 0;
      TRY(get_u32(j, e, "replica", "workload.replica_failures[]", &rep, 0, 4095));
      TRY(get_num(j, e, "at_s", "workload.replica_failures[]", &at, 0, 1e9, false));
      s->failures[s->n_failures].replica = rep;
      s->failures[s->n_failures].at_s = at;
      s->n_failures++;
    }
  }
  return parse_traffic(j, w, s);
}

int scenario_parse(scenario *s, const char *json, const char *what, sim_err *err) {
  jctx j = {what, err};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(json, strlen(json), &end, 0);
  if (!root) {
    int line = 1;
    for (const char *p = json; end && p < end; p++) line += *p == '\n';
    return sim_errf(err, SIM_EINPUT, "%s:%d: invalid JSON", what, line);
  }
  int rc = 0;
  static const char *const known[] = {"name", "description", "model", "gpu", "engine", "profile", "deployment",
                                      "workload", "goodput_ms", "sample_interval_s", "time_limit_s", "seed", NULL};
  const cJSON *o;
  if (!cJSON_IsObject(root)) rc = sim_errf(err, SIM_EINPUT, "%s: expected a JSON object", what);
  if (!rc) rc = unknown_keys(&j, root, "scenario", known);
  if (!rc) rc = get_str(&j, root, "name", "scenario", s->name, sizeof s->name);
  if (!rc) {
    char desc[1024];
    rc = get_str(&j, root, "description", "scenario", desc, sizeof desc);
  }
  if (!rc) rc = get_str(&j, root, "model", "scenario", s->model, sizeof s->model);
  if (!rc) rc = get_str(&j, root, "gpu", "scenario", s->gpu, sizeof s->gpu);
  if (!rc) rc = get_str(&j, root, "engine", "scenario", s->engine, sizeof s->engine);
  if (!rc) rc = get_str(&j, root, "profile", "scenario", s->profile, sizeof s->profile);
  if (!rc) rc = get_obj(&j, root, "deployment", "scenario", &o);
  if (!rc && o) rc = parse_deployment(&j, o, s);
  if (!rc) rc = get_obj(&j, root, "workload", "scenario", &o);
  if (!rc && o) rc = parse_workload(&j, o, s);
  if (!rc) rc = get_obj(&j, root, "goodput_ms", "scenario", &o);
  if (!rc && o) {
    static const char *const gk[] = {"ttft", "tpot", "e2el", NULL};
    rc = unknown_keys(&j, o, "goodput_ms", gk);
    if (!rc) rc = get_num(&j, o, "ttft", "goodput_ms", &s->goodput.ttft_ms, 0, 1e12, false);
    if (!rc) rc = get_num(&j, o, "tpot", "goodput_ms", &s->goodput.tpot_ms, 0, 1e12, false);
    if (!rc) rc = get_num(&j, o, "e2el", "goodput_ms", &s->goodput.e2el_ms, 0, 1e12, false);
  }
  if (!rc) rc = get_num(&j, root, "sample_interval_s", "scenario", &s->sample_interval_s, 0, 1e9, false);
  if (!rc) rc = get_num(&j, root, "time_limit_s", "scenario", &s->time_limit_s, 0, 1e12, false);
  double seed = -1;
  if (!rc) rc = get_num(&j, root, "seed", "scenario", &seed, 0, 9007199254740992.0, false);
  if (!rc && seed >= 0) s->seed = s->gen.seed = (uint64_t)seed;
  cJSON_Delete(root);
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
