/* vstage.c: reproduces one load stage of an open-loop inference-perf run
 * (VSHAPE_STAGED, read by vopen.c) and classifies kept up / overloaded.
 *
 * The workload is the run's shared_prefix prompts under its constant stages
 * (workload/shprefix.h), content ids every VSTAGE_HASH_BLOCK_TOKENS tokens
 * (= vLLM's block size, so the cache sees exactly the blocks it would; any
 * block size that is a multiple of it too), seed VSTAGE_SEED. The deployment
 * is the run's (vopen.c): vLLM 0.15.1 (engine version facts) on H100-SXM
 * with the server arguments of exp-config.yaml, gpu_memory_utilization 0.9,
 * prefix caching on, dtype auto, the engine file's parameters (and any
 * --param/--fit override), the measured profile `--profile auto` picks.
 *
 * Stages follow inference-perf's load generator: stage k + 1 is set up only
 * when every request of stage k has ended (answered, or abandoned at the
 * client timeout), noticed by a once-per-second poll (half a second on
 * average, VSTAGE_POLL_S), then `load.interval` seconds of pause, then one
 * second of lead before its clock starts (VSTAGE_LEAD_S). So a stage's
 * requests never share the server with another stage's, but the prefix cache
 * carries over. To place stage k + 1 the run of stages 0..k is simulated
 * first; the point of stage k simulates k + 1 times (stages 0, 0..1, ...,
 * 0..k), each a prefix of the next, and the same simulation gives the same
 * times in each (deterministic, and later stages only start after).
 *
 * Metrics over the requests sent in the stage that were answered within the
 * client timeout, as inference-perf's successes: mean and p99 TTFT, mean E2E
 * (send to last token), and the served rate = successes / (last end - first
 * send), a request abandoned at the timeout ending at send + timeout.
 * Not modelled: the abort that the real client's timeout causes (vLLM drops
 * the request); the simulated server keeps working on it, so an overloaded
 * stage predicts more queueing than a server relieved of its abandoned
 * requests (docs/ACCURACY.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "runner/runner.h"
#include "validate/validate.h"
#include "workload/shprefix.h"

#define VSTAGE_HASH_BLOCK_TOKENS 16
#define VSTAGE_SEED 0
#define VSTAGE_POLL_S 0.5
#define VSTAGE_LEAD_S 1.0

bool vstage_kept_up(double served_rate, double offered_rate, double ttft_p99_ms, double duration_s) {
  if (!isfinite(served_rate) || !isfinite(ttft_p99_ms) || !(offered_rate > 0) || !(duration_s > 0)) return false;
  return served_rate >= VAL_KEPT_UP_RATE * offered_rate && ttft_p99_ms <= VAL_KEPT_UP_TTFT_FRAC * duration_s * 1000.0;
}

/* Requests stage k of the run sends. */
static size_t stage_requests(const vopen_run *r, uint32_t k) {
  shp_stage s = {r->rate_per_s[k], r->duration_s[k], 0};
  return (size_t)shp_stage_requests(&s);
}

/* The trace of stages 0..last at st->start_s. */
static int build_trace(const vstaged *st, uint32_t last, trace *out, sim_err *err) {
  const vopen_run *r = &st->run;
  shp_params p = {r->n_groups,    r->prompts_per_group,     r->prompt_tokens, r->shared_tokens,
                  r->output_tokens, VSTAGE_HASH_BLOCK_TOKENS, VSTAGE_SEED};
  shp_stage s[VSTAGE_MAX];
  for (uint32_t k = 0; k <= last; k++) s[k] = (shp_stage){r->rate_per_s[k], r->duration_s[k], st->start_s[k]};
  return shp_build(out, &p, s, last + 1, err);
}

int vstage_trace(const vpoint *p, trace *out, sim_err *err) {
  SIM_ASSERT(p->staged);
  return build_trace(p->staged, p->staged->stage, out, err);
}

/* One request's outcome, copied out of the finished run once (the run is
 * freed right after; nothing reads the live simulation). */
typedef struct vreq {
  sim_ns send_ns, first_ns, finish_ns, sched_ns; /* send, first token, last token, first scheduled */
  bool done;                                     /* finished (every output token) */
} vreq;

/* Simulates the trace (ownership moves into the run) on the point's
 * deployment; the per-request outcomes go to *out (caller frees). Returns
 * false with the reason in fail when the run cannot be made. */
static bool simulate(vpoint *p, const voverrides *ov, trace *tr, vreq **out, char *fail, size_t nf) {
  scenario sc;
  vpoint_scenario(p, ov, &sc);
  sc.sample_interval_s = -1;
  run_ctx *x = sim_calloc(1, sizeof *x);
  runner_init(x, &sc);
  x->tr = *tr; /* moved: runner_free releases it */
  trace_init(tr);
  sim_err e = {0, ""};
  bool ok = false;
  if (cfg_model_load(&x->model, sc.model, &e) || cfg_gpu_load(&x->gpu, sc.gpu, &e) ||
      cfg_engine_load(&x->engine, sc.engine, &e)) {
    vfmt(fail, nf, "configuration: %s", e.msg);
    goto done;
  }
  vparam_apply(ov, &x->engine);
  x->deploy = sc.deploy;
  if (cfg_resolve(&x->deploy, &x->model, &x->gpu, &x->engine, &e)) {
    vfmt(fail, nf, "deployment: %s", e.msg);
    goto done;
  }
  if (runner_build(x, true, &e) || runner_execute(x, NULL, &e)) {
    vfmt(fail, nf, "%s", e.msg);
    goto done;
  }
  p->pred_kv_tokens = (double)x->plan.kv_tokens;
  p->pred_preemptions = x->res.m.preemptions;
  stratum_key(&x->strat, p->stratum, sizeof p->stratum);
  vreq *v = sim_malloc((x->res.n_reqs ? x->res.n_reqs : 1) * sizeof *v);
  for (size_t i = 0; i < x->res.n_reqs; i++) {
    const run_record *q = &x->res.reqs[i];
    v[i] = (vreq){q->send_ns, q->first_token_ns, q->finish_ns, q->first_sched_ns, q->outcome == REQ_FINISHED};
  }
  *out = v;
  ok = true;
done:
  runner_free(x);
  free(x);
  return ok;
}

/* Stage outcome over requests [a, b) (header comment); *end_ns gets the last
 * end (answer or timeout); the metrics go to pred when non-NULL. */
static void stage_outcome(const vreq *v, size_t a, size_t b, double timeout_s, vstage_out *o, sim_ns *end_ns,
                          double pred[VM_COUNT], double *queue_ms) {
  sim_ns timeout = sim_s_to_ns(timeout_s), first = SIM_NS_INF, last = 0;
  double *ttft = sim_malloc((b - a + 1) * sizeof *ttft), e2e = 0, queue = 0;
  size_t ok = 0;
  for (size_t i = a; i < b; i++) {
    bool good = v[i].done && v[i].finish_ns - v[i].send_ns <= timeout;
    sim_ns end = good ? v[i].finish_ns : v[i].send_ns + timeout;
    first = SIM_MIN(first, v[i].send_ns);
    last = SIM_MAX(last, end);
    if (!good) continue;
    ttft[ok++] = sim_ns_to_ms(v[i].first_ns - v[i].send_ns);
    e2e += sim_ns_to_ms(v[i].finish_ns - v[i].send_ns);
    queue += sim_ns_to_ms(v[i].sched_ns - v[i].send_ns);
  }
  *end_ns = last;
  o->sent = b - a;
  o->ok = ok;
  o->served_rate = last > first ? (double)ok / sim_ns_to_s(last - first) : 0;
  if (pred) {
    dist_stats d;
    metrics_dist(ttft, ok, &d);
    pred[VM_TTFT] = ok ? d.mean : NAN;
    pred[VM_TTFT_P99] = ok ? d.p99 : NAN;
    pred[VM_TTFT_MED] = ok ? d.median : NAN;
    pred[VM_E2E] = ok ? e2e / (double)ok : NAN;
    *queue_ms = ok ? queue / (double)ok : NAN;
  }
  free(ttft);
}

void vstage_run_point(vpoint *p, const voverrides *ov) {
  vstaged *st = p->staged;
  const vopen_run *r = &st->run;
  uint32_t k = st->stage;
  st->start_s[0] = 0;
  for (uint32_t j = 0; j <= k; j++) {
    trace tr;
    sim_err e = {0, ""};
    if (build_trace(st, j, &tr, &e)) {
      vfmt(p->fail, sizeof p->fail, "workload: %s", e.msg);
      trace_free(&tr);
      return;
    }
    double t0_s = tr.t0_s;
    size_t a = 0;
    for (uint32_t i = 0; i < j; i++) a += stage_requests(r, i);
    size_t b = tr.n;
    vreq *v = NULL;
    if (!simulate(p, ov, &tr, &v, p->fail, sizeof p->fail)) return;
    vstage_out o;
    sim_ns end_ns;
    if (j < k) {
      stage_outcome(v, a, b, r->timeout_s, &o, &end_ns, NULL, NULL);
      st->start_s[j + 1] = sim_ns_to_s(end_ns) + t0_s + VSTAGE_POLL_S + r->interval_s + VSTAGE_LEAD_S;
    } else {
      stage_outcome(v, a, b, r->timeout_s, &st->pred, &end_ns, p->pred, &p->pred_queue_ms);
      st->first_req = a;
      st->pred.mean_input_tokens = r->prompt_tokens;
      st->pred.kept_up = vstage_kept_up(st->pred.served_rate, r->rate_per_s[k], p->pred[VM_TTFT_P99], r->duration_s[k]);
      p->pred_completed = st->pred.ok;
      p->ran = true;
    }
    free(v);
  }
}

/* ---- how a point is reproduced ------------------------------------------------------- */

void vstage_method(const vpoint *p, const char *trace_path, char *buf, size_t n) {
  const vstaged *st = p->staged;
  const vopen_run *r = &st->run;
  char stages[768] = "", one[128];
  size_t a = 0, b = 0;
  for (uint32_t j = 0; j < r->n_stages; j++) {
    size_t nj = stage_requests(r, j);
    vfmt(one, sizeof one, "%s%u: %g req/s x %g s (requests %zu..%zu)", j ? ", " : "", j, r->rate_per_s[j],
         r->duration_s[j], b, b + nj - 1);
    strncat(stages, one, sizeof stages - strlen(stages) - 1);
    if (j == st->stage) a = b;
    b += nj;
  }
  char file[256];
  if (trace_path) vfmt(file, sizeof file, "%s", trace_path);
  else {
    vfmt(file, sizeof file, "DIR/%s.csv", p->id);
    for (char *c = file + 4; *c; c++)
      if (*c == '/') *c = '_';
  }
  char measured[48] = "no answered request";
  if (isfinite(r->meas_input_tokens)) vfmt(measured, sizeof measured, "measured mean %.1f", r->meas_input_tokens);
  vfmt(buf, n,
       "inference-perf shared_prefix rebuilt: %u groups x %u prompts of %u tokens (the first %u shared within a "
       "group; config.yaml: %u + %u nominal, %s), %u output tokens (ignore_eos), request n of every stage = prompt "
       "n mod %u of one shuffle; constant stages %s, sends at normalized exponential gaps (seed %d), each stage "
       "%.1f s after the previous one's last response; vLLM %s, %u x %s, max_num_seqs %u, max_num_batched_tokens %u, "
       "max_model_len %u, gpu_memory_utilization %.2g, prefix caching on; metrics over a stage's requests answered "
       "within %g s. Redo: servesim validate --only %s --save-traces DIR, then servesim run --trace %s --model %s "
       "--engine %s@%s --gpu %s --tp %u --max-num-seqs %u --max-num-batched-tokens %u --max-model-len %u "
       "--gpu-memory-utilization %.2g --enable-prefix-caching --csv requests.csv (stage %u: rows of requests %zu..%zu)",
       r->n_groups, r->prompts_per_group, r->prompt_tokens, r->shared_tokens, r->system_prompt_tokens,
       r->question_tokens, measured, r->output_tokens, r->n_groups * r->prompts_per_group, stages, VSTAGE_SEED,
       VSTAGE_POLL_S + r->interval_s + VSTAGE_LEAD_S, p->engine_version, p->tp, p->gpu, r->max_num_seqs,
       r->max_num_batched_tokens,
       r->max_model_len, VSTAGE_GPU_MEMORY_UTILIZATION, r->timeout_s, p->id, file, p->model[0] ? p->model : "?",
       p->engine, p->engine_version, p->gpu, p->tp, r->max_num_seqs, r->max_num_batched_tokens, r->max_model_len, VSTAGE_GPU_MEMORY_UTILIZATION,
       st->stage, a, a + stage_requests(r, st->stage) - 1);
}
