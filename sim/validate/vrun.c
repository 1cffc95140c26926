/* vrun.c: reproduces one validation point in servesim (see validate.h for
 * the workload shapes) and records the prediction.
 *
 * The configs are loaded here (the fit overrides engine parameters, and each
 * source's engine version adjusts a few of them), the workload is generated
 * here (some points fix each request's lengths), and the rest of the pipeline
 * is the runner's (runner_build: memory plan, cost model, cluster;
 * runner_execute: run and summary), so validation runs exactly what `run` runs.
 *
 * Static-batch points: TensorRT-LLM 0.9 ran Llama-2-70B with random weights
 * past its 4096-token context (128 + 4096 tokens); the context limit does not
 * enter the cost model, so max_pos is raised to isl + osl for those points.
 *
 * Parallel runs: vrun_all runs the points on the shared pool (core/pool.h),
 * the longest first; points share nothing (each run loads its own configs),
 * so the result does not depend on the order or the number of threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/settings.h"
#include "core/pool.h"
#include "hw/cost.h"
#include "hw/memplan.h"
#include "metrics/metrics.h"
#include "validate/validate.h"
#include "validate/vdata_impl.h"
#include "runner/runner.h"
#include "workload/gen.h"

/* ---- engine versions of the sources ---------------------------------------------------
 * Each source ran one engine version; its defaults differ from the current
 * ones the engine files describe. The vLLM versions go through the engine
 * version facts (config/engver.h; vpoint.engine_version): AIConfigurator's
 * vLLM points were measured in 2025-10 with the version unrecorded, vLLM
 * 0.11.0 by date (no async scheduling by default, first-chunk admission,
 * gpu_memory_utilization 0.9); the inference-perf runs name vLLM 0.15.1.
 * The rest are facts about the measurement setup (like a flag the benchmark
 * passed), applied to every point of the source alike:
 *  - TensorRT-LLM 0.14 offline (trtllm-bench, TensorRT engine, C++ executor)
 *    and 0.9 static batch (gptSessionBenchmark): no overlap scheduler (it came
 *    with the PyTorch backend), so CPU work does not hide behind the GPU.
 *  - TensorRT-LLM 0.9 static batch: gptSessionBenchmark allocates the KV
 *    cache for exactly the batch it runs (its reported peak memory reaches 97%
 *    of the device), not a fraction of free memory: the whole device is the
 *    budget; CUDA graphs are off by default there.
 *  - TensorRT-LLM (AIConfigurator, 0.14): the KV pool is free_gpu_memory_fraction
 *    0.9 (KvCacheConfig default) of the memory left after weights (below), and
 *    chunked prefill (chunked context) is off, its default in the LLM API and
 *    trtllm-bench: a context is scheduled whole when it fits the step's token
 *    budget (servesim grows the default budget to max_model_len = ISL + OSL,
 *    as the benchmarks size max_num_tokens for their prompts).
 *  - Neither trtllm-bench (offline) nor gptSessionBenchmark (static batch)
 *    goes through an HTTP server: no frontend latency there. */
#define TRT_FREE_FRACTION 0.9

static void source_engine_facts(const vpoint *p, engine_cfg *e, deploy_cfg *d) {
  if (p->user_sc) return; /* the user's scenario says what ran */
  bool trt = !strcmp(e->name, "trtllm");
  switch (p->src) {
  case VSRC_AIC:
    if (trt) d->enable_chunked_prefill = 0;
    break;
  case VSRC_TRT_OVERVIEW:
    d->async_scheduling = 0;
    e->frontend_latency_ns = 0, e->stream_per_seq_ns = 0;
    d->enable_chunked_prefill = 0;
    break;
  case VSRC_STATIC_BATCH:
    d->async_scheduling = 0;
    e->frontend_latency_ns = 0, e->stream_per_seq_ns = 0;
    e->cuda_graph_max_batch = 0;
    d->gpu_memory_utilization = 1.0;
    break;
  default: break;
  }
}

/* The facts source_engine_facts applies, in words. */
static const char *source_facts_text(const vpoint *p) {
  if (p->user_sc) return "";
  bool trt = !strcmp(p->engine, "trtllm");
  switch (p->src) {
  case VSRC_AIC:
    return trt ? "; TensorRT-LLM as AIConfigurator ran it: chunked prefill off (--no-enable-chunked-prefill), KV pool "
                 "0.9 of the memory left after the weights (free_gpu_memory_fraction; no run flag)"
               : "";
  case VSRC_TRT_OVERVIEW:
    return "; trtllm-bench as it ran: no overlap scheduler (--no-async-scheduling), chunked prefill off "
           "(--no-enable-chunked-prefill), no HTTP frontend (engine file frontend_latency_us 0; no run flag)";
  case VSRC_STATIC_BATCH:
    return "; gptSessionBenchmark as it ran: no overlap scheduler (--no-async-scheduling), no HTTP frontend and no "
           "CUDA graphs (engine file frontend_latency_us 0, cuda_graph_max_batch 0; no run flag), the whole device "
           "for the KV cache (--gpu-memory-utilization 1)";
  default: return "";
  }
}

void vpoint_method(const vpoint *p, const voverrides *ov, char *buf, size_t n) {
  if (p->shape == VSHAPE_STAGED) {
    vstage_method(p, NULL, buf, n);
    return;
  }
  scenario *sc = sim_malloc(sizeof *sc);
  vpoint_scenario(p, ov, sc);
  const gen_params *g = &sc->gen;
  char what[320];
  switch (p->shape) {
  case VSHAPE_CLOSED:
    vfmt(what, sizeof what,
         "closed loop: %u clients, %llu requests (10 per client) of %u prompt tokens and %u output tokens uniform in "
         "+-%g%% (prompts fixed), TTFT from slot acquisition, prefix caching off",
         p->concurrency, (unsigned long long)p->num_prompts, p->isl, p->osl, 100 * g->output.range_ratio);
    break;
  case VSHAPE_OFFLINE:
    vfmt(what, sizeof what, "offline: %llu requests of %u + %u tokens at t=0, no client limit",
         (unsigned long long)p->num_prompts, p->isl, p->osl);
    break;
  case VSHAPE_STATIC:
    vfmt(what, sizeof what,
         "static batch: one batch of %u identical requests of %u + %u tokens, prefilled in one step and decoded "
         "together",
         p->concurrency, p->isl, p->osl);
    break;
  default:
    vfmt(what, sizeof what, "open loop (your run): %llu requests at %g req/s (burstiness %g)%s, lengths %s",
         (unsigned long long)p->num_prompts, p->request_rate, p->burstiness,
         p->concurrency ? ", client slots as max_concurrency" : "",
         p->in_lens ? "per request from the result" : "the result's means");
    break;
  }
  char cmd[1400], opt[256];
  size_t k = (size_t)snprintf(cmd, sizeof cmd, "servesim run --model %s --gpu %s --engine %s --profile %s", sc->model,
                              sc->gpu, sc->engine, sc->profile[0] ? sc->profile : "auto");
  settings_flags_text(&sc->deploy, cmd, sizeof cmd, &k); /* every setting the point gave (config/settings.c) */
#define ADDO(...)                                                        do {                                                                     snprintf(opt, sizeof opt, __VA_ARGS__);                                if (k < sizeof cmd) k += (size_t)snprintf(cmd + k, sizeof cmd - k, "%s", opt);   } while (0)
  ADDO(" --num-prompts %llu --random-input-len %u --random-output-len %u", (unsigned long long)g->num_prompts, p->isl,
       p->osl);
  if (g->output.range_ratio > 0) ADDO(" --output-range-ratio %g", g->output.range_ratio);
  if (isinf(g->request_rate)) ADDO(" --request-rate inf");
  else ADDO(" --request-rate %g --burstiness %g", g->request_rate, g->burstiness);
  if (sc->max_concurrency) ADDO(" --max-concurrency %u", sc->max_concurrency);
#undef ADDO
  vfmt(buf, n, "%s%s%s%s. Redo: %s", what, source_facts_text(p), p->note[0] ? "; " : "", p->note, cmd);
  free(sc);
}

/* ---- one run ----------------------------------------------------------------------- */

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#define FAIL(...)                                         \
  do {                                                    \
    vfmt(p->fail, sizeof p->fail, __VA_ARGS__);       \
    goto done;                                            \
  } while (0)

int vrun_point(vpoint *p, const voverrides *ov, sim_err *err) {
  (void)err;
  double t0 = wall_now();
  p->ran = false;
  p->fail[0] = 0;
  p->stratum[0] = 0;
  for (int m = 0; m < VM_COUNT; m++) p->pred[m] = NAN;
  if (p->skip[0]) return SIM_OK;
  if (p->shape == VSHAPE_STAGED) { /* a stage of an open-loop run: its own workload and deployment (vstage.c) */
    vstage_run_point(p, ov);
    p->wall_s = wall_now() - t0;
    return SIM_OK;
  }
  scenario sc;
  vpoint_scenario(p, ov, &sc);
  sc.sample_interval_s = -1; /* no time series */
  run_ctx *x = sim_calloc(1, sizeof *x);
  runner_init(x, &sc);
  sim_err e = {0, ""};
  if (cfg_model_load(&x->model, sc.model, &e) || cfg_gpu_load(&x->gpu, sc.gpu, &e) ||
      cfg_engine_load(&x->engine, sc.engine, &e))
    FAIL("configuration: %s", e.msg);
  if (x->model.unmodelled[0] && !strstr(p->note, x->model.unmodelled)) vdata__note(p, "%s", x->model.unmodelled);
  vparam_apply(ov, &x->engine);
  if (p->shape == VSHAPE_STATIC && x->model.max_pos < p->isl + p->osl) x->model.max_pos = p->isl + p->osl;
  x->deploy = sc.deploy;
  source_engine_facts(p, &x->engine, &x->deploy);
  voverride_set_apply(ov, &x->deploy); /* --set wins over the source's facts */
  /* the context each request needs, not the model's whole window: engines size
   * max_model_len from the benchmark (trtllm-bench builds for max ISL + OSL)
   * and the plan refuses a pool smaller than max_model_len */
  if (!x->deploy.max_model_len && !p->user_sc) {
    uint32_t need = p->isl + (uint32_t)floor(p->osl * (1.0 + sc.gen.output.range_ratio));
    if (p->in_lens)
      for (size_t i = 0; i < p->n_lens; i++) need = SIM_MAX(need, p->in_lens[i] + p->out_lens[i]);
    x->deploy.max_model_len = SIM_MIN(x->model.max_pos, need);
  }
  if (cfg_resolve(&x->deploy, &x->model, &x->gpu, &x->engine, &e)) FAIL("deployment: %s", e.msg);
  if (!p->user_sc && !strcmp(x->engine.name, "trtllm") && p->shape != VSHAPE_STATIC) {
    /* TensorRT-LLM sizes its pool as free_gpu_memory_fraction of the memory
     * left after weights, activations and runtime (configs/README.md):
     * kv = f (M - W - A - R), i.e. u = f + (1 - f)(W + A + R) / M. */
    deploy_cfg d1 = x->deploy;
    d1.gpu_memory_utilization = 1.0;
    mem_plan p1;
    sim_err e1;
    memplan_compute(&p1, &x->model, &x->gpu, &x->engine, &d1, &e1);
    double used = p1.weights_bytes + p1.activation_bytes + p1.cuda_graph_bytes + p1.runtime_bytes;
    double u = TRT_FREE_FRACTION + (1.0 - TRT_FREE_FRACTION) * used / p1.device_bytes;
    x->deploy.gpu_memory_utilization = u < 1.0 ? u : 1.0;
  }
  if (gen_trace(&x->tr, &sc.gen, &e)) FAIL("workload: %s", e.msg);
  if (p->in_lens) {
    SIM_ASSERT(x->tr.n == p->n_lens);
    for (size_t i = 0; i < p->n_lens; i++) {
      x->tr.reqs[i].prompt_tokens = p->in_lens[i];
      x->tr.reqs[i].output_tokens = p->out_lens[i];
    }
  }
  if (runner_build(x, true, &e)) FAIL("%s", e.msg);
  stratum_key(&x->strat, p->stratum, sizeof p->stratum);
  p->pred_kv_tokens = (double)x->plan.kv_tokens;
  if (runner_execute(x, NULL, &e)) FAIL("%s", e.msg);
  const metrics_summary *sum = &x->res.sum;
  if (sum->rejected || sum->completed != sum->total)
    FAIL("%zu of %zu requests did not complete (first reason: %s)", sum->total - sum->completed, sum->total,
         sum->rejected_by_reason[REJ_KV_TOO_SMALL] ? rq_reject_name(REJ_KV_TOO_SMALL)
         : sum->rejected_by_reason[REJ_TOO_LONG]   ? rq_reject_name(REJ_TOO_LONG)
                                                   : "other");
  p->ran = true;
  p->pred[VM_TTFT] = sum->ttft_ms.mean;
  p->pred[VM_TPOT] = sum->tpot_ms.n ? sum->tpot_ms.mean : NAN;
  p->pred_queue_ms = sum->queue_ms.mean;
  p->pred_preemptions = x->res.m.preemptions;
  p->pred_completed = sum->completed;
  p->pred_peak_in_system = sum->peak_in_system;
  p->pred_ttft_min_ms = sum->ttft_ms.min;
  p->pred_ttft_max_ms = sum->ttft_ms.max;
  if (p->shape == VSHAPE_CLOSED)
    p->pred[VM_TPUT] = p->concurrency * (double)p->osl /
                       ((p->pred[VM_TTFT] + (p->osl - 1.0) * p->pred[VM_TPOT]) / 1000.0);
  else
    p->pred[VM_TPUT] = sum->output_throughput;
done:
  runner_free(x);
  free(x);
  p->wall_s = wall_now() - t0;
  return SIM_OK;
}

/* ---- all points, in parallel --------------------------------------------------------- */

typedef struct vjob {
  vpoint *p;
  const voverrides *ov;
  int rc;
  sim_err err;
} vjob;

static void job_work(void *ctx, size_t i) {
  vjob *j = &((vjob *)ctx)[i];
  j->rc = vrun_point(j->p, j->ov, &j->err);
}

/* Rough work estimate: requests x (prompt + output) tokens, to start the long runs first. */
static double job_weight(const vpoint *p) { return (double)p->num_prompts * (p->osl + p->isl / 64.0); }

static int cmp_jobs(const void *a, const void *b) {
  double wa = job_weight(((const vjob *)a)->p), wb = job_weight(((const vjob *)b)->p);
  return wa < wb ? 1 : wa > wb ? -1 : 0;
}

int vrun_all(vset *s, const voverrides *ov, bool only_train, const char *engine, sim_err *err) {
  vjob *jobs = sim_calloc(s->n ? s->n : 1, sizeof *jobs);
  size_t nj = 0;
  for (size_t i = 0; i < s->n; i++) {
    vpoint *p = &s->pts[i];
    if (p->skip[0]) continue;
    if (only_train && !p->train) continue;
    if (engine && strcmp(p->engine, engine)) continue;
    jobs[nj].p = p;
    jobs[nj].ov = ov;
    nj++;
  }
  qsort(jobs, nj, sizeof *jobs, cmp_jobs); /* the long runs first: the pool starts jobs in index order */
  int out = pool_run(nj, pool_default_jobs(), job_work, jobs, NULL, NULL, err);
  for (size_t i = 0; i < nj && !out; i++)
    if (jobs[i].rc) {
      *err = jobs[i].err;
      out = jobs[i].rc;
    }
  free(jobs);
  return out;
}
