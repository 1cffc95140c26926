/* scalecfg.c: the autoscaling spec's defaults, parser and echo (config/scalecfg.h). */
#include "config/scalecfg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void autoscale_cfg_init(autoscale_cfg *c) {
  memset(c, 0, sizeof *c);
  c->metric = AS_WAITING;
  c->target = 0;
  c->min = 1;
  c->max = 0;
  c->interval_s = 15;
  c->window_s = 60;
  c->tolerance = 0.1;
  c->up_window_s = 0;
  c->down_window_s = 300;
  c->up_limit = true;
  c->pod_start_s = -1;
  c->warmup_s = -1;
  c->ttft_s = 0.5;
  c->itl_s = 0.05;
}

static const char *const METRIC_NAMES[AS_METRIC_COUNT] = {"vllm:num_requests_waiting", "vllm:num_requests_running",
                                                          "vllm:kv_cache_usage_perc",
                                                          "p90 of vllm:time_to_first_token_seconds"};
static const char *const METRIC_KEYS[AS_METRIC_COUNT] = {"num_requests_waiting", "num_requests_running",
                                                         "kv_cache_usage_perc", "ttft_p90"};

const char *autoscale_metric_name(as_metric m) { return m < AS_METRIC_COUNT ? METRIC_NAMES[m] : "?"; }

static bool metric_parse(const char *v, as_metric *m) {
  if (!strncmp(v, "vllm:", 5)) v += 5;
  if (!strcmp(v, "num_requests_waiting") || !strcmp(v, "waiting")) *m = AS_WAITING;
  else if (!strcmp(v, "num_requests_running") || !strcmp(v, "running")) *m = AS_RUNNING;
  else if (!strcmp(v, "kv_cache_usage_perc") || !strcmp(v, "gpu_cache_usage_perc") || !strcmp(v, "kv")) *m = AS_KV_USAGE;
  else if (!strcmp(v, "ttft_p90") || !strcmp(v, "time_to_first_token_seconds")) *m = AS_TTFT_P90;
  else return false;
  return true;
}

static int num(const char *what, const char *key, const char *v, double lo, double hi, double *out, sim_err *err) {
  double x = 0;
  if (!sim_parse_double(v, &x) || !(x >= lo && x <= hi))
    return sim_errf(err, SIM_EINPUT, "%s: %s must be a number in [%g, %g], got '%s'", what, key, lo, hi, v);
  *out = x;
  return SIM_OK;
}

static int count(const char *what, const char *key, const char *v, uint32_t *out, sim_err *err) {
  double x = 0;
  int rc = num(what, key, v, 0, 100000, &x, err);
  if (rc) return rc;
  if (x != floor(x)) return sim_errf(err, SIM_EINPUT, "%s: %s must be a whole number, got '%s'", what, key, v);
  *out = (uint32_t)x;
  return SIM_OK;
}

static int text(const char *what, const char *key, const char *v, char *dst, size_t n, sim_err *err) {
  if (!*v || strlen(v) >= n) return sim_errf(err, SIM_EINPUT, "%s: %s must be a name of 1 to %zu characters", what, key, n - 1);
  snprintf(dst, n, "%s", v);
  return SIM_OK;
}

/* One key=value of the spec. */
static int set_key(autoscale_cfg *c, const char *k, const char *v, const char *what, sim_err *err) {
  if (!strcmp(k, "metric")) {
    c->metric_set = true;
    if (!metric_parse(v, &c->metric))
      return sim_errf(err, SIM_EINPUT, "%s: unknown metric '%s' (num_requests_waiting, num_requests_running, "
                      "kv_cache_usage_perc, ttft_p90)", what, v);
    return SIM_OK;
  }
  if (!strcmp(k, "target")) return num(what, k, v, 1e-9, 1e9, &c->target, err);
  if (!strcmp(k, "fixed")) {
    int rc = count(what, k, v, &c->max, err);
    c->min = c->initial = c->max;
    c->fixed = true;
    return rc;
  }
  if (!strcmp(k, "min")) return count(what, k, v, &c->min, err);
  if (!strcmp(k, "max")) return count(what, k, v, &c->max, err);
  if (!strcmp(k, "initial")) return count(what, k, v, &c->initial, err);
  if (!strcmp(k, "interval")) {
    c->interval_set = true;
    return num(what, k, v, 0.001, 86400, &c->interval_s, err);
  }
  if (!strcmp(k, "mode")) {
    if (strcmp(v, "hpa") && strcmp(v, "planner"))
      return sim_errf(err, SIM_EINPUT, "%s: mode must be hpa (Kubernetes HPA on a metric) or planner (Dynamo's "
                      "SLA planner), got '%s'", what, v);
    c->planner = !strcmp(v, "planner");
    return SIM_OK;
  }
  if (!strcmp(k, "ttft")) return num(what, k, v, 0.001, 3600, &c->ttft_s, err);
  if (!strcmp(k, "itl")) return num(what, k, v, 0.0001, 60, &c->itl_s, err);
  if (!strcmp(k, "predictor")) {
    if (!strcmp(v, "constant")) return SIM_OK;
    return sim_errf(err, SIM_EINPUT, "%s: predictor '%s' is not modelled: only constant (Dynamo's ConstantPredictor, "
                    "the last interval's load); arima and prophet fit a time-series model servesim does not have",
                    what, v);
  }
  if (!strcmp(k, "window")) return num(what, k, v, 0.001, 86400, &c->window_s, err);
  if (!strcmp(k, "tolerance")) return num(what, k, v, 0, 10, &c->tolerance, err);
  if (!strcmp(k, "up_window")) return num(what, k, v, 0, 3600, &c->up_window_s, err);
  if (!strcmp(k, "down_window")) return num(what, k, v, 0, 3600, &c->down_window_s, err);
  if (!strcmp(k, "pod_start")) return num(what, k, v, 0, 86400, &c->pod_start_s, err);
  if (!strcmp(k, "warmup")) return num(what, k, v, 0, 86400, &c->warmup_s, err);
  if (!strcmp(k, "load_from")) return text(what, k, v, c->load_from, sizeof c->load_from, err);
  if (!strcmp(k, "instance")) return text(what, k, v, c->instance, sizeof c->instance, err);
  if (!strcmp(k, "up_limit")) {
    if (strcmp(v, "on") && strcmp(v, "off"))
      return sim_errf(err, SIM_EINPUT, "%s: up_limit must be on or off, got '%s'", what, v);
    c->up_limit = !strcmp(v, "on");
    return SIM_OK;
  }
  return sim_errf(err, SIM_EINPUT, "%s: unknown key '%s' (fixed, mode, metric, target, ttft, itl, predictor, min, max, "
                  "initial, interval, window, tolerance, up_window, down_window, up_limit, pod_start, load_from, "
                  "warmup, instance)", what, k);
}

int autoscale_parse(autoscale_cfg *c, const char *spec, const char *what, sim_err *err) {
  char buf[2048];
  if (strlen(spec) >= sizeof buf) return sim_errf(err, SIM_EINPUT, "%s: too long", what);
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) return sim_errf(err, SIM_EINPUT, "%s: expected key=value, got '%s'", what, tok);
    *eq = 0;
    int rc = set_key(c, tok, eq + 1, what, err);
    if (rc) return rc;
  }
  if (c->fixed && (c->min != c->max || c->initial != c->max))
    return sim_errf(err, SIM_EINPUT, "%s: fixed=N sets min, max and initial: give none of them", what);
  if (c->fixed && c->planner) return sim_errf(err, SIM_EINPUT, "%s: fixed=N and mode=planner exclude each other", what);
  if (c->planner && (c->metric_set || c->target > 0))
    return sim_errf(err, SIM_EINPUT, "%s: metric= and target= are HPA's; mode=planner sizes on its ttft= and itl= "
                    "targets instead", what);
  if ((c->fixed || c->planner) && !(c->target > 0)) c->target = 1; /* never consulted (min = max; the planner) */
  if (c->planner && !c->interval_set) c->interval_s = 180; /* Dynamo's adjustment_interval default */
  if (!(c->target > 0)) return sim_errf(err, SIM_EINPUT, "%s: target=X is required (the metric per replica)", what);
  if (c->metric == AS_KV_USAGE && c->target > 1)
    return sim_errf(err, SIM_EINPUT, "%s: a kv_cache_usage_perc target is a fraction in (0, 1], got %g", what, c->target);
  if (c->max == 0) return sim_errf(err, SIM_EINPUT, "%s: max=N is required (the most replicas)", what);
  if (c->min < 1 || c->min > c->max)
    return sim_errf(err, SIM_EINPUT, "%s: need 1 <= min <= max, got min=%u max=%u (scaling to zero is not modelled)",
                    what, c->min, c->max);
  if (c->initial && (c->initial < c->min || c->initial > c->max))
    return sim_errf(err, SIM_EINPUT, "%s: initial=%u is outside [min, max] = [%u, %u]", what, c->initial, c->min, c->max);
  c->on = true;
  return SIM_OK;
}

void autoscale_describe(const autoscale_cfg *c, char *buf, size_t n) {
  if (c->fixed) {
    snprintf(buf, n, "fixed=%u", c->max);
    return;
  }
  if (c->planner) {
    snprintf(buf, n, "mode=planner,ttft=%g,itl=%g,predictor=constant,min=%u,max=%u,interval=%g", c->ttft_s, c->itl_s,
             c->min, c->max, c->interval_s);
    return;
  }
  if (c->metric == AS_TTFT_P90) {
    snprintf(buf, n, "metric=ttft_p90,target=%g,window=%g,min=%u,max=%u,interval=%g,tolerance=%g,up_window=%g,"
             "down_window=%g,up_limit=%s", c->target, c->window_s, c->min, c->max, c->interval_s, c->tolerance,
             c->up_window_s, c->down_window_s, c->up_limit ? "on" : "off");
    return;
  }
  snprintf(buf, n, "metric=%s,target=%g,min=%u,max=%u,interval=%g,tolerance=%g,up_window=%g,down_window=%g,up_limit=%s",
           METRIC_KEYS[c->metric], c->target, c->min, c->max, c->interval_s, c->tolerance, c->up_window_s,
           c->down_window_s, c->up_limit ? "on" : "off");
}

