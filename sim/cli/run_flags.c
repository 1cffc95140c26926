/* run_flags.c: scenario flags shared by run, sweep and capacity. */
#include "config/mig.h"
#include "cli/run_flags.h"

#include "core/outfmt.h"
#include "config/settings.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  F_NUM_PROMPTS = 0, F_REQUEST_RATE, F_BURSTINESS, F_INPUT_LEN, F_OUTPUT_LEN, F_RANGE_RATIO, F_INPUT_DIST,
  F_OUTPUT_DIST, F_INPUT_MEDIAN, F_INPUT_SIGMA, F_OUTPUT_MEDIAN, F_OUTPUT_SIGMA, F_INPUT_MAX, F_OUTPUT_MAX,
  F_SEED, F_RATE_SCALE, F_PROMPT_SCALE, F_OUTPUT_SCALE, F_SAMPLE, F_TIME_LIMIT, F_MAX_REQUESTS, F_DURATION,
  F_MAX_CONC, F_OUT_RANGE_RATIO, F_COUNT
};

void run_flags_init(run_flags *f) { memset(f, 0, sizeof *f); }

bool run_flags_given(const run_flags *f, const char *key) {
  const setting *st = settings_by_key(key);
  SIM_ASSERT(st);
  size_t i = settings_index(st);
  return f->set_seen[i] || f->set_text[i];
}

int run_flags_table(run_flags *f, cli_opt *o, int cap) {
  int n = 0;
#define OPT(name, alias, type, dest, meta, help, seenp) \
  do {                                                  \
    SIM_ASSERT(n < cap);                                \
    o[n++] = (cli_opt){name, alias, type, dest, meta, help, seenp}; \
  } while (0)
  OPT("scenario", NULL, CLI_STR, &f->scenario, "FILE", "scenario JSON (configs/examples/NAME or a path); default: built-in", NULL);
  OPT("model", NULL, CLI_STR, &f->model, "NAME|PATH", "model: bundled name or a Hugging Face config.json", NULL);
  OPT("gpu", NULL, CLI_STR, &f->gpu, "NAME|PATH", "GPU type: h100-sxm, h200, a100-sxm-80gb, h20, l40s, b200, b300, gb200, gb300 (NVL72) or a path", NULL);
  OPT("engine", NULL, CLI_STR, &f->engine, "NAME|PATH", "engine profile: vllm, trtllm or a path", NULL);
  OPT("profile", NULL, CLI_STR, &f->profile, "auto|none|PATH",
      "measured cost profile (auto: the bundled tables of this GPU and engine, nearest version; NAME or PATH)", NULL);
  for (size_t i = 0; i < settings_count(); i++) { /* the deployment: config/settings.c's table, in its order */
    const setting *st = settings_at(i);
    SIM_ASSERT(i < RUN_MAX_SETTINGS && n < cap);
    bool sw = st->kind == SK_TRI || st->kind == SK_BOOL;
    o[n++] = (cli_opt){st->flag, st->alias, sw ? CLI_BOOL : CLI_STR, sw ? (void *)&f->set_on[i] : (void *)&f->set_text[i],
                       sw ? NULL : st->meta, st->help, sw ? &f->set_seen[i] : NULL};
  }
  OPT("trace", NULL, CLI_STR, &f->trace, "FILE", "replay a trace (native CSV, Azure, BurstGPT, Mooncake JSONL)", NULL);
  OPT("trace-format", NULL, CLI_STR, &f->trace_format, "F", "auto, native, azure, burstgpt, mooncake", NULL);
  OPT("num-prompts", NULL, CLI_U64, &f->num_prompts, "N", "generated requests (vLLM default 1000)", &f->seen[F_NUM_PROMPTS]);
  OPT("request-rate", NULL, CLI_F64, &f->request_rate, "R", "req/s (inf = all at t=0); with --trace: rescale to this mean rate", &f->seen[F_REQUEST_RATE]);
  OPT("burstiness", NULL, CLI_F64, &f->burstiness, "B", "gamma shape of inter-arrival gaps (1 = Poisson)", &f->seen[F_BURSTINESS]);
  OPT("max-concurrency", NULL, CLI_U32, &f->max_concurrency, "N", "client slots: closed loop, TTFT from slot acquisition", &f->seen[F_MAX_CONC]);
  OPT("random-input-len", NULL, CLI_U32, &f->input_len, "N", "prompt tokens (vLLM default 1024)", &f->seen[F_INPUT_LEN]);
  OPT("random-output-len", NULL, CLI_U32, &f->output_len, "N", "output tokens (vLLM default 128)", &f->seen[F_OUTPUT_LEN]);
  OPT("random-range-ratio", NULL, CLI_F64, &f->range_ratio, "R", "lengths uniform in [L(1-R), L(1+R)]", &f->seen[F_RANGE_RATIO]);
  OPT("output-range-ratio", NULL, CLI_F64, &f->out_range_ratio, "R",
      "output lengths only uniform in [L(1-R), L(1+R)], prompts as they are (after --random-range-ratio)",
      &f->seen[F_OUT_RANGE_RATIO]);
  OPT("input-dist", NULL, CLI_STR, &f->input_dist, "uniform|lognormal", "prompt length distribution", &f->seen[F_INPUT_DIST]);
  OPT("input-median", NULL, CLI_F64, &f->input_median, "N", "lognormal prompt median", &f->seen[F_INPUT_MEDIAN]);
  OPT("input-sigma", NULL, CLI_F64, &f->input_sigma, "S", "lognormal prompt sigma (of ln tokens)", &f->seen[F_INPUT_SIGMA]);
  OPT("input-max", NULL, CLI_U32, &f->input_max, "N", "clamp prompt lengths", &f->seen[F_INPUT_MAX]);
  OPT("output-dist", NULL, CLI_STR, &f->output_dist, "uniform|lognormal", "output length distribution", &f->seen[F_OUTPUT_DIST]);
  OPT("output-median", NULL, CLI_F64, &f->output_median, "N", "lognormal output median", &f->seen[F_OUTPUT_MEDIAN]);
  OPT("output-sigma", NULL, CLI_F64, &f->output_sigma, "S", "lognormal output sigma", &f->seen[F_OUTPUT_SIGMA]);
  OPT("output-max", NULL, CLI_U32, &f->output_max, "N", "clamp output lengths", &f->seen[F_OUTPUT_MAX]);
  OPT("seed", NULL, CLI_U64, &f->seed, "N", "random seed (default 0)", &f->seen[F_SEED]);
  OPT("window", NULL, CLI_STR, &f->window, "START:END", "keep trace arrivals in [START, END) seconds", NULL);
  OPT("rate-scale", NULL, CLI_F64, &f->rate_scale, "X", "what-if: arrivals X times as fast", &f->seen[F_RATE_SCALE]);
  OPT("prompt-scale", NULL, CLI_F64, &f->prompt_scale, "X", "what-if: prompts X times as long", &f->seen[F_PROMPT_SCALE]);
  OPT("output-scale", NULL, CLI_F64, &f->output_scale, "X", "what-if: outputs X times as long", &f->seen[F_OUTPUT_SCALE]);
  OPT("max-requests", NULL, CLI_U64, &f->max_requests, "N", "use only the first N requests", &f->seen[F_MAX_REQUESTS]);
  OPT("duration", NULL, CLI_F64, &f->duration, "S",
      "S seconds of arrivals on the run's clock: a trace is cut or repeated (each copy after the last, new "
      "sessions and prefix ids), the generator sends rate x S requests (instead of --num-prompts)",
      &f->seen[F_DURATION]);
  OPT("repeat-shares-prefixes", NULL, CLI_FLAG, &f->repeat_shares_prefixes, NULL,
      "with --duration: repeated copies keep their sessions and prefix ids (caches hit across copies)", NULL);
  OPT("shared-timeline", NULL, CLI_FLAG, &f->shared_timeline, NULL,
      "simulate every replica on one shared timeline, also where they could run apart (the same results; slower "
      "for fleets)", NULL);
  OPT("step-by-step", NULL, CLI_FLAG, &f->step_by_step, NULL,
      "schedule every engine step, also runs of steady decode steps that have a closed form (the same results; "
      "slower)", NULL);
  OPT("fail-replica", NULL, CLI_LIST, &f->fail_replica, "R@T", "what-if: replica R is lost at T seconds (repeatable)", NULL);
  OPT("traffic-step", NULL, CLI_STR, &f->traffic_step, "T:X", "what-if: from T seconds on, X times the arrival rate", NULL);
  OPT("traffic-ramp", NULL, CLI_STR, &f->traffic_ramp, "T0:T1:X", "what-if: rate multiplier ramps from 1 at T0 to X at T1 seconds, then stays X", NULL);
  OPT("autoscale", NULL, CLI_STR, &f->autoscale, "SPEC",
      "scale replicas with a Kubernetes-HPA policy on a vLLM gauge, e.g. metric=num_requests_waiting,target=5,min=1,"
      "max=12, Dynamo's SLA planner on servesim's own capacity (mode=planner,ttft=0.5,itl=0.05,max=12), or fixed=N; "
      "keys in docs/planning.md, Autoscaling", NULL);
  OPT("goodput", NULL, CLI_MULTI, &f->goodput, "K:MS...", "SLOs for goodput, e.g. --goodput ttft:2000 tpot:50", NULL);
  OPT("sample-interval", NULL, CLI_F64, &f->sample_interval, "S", "time-series period in seconds (0 = auto)", &f->seen[F_SAMPLE]);
  OPT("time-limit", NULL, CLI_F64, &f->time_limit, "S", "stop the simulation at S seconds (rest reported unfinished)", &f->seen[F_TIME_LIMIT]);
#undef OPT
  return n;
}

int run_flags_subset(run_flags *f, const char *const *names, const cli_opt *extra, cli_opt *opts, int cap) {
  cli_opt all[160];
  int n = run_flags_table(f, all, 160), k = 0;
  for (int i = 0; i < n; i++)
    for (const char *const *w = names; *w; w++)
      if (!strcmp(all[i].name, *w) || (!strcmp(*w, RUN_FLAGS_DEPLOYMENT) && settings_by_flag(all[i].name))) {
        SIM_ASSERT(k < cap);
        opts[k++] = all[i];
      }
  return cli_opts_append(opts, k, cap, extra);
}

/* ---- numbers copied as given ---------------------------------------------------------------------- */

/* A flag whose value goes into one scenario field after a range check: these
 * are applied from this table (adding such a flag is one row here and one in
 * run_flags_table); flags that need parsing or act on several fields are
 * applied in code below. */
typedef enum { NUM_U32, NUM_U64, NUM_F64 } num_kind;
typedef struct num_rule {
  const char *flag;
  int seen;              /* index into run_flags.seen; -1: given when nonzero (the deployment's sizes) */
  size_t from, to;       /* offsetof(run_flags, ...), offsetof(scenario, ...) */
  num_kind from_kind, to_kind;
  double lo, hi;         /* accepted values: [lo, hi], or (lo, hi] when lo_open */
  bool lo_open;
  const char *range;     /* the message's words for the range */
} num_rule;

/* The field's kind, checked by the compiler (a field of any other type does not compile). */
#define NUM_KIND(x) _Generic((x), uint32_t: NUM_U32, uint64_t: NUM_U64, double: NUM_F64)
#define RULE(flag, seen, ffield, sfield, lo, hi, lo_open, range)                                             \
  {flag, seen, offsetof(run_flags, ffield), offsetof(scenario, sfield), NUM_KIND(((run_flags *)0)->ffield), \
   NUM_KIND(((scenario *)0)->sfield), lo, hi, lo_open, range}
static const num_rule NUM_RULES[] = {
    RULE("num-prompts", F_NUM_PROMPTS, num_prompts, gen.num_prompts, 0, 1e19, false, NULL),
    RULE("burstiness", F_BURSTINESS, burstiness, gen.burstiness, -DBL_MAX, DBL_MAX, false, NULL),
    RULE("random-input-len", F_INPUT_LEN, input_len, gen.input.len, 0, UINT32_MAX, false, NULL),
    RULE("random-output-len", F_OUTPUT_LEN, output_len, gen.output.len, 0, UINT32_MAX, false, NULL),
    RULE("max-concurrency", F_MAX_CONC, max_concurrency, max_concurrency, 0, UINT32_MAX, false, NULL),
    RULE("rate-scale", F_RATE_SCALE, rate_scale, rate_scale, 0, DBL_MAX, true, "a finite number > 0"),
    RULE("prompt-scale", F_PROMPT_SCALE, prompt_scale, prompt_scale, 0, DBL_MAX, true, "a finite number > 0"),
    RULE("output-scale", F_OUTPUT_SCALE, output_scale, output_scale, 0, DBL_MAX, true, "a finite number > 0"),
    RULE("duration", F_DURATION, duration, duration_s, 0, 1e9, true, "a number of seconds in (0, 1e9]"),
    RULE("max-requests", F_MAX_REQUESTS, max_requests, max_requests, 1, 1e19, false, ">= 1"),
    RULE("time-limit", F_TIME_LIMIT, time_limit, time_limit_s, 0, DBL_MAX, true, "a finite number of seconds > 0"),
};
#undef RULE
#undef NUM_KIND

static int apply_numbers(const run_flags *f, scenario *sc, sim_err *err) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(NUM_RULES); i++) {
    const num_rule *r = &NUM_RULES[i];
    const char *src = (const char *)f + r->from;
    char *dst = (char *)sc + r->to;
    double v;
    uint64_t u = 0;
    if (r->from_kind == NUM_U32) {
      uint32_t x;
      memcpy(&x, src, sizeof x);
      u = x, v = (double)x;
    } else if (r->from_kind == NUM_U64) {
      memcpy(&u, src, sizeof u);
      v = (double)u;
    } else {
      memcpy(&v, src, sizeof v);
    }
    if (r->seen >= 0 ? !f->seen[r->seen] : (r->from_kind == NUM_F64 ? v == 0 : u == 0)) continue; /* not given */
    bool ok = (r->lo_open ? v > r->lo : v >= r->lo) && v <= r->hi; /* NAN and inf fail */
    if (!ok) return sim_errf(err, SIM_EINPUT, "--%s must be %s, got %g", r->flag, r->range ? r->range : "in range", v);
    if (r->to_kind == NUM_U32) {
      uint32_t x = r->from_kind == NUM_F64 ? (uint32_t)v : (uint32_t)u;
      memcpy(dst, &x, sizeof x);
    } else if (r->to_kind == NUM_U64) {
      uint64_t x = r->from_kind == NUM_F64 ? (uint64_t)v : u;
      memcpy(dst, &x, sizeof x);
    } else {
      memcpy(dst, &v, sizeof v);
    }
  }
  return SIM_OK;
}

static int set_name(char *dst, size_t n, const char *v, const char *flag, sim_err *err) {
  if (strlen(v) >= n) return sim_errf(err, SIM_EINPUT, "--%s: value too long", flag);
  snprintf(dst, n, "%s", v);
  return 0;
}

static int len_dist_flags(const char *which, const char *dist, bool seen_dist, double median, bool seen_median,
                          double sigma, bool seen_sigma, uint32_t max, bool seen_max, len_dist *d, sim_err *err) {
  if (seen_dist) {
    if (!strcmp(dist, "uniform")) d->kind = LEN_UNIFORM_RATIO;
    else if (!strcmp(dist, "lognormal")) d->kind = LEN_LOGNORMAL;
    else return sim_errf(err, SIM_EINPUT, "--%s-dist: expected uniform or lognormal, got '%s'", which, dist);
  }
  if ((seen_median || seen_sigma) && d->kind != LEN_LOGNORMAL)
    return sim_errf(err, SIM_EINPUT, "--%s-median/--%s-sigma need --%s-dist lognormal", which, which, which);
  if (seen_median) d->median = median;
  if (seen_sigma) d->sigma = sigma;
  if (seen_max) d->max = max;
  return 0;
}

/* run_flags_apply's parts: the deployment, the workload, and the what-ifs and outputs. */
static int apply_deployment(const run_flags *f, scenario *sc, sim_err *err) {
  for (size_t i = 0; i < settings_count(); i++) { /* in the table's order: dtype before quantization */
    const setting *st = settings_at(i);
    char who[64];
    snprintf(who, sizeof who, "--%s", st->flag);
    int rc = SIM_OK;
    if (f->set_seen[i]) rc = setting_set_text(st, &sc->deploy, f->set_on[i] ? "on" : "off", who, err);
    else if (f->set_text[i]) rc = setting_set_text(st, &sc->deploy, f->set_text[i], who, err);
    if (rc) return rc;
  }
  return SIM_OK;
}

static int apply_workload(const run_flags *f, scenario *sc, sim_err *err) {
  int rc;
  bool gen_flags = false;
  for (int i = F_NUM_PROMPTS; i <= F_OUTPUT_MAX; i++)
    if (i != F_REQUEST_RATE && f->seen[i]) gen_flags = true;
  if (f->trace && gen_flags)
    return sim_errf(err, SIM_EINPUT,
                    "generator flags (--num-prompts, --random-*, --burstiness, --input-*, --output-*) do not apply to "
                    "--trace; use --prompt-scale/--output-scale/--rate-scale to transform a trace");
  if (f->trace) {
    if ((rc = set_name(sc->trace_path, sizeof sc->trace_path, f->trace, "trace", err))) return rc;
    sc->max_requests = 0;
    sc->target_rate = 0;
  } else if (gen_flags) {
    sc->trace_path[0] = 0;
    gen_params_default(&sc->gen);
  }
  if (f->trace_format && !trace_format_parse(f->trace_format, &sc->trace_fmt))
    return sim_errf(err, SIM_EINPUT, "--trace-format: unknown format '%s' (auto, native, azure, burstgpt, mooncake)",
                    f->trace_format);
  gen_params *g = &sc->gen;
  if (f->seen[F_DURATION] && f->seen[F_NUM_PROMPTS])
    return sim_errf(err, SIM_EINPUT, "--duration and --num-prompts: give one (the generator sends rate x duration "
                    "requests)");
  if ((rc = apply_numbers(f, sc, err))) return rc; /* after the trace/generator switch, before the ratios */
  if (f->seen[F_REQUEST_RATE]) {
    if (!(f->request_rate > 0)) return sim_errf(err, SIM_EINPUT, "--request-rate must be > 0 (or inf)");
    if (sc->trace_path[0]) {
      if (isinf(f->request_rate)) return sim_errf(err, SIM_EINPUT, "--request-rate inf cannot rescale a trace");
      sc->target_rate = f->request_rate;
    } else {
      g->request_rate = f->request_rate;
    }
  }
  if (f->seen[F_RANGE_RATIO]) g->input.range_ratio = g->output.range_ratio = f->range_ratio;
  if (f->seen[F_OUT_RANGE_RATIO]) g->output.range_ratio = f->out_range_ratio;
  if ((rc = len_dist_flags("input", f->input_dist, f->seen[F_INPUT_DIST], f->input_median, f->seen[F_INPUT_MEDIAN],
                           f->input_sigma, f->seen[F_INPUT_SIGMA], f->input_max, f->seen[F_INPUT_MAX], &g->input, err)))
    return rc;
  if ((rc = len_dist_flags("output", f->output_dist, f->seen[F_OUTPUT_DIST], f->output_median,
                           f->seen[F_OUTPUT_MEDIAN], f->output_sigma, f->seen[F_OUTPUT_SIGMA], f->output_max,
                           f->seen[F_OUTPUT_MAX], &g->output, err)))
    return rc;
  if (f->seen[F_SEED]) sc->seed = g->seed = f->seed;
  if (f->window) {
    char *end;
    double a = strtod(f->window, &end), b = -1;
    if (end == f->window || *end != ':') return sim_errf(err, SIM_EINPUT, "--window: expected START:END in seconds, got '%s'", f->window);
    const char *p = end + 1;
    if (*p) {
      b = strtod(p, &end);
      if (end == p || *end) return sim_errf(err, SIM_EINPUT, "--window: expected START:END in seconds, got '%s'", f->window);
    }
    if (a < 0 || (b >= 0 && b <= a) || !isfinite(a) || !isfinite(b))
      return sim_errf(err, SIM_EINPUT, "--window: need 0 <= START < END, got '%s'", f->window);
    sc->window_start_s = a;
    sc->window_end_s = b;
  }
  if (f->repeat_shares_prefixes) sc->repeat_shares_prefixes = true;
  if (f->shared_timeline) sc->shared_timeline = true;
  if (f->step_by_step) sc->step_by_step = true;
  return 0;
}

static int apply_whatif(const run_flags *f, scenario *sc, sim_err *err) {
  int rc;
  for (int i = 0; i < f->fail_replica.n; i++) {
    const char *v = f->fail_replica.items[i], *at = strchr(v, '@');
    uint64_t rep;
    double t;
    char buf[64];
    if (!at || (size_t)(at - v) >= sizeof buf) return sim_errf(err, SIM_EINPUT, "--fail-replica: expected R@SECONDS, got '%s'", v);
    memcpy(buf, v, (size_t)(at - v));
    buf[at - v] = 0;
    if (!sim_parse_u64(buf, &rep) || rep > UINT32_MAX || !sim_parse_double(at + 1, &t) || t < 0 || isinf(t))
      return sim_errf(err, SIM_EINPUT, "--fail-replica: expected R@SECONDS, got '%s'", v);
    if (sc->n_failures >= SCENARIO_MAX_FAILURES) return sim_errf(err, SIM_EINPUT, "--fail-replica: at most %d", SCENARIO_MAX_FAILURES);
    sc->failures[sc->n_failures].replica = (uint32_t)rep;
    sc->failures[sc->n_failures].at_s = t;
    sc->n_failures++;
  }
  if (f->autoscale) {
    autoscale_cfg_init(&sc->autoscale);
    if ((rc = autoscale_parse(&sc->autoscale, f->autoscale, "--autoscale", err))) return rc;
  }
  if (f->traffic_step && f->traffic_ramp)
    return sim_errf(err, SIM_EINPUT, "--traffic-step and --traffic-ramp: give one of them, not both");
  if (f->traffic_step && (rc = warp_parse_step(f->traffic_step, "--traffic-step", &sc->traffic, err))) return rc;
  if (f->traffic_ramp && (rc = warp_parse_ramp(f->traffic_ramp, "--traffic-ramp", &sc->traffic, err))) return rc;
  for (int i = 0; i < f->goodput.n; i++) {
    const char *v = f->goodput.items[i], *colon = strchr(v, ':');
    double ms;
    if (!colon || !sim_parse_double(colon + 1, &ms) || ms < 0 || isinf(ms))
      return sim_errf(err, SIM_EINPUT, "--goodput: expected KEY:MS (ttft, tpot, e2el), got '%s'", v);
    size_t k = (size_t)(colon - v);
    if (k == 4 && !strncmp(v, "ttft", 4)) sc->goodput.ttft_ms = ms;
    else if (k == 4 && !strncmp(v, "tpot", 4)) sc->goodput.tpot_ms = ms;
    else if (k == 4 && !strncmp(v, "e2el", 4)) sc->goodput.e2el_ms = ms;
    else return sim_errf(err, SIM_EINPUT, "--goodput: unknown metric in '%s' (ttft, tpot, e2el)", v);
  }
  if (f->seen[F_SAMPLE]) {
    if (!(f->sample_interval == 0 || (f->sample_interval >= 0.001 && f->sample_interval <= 1e9)))
      return sim_errf(err, SIM_EINPUT, "--sample-interval must be 0 (auto) or between 0.001 and 1e9 seconds, got %g",
                      f->sample_interval);
    sc->sample_interval_s = f->sample_interval;
  }
  return 0;
}

int run_flags_apply(const run_flags *f, scenario *sc, sim_err *err) {
  int rc;
  if (f->scenario) {
    char path[1024];
    scenario_init(sc);
    if ((rc = cfg_find(CFG_SCENARIO, f->scenario, path, sizeof path, err))) return rc;
    if ((rc = scenario_load(sc, path, err))) return rc;
  }
  if (f->model && (rc = set_name(sc->model, sizeof sc->model, f->model, "model", err))) return rc;
  if (f->gpu && (rc = set_name(sc->gpu, sizeof sc->gpu, f->gpu, "gpu", err))) return rc;
  if (f->engine && (rc = set_name(sc->engine, sizeof sc->engine, f->engine, "engine", err))) return rc;
  if (f->profile && (rc = set_name(sc->profile, sizeof sc->profile, f->profile, "profile", err))) return rc;
  if ((rc = apply_deployment(f, sc, err))) return rc;
  /* a MIG slice (--gpu GPU:PROFILE) holds one replica: without --tp, the default scenario's TP4 becomes TP1 */
  char whole[64], profile[64];
  if (f->gpu && !run_flags_given(f, "tensor_parallel_size") && mig_split(f->gpu, whole, sizeof whole, profile, sizeof profile)) sc->deploy.tp = 1;
  if ((rc = apply_workload(f, sc, err))) return rc;
  /* no output replaces what the run reads: its scenario, trace and model/GPU/engine files given as paths */
  outfmt_protect(sc->source);
  outfmt_protect(sc->trace_path);
  outfmt_protect(sc->model);
  outfmt_protect(sc->gpu);
  outfmt_protect(sc->engine);
  return apply_whatif(f, sc, err);
}
