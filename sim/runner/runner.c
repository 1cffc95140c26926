/* runner.c: scenario -> configs -> plan -> trace -> cost -> cluster -> summary. */
#include "runner/runner.h"

#include "config/engver.h"

#include "serve/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a scenario's replica losses all fit the cluster's table */
_Static_assert((int)SCENARIO_MAX_FAILURES <= (int)CLUSTER_MAX_FAILURES, "the cluster holds every loss a scenario names");

/* --duration on the run's clock, as seconds of the workload's own clock: a
 * traffic shape compresses (or stretches) time, so the arrivals that fill D
 * simulated seconds span warp_unmap_s(D) before it (warp.h). */
static double duration_before_warp(const scenario *sc) { return warp_unmap_s(&sc->traffic, sc->duration_s); }

int runner_load_workload(const scenario *sc, trace *out, sim_err *err) {
  int rc;
  trace_init(out);
  if (sc->trace_path[0]) {
    rc = trace_load(out, sc->trace_path, sc->trace_fmt, err);
  } else if (sc->duration_s > 0) { /* the generator sized to the duration: N = rate x D, the last sent at N / rate */
    gen_params g = sc->gen;
    double rate = g.request_rate * sc->rate_scale;
    if (!isfinite(rate) || rate <= 0)
      return sim_errf(err, SIM_EINPUT, "--duration with the generator needs a finite --request-rate (requests per "
                      "second), not inf");
    double n = floor(rate * duration_before_warp(sc) + 0.5);
    g.num_prompts = n < 1 ? 1 : (uint64_t)n;
    rc = gen_trace(out, &g, err);
  } else {
    rc = gen_trace(out, &sc->gen, err);
  }
  if (rc) return rc;
  if (sc->window_start_s > 0 || sc->window_end_s >= 0) trace_window(out, sc->window_start_s, sc->window_end_s);
  if (sc->max_requests && out->n > sc->max_requests) trace_truncate(out, sc->max_requests);
  if (out->n == 0)
    return sim_errf(err, SIM_EINPUT, "%s: the workload has no requests%s", out->source,
                    sc->window_start_s > 0 || sc->window_end_s >= 0 ? " in the chosen time window" : "");
  if (sc->target_rate > 0) {
    if (out->n < 2 || out->reqs[out->n - 1].arrival_ns == 0)
      return sim_errf(err, SIM_EINPUT, "--request-rate with a trace: the trace has no time span to rescale");
    double span_s = (double)out->reqs[out->n - 1].arrival_ns / 1e9;
    double rate = (double)(out->n - 1) / span_s;
    trace_scale_rate(out, sc->target_rate / rate);
  }
  if (sc->rate_scale != 1.0) trace_scale_rate(out, sc->rate_scale);
  if (sc->prompt_scale != 1.0 || sc->output_scale != 1.0)
    trace_scale_lengths(out, sc->prompt_scale, sc->output_scale);
  if (sc->duration_s > 0 && sc->trace_path[0] && !trace_repeat(out, duration_before_warp(sc), sc->repeat_shares_prefixes))
    return sim_errf(err, SIM_EINPUT, "--duration: %s has no time span to repeat (every request arrives at 0)",
                    out->source);
  /* traffic step / ramp last: its times are on the clock the run shows */
  warp_apply(out, &sc->traffic);
  return SIM_OK;
}

void runner_init(run_ctx *r, const scenario *sc) {
  memset(r, 0, sizeof *r);
  r->sc = *sc;
  trace_init(&r->tr);
}

int runner_prepare(run_ctx *r, const scenario *sc, sim_err *err) {
  runner_init(r, sc);
  int rc = scenario_load_configs(&r->sc, &r->model, &r->gpu, &r->engine, &r->deploy, err);
  if (rc) return rc;
  return runner_build(r, false, err);
}

/* A pool's memory plan, its refusal naming the pool. */
static int pool_plan(run_ctx *r, bool decode, mem_plan *p, sim_err *err) {
  deploy_cfg *pd = &r->pool[decode];
  deploy_pool(&r->deploy, decode, pd);
  if (!memplan_compute(p, &r->model, &r->gpu, &r->engine, pd, err)) return SIM_OK;
  char why[sizeof err->msg];
  snprintf(why, sizeof why, "%s", err->msg);
  return sim_errf(err, SIM_EINPUT, "--mode disagg, %s pool (TP%u): %s", decode ? "decode" : "prefill", pd->tp, why);
}

/* --mode disagg (docs/DISAGG.md): the decode pool's plan and cost model, and the KV transfer's cost. Each prefill
 * GPU sends its shard of the prompt's KV and each decode GPU receives its own (re-sharded when the TPs differ:
 * every byte moves once), all GPUs at once, so a transfer lasts as long as the larger per-GPU share takes over one
 * GPU's link: NVLink when both pools fit in one node (the GPU file's link_Bps), else the inter-node network (one
 * NIC per GPU: net_Bps). Each transfer adds the link's latency twice: the decode side's read, then its completion
 * notice to the prefill side, which frees the blocks then (vLLM's NixlConnector: a NIXL read, then send_notif).
 * No layer-wise overlap with the prefill: NixlConnector and TensorRT-LLM's KV cache transceiver send a request's
 * KV once its prefill is over. */
static int setup_disagg(run_ctx *r, cluster_cfg *cc, sim_err *err) {
  const deploy_cfg *d = &r->deploy;
  int rc;
  if ((rc = pool_plan(r, true, &r->plan_dec, err))) return rc;
  if ((rc = cost_new(&r->cost_dec, &r->model, &r->gpu, &r->engine, &r->pool[1], err))) return rc;
  profsel_attach(&r->prof, r->cost_dec);
  /* each worker's attention DP ranks are engine cores of their own, stepping in lockstep with MoE layers (as an
     aggregated replica's: runner_build), routed to the least loaded rank of the pool */
  uint32_t pc = d->prefill_workers * d->prefill_dp, dc = d->decode_workers * d->decode_dp;
  cc->replicas = pc + dc;
  cc->dp_group = d->prefill_dp;
  cc->disagg.decode_dp_group = d->decode_dp;
  cc->dp_lockstep = (d->prefill_dp > 1 || d->decode_dp > 1) && r->model.moe_layers > 0;
  cc->router = d->prefill_dp > 1 || d->decode_dp > 1 ? ROUTE_LEAST_OUTSTANDING : d->router;
  cc->sched.max_num_seqs = d->prefill_max_num_seqs;
  cc->sched.max_num_batched_tokens = d->prefill_max_num_batched_tokens;
  cc->disagg.on = true;
  cc->disagg.prefill = pc;
  cc->disagg.decode_cost = r->cost_dec;
  cc->disagg.decode_sched = cc->sched;
  cc->disagg.decode_sched.max_num_seqs = d->decode_max_num_seqs;
  cc->disagg.decode_sched.max_num_batched_tokens = d->decode_max_num_batched_tokens;
  cc->disagg.decode_kv_blocks = r->plan_dec.kv_blocks;
  /* SGLang's decode worker takes the prefill worker's first token with the KV (disaggregation/decode.py) */
  cc->disagg.first_token_prefill = cc->disagg.decode_sched.prebuilt = engver_is_sglang(&r->engine);
  cc->disagg.max_local_prefill = d->max_local_prefill_length;
  cc->disagg.local_needs_hit = !strcmp(r->engine.name, "trtllm");
  bool nvlink = r->xfer_nvlink = deploy_gpus_total(d) <= d->gpus_per_node;
  double bps = nvlink ? r->gpu.link_Bps : r->gpu.net_Bps, lat = nvlink ? r->gpu.link_latency_ns : r->gpu.net_latency_ns;
  if (!(bps > 0))
    return sim_errf(err, SIM_EINPUT, "--mode disagg: %s has no %s bandwidth for the KV transfer (%s)", r->gpu.name,
                    nvlink ? "link" : "network", nvlink ? "interconnect_bandwidth_gb_s" : "network_bandwidth_gb_s");
  double share = fmax(r->plan.kv_bytes_per_token, r->plan_dec.kv_bytes_per_token);
  cc->disagg.xfer_ns_per_token = share / bps * 1e9;
  cc->disagg.xfer_bytes_per_token = r->plan_dec.kv_bytes_per_token * d->decode_tp;
  cc->disagg.xfer_fixed_ns = (sim_ns)llround(2.0 * lat);
  return SIM_OK;
}

int runner_build(run_ctx *r, bool have_trace, sim_err *err) {
  const scenario *sc = &r->sc;
  int rc;
  if (r->deploy.disagg) rc = pool_plan(r, false, &r->plan, err);
  else rc = memplan_compute(&r->plan, &r->model, &r->gpu, &r->engine, &r->deploy, err);
  if (rc) return rc;
  if (!have_trace && (rc = runner_load_workload(sc, &r->tr, err))) return rc;
  trace_compute_stats(&r->tr, &r->tr_stats);
  if ((rc = profsel_choose(&r->prof, sc->profile, &r->gpu, &r->engine, err))) return rc;
  if ((rc = cost_new(&r->cost, &r->model, &r->gpu, &r->engine, r->deploy.disagg ? &r->pool[0] : &r->deploy, err))) return rc;
  profsel_attach(&r->prof, r->cost);
  r->strat = stratum_of(&r->prof, &r->engine, &r->model, sc->max_concurrency, &r->tr_stats);

  cluster_cfg cc;
  memset(&cc, 0, sizeof cc);
  /* attention data parallelism: each DP rank is an engine core of its own (scheduler, KV pool) that the
   * cluster runs like a replica; vLLM's DP coordinator sends a request to the least loaded rank
   * (DPLBAsyncMPClient: fewest waiting, then running), here the fewest outstanding across all ranks */
  cc.replicas = r->deploy.replicas * deploy_dp(&r->deploy);
  cc.dp_group = deploy_dp(&r->deploy);
  /* with MoE layers the ranks step together (every MoE layer gathers all ranks' tokens; vLLM runs a dummy
   * forward on a rank with nothing to do); a dense model's DP ranks are independent engines */
  cc.dp_lockstep = deploy_dp(&r->deploy) > 1 && r->model.moe_layers > 0;
  cc.router = deploy_dp(&r->deploy) > 1 ? ROUTE_LEAST_OUTSTANDING : r->deploy.router;
  /* a hybrid model runs no more sequences than it has linear-attention states for (memplan) */
  cc.sched.max_num_seqs = r->deploy.max_num_seqs < r->plan.state_slots || r->plan.state_bytes_per_seq <= 0
                              ? r->deploy.max_num_seqs
                              : r->plan.state_slots;
  cc.sched.max_num_batched_tokens = r->deploy.max_num_batched_tokens;
  cc.sched.long_prefill_token_threshold = r->deploy.long_prefill_token_threshold;
  cc.sched.chunked_prefill = r->deploy.enable_chunked_prefill != 0;
  cc.sched.async_scheduling = r->deploy.async_scheduling != 0;
  cc.sched.pipeline_stages = r->deploy.pp;
  cc.sched.admission = r->engine.admission;
  cc.sched.reserve_full_isl = r->engine.reserve_full_isl;
  cc.sched.max_prefill_tokens = r->engine.max_prefill_tokens;
  cc.sched.schedule_conservativeness = engver_sglang_conservativeness(&r->engine, r->deploy.dp);
  cc.sched.retract_steps = engver_sglang_retract_steps(&r->engine);
  cc.sched.lpm = r->deploy.schedule_lpm;
  cc.sched.mixed_chunk = r->deploy.mixed_chunk;
  if (r->deploy.spec_method != SPEC_NONE && r->deploy.num_speculative_tokens) { /* config/specdec.h */
    spec_method sm = r->deploy.spec_method;
    cc.sched.spec_k = r->deploy.num_speculative_tokens;
    /* vLLM v1/core/sched/scheduler.py: num_lookahead_tokens = num_spec_tokens when use_eagle() (eagle, eagle3, the
       MTP methods) or a draft model; 0 for ngram */
    cc.sched.spec_lookahead = sm == SPEC_NGRAM ? 0 : cc.sched.spec_k;
    cc.sched.spec_disable_bs = r->deploy.spec_disable_bs;
    cc.sched.spec_seed = sc->seed;
    memcpy(cc.sched.spec_rates, r->deploy.spec_rates, sizeof cc.sched.spec_rates);
  }
  cc.kv_blocks = r->plan.kv_blocks;
  cc.block_tokens = r->plan.block_tokens;
  cc.prefix_caching = r->deploy.enable_prefix_caching != 0;
  cc.max_model_len = r->deploy.max_model_len;
  cc.max_concurrency = sc->max_concurrency;
  cc.frontend_latency_ns = (sim_ns)llround(r->engine.frontend_latency_ns);
  double si = sc->sample_interval_s;
  if (si == 0) {
    double span = r->tr_stats.span_s;
    si = span > 7200 ? ceil(span / 7200) : 1.0;
  }
  cc.sample_interval_ns = si > 0 ? sim_s_to_ns(si) : 0; /* negative: no time series */
  cc.time_limit_ns = sc->time_limit_s > 0 ? sim_s_to_ns(sc->time_limit_s) : 0;
  cc.step_by_step = sc->step_by_step;
  cc.apart = !sc->shared_timeline; /* where nothing couples the replicas (cluster.h); paced runs keep one timeline */
  if (sc->n_failures && deploy_dp(&r->deploy) > 1)
    return sim_errf(err, SIM_EINPUT, "failures (a lost replica) with data_parallel_size %u: not modelled (a replica "
                    "is then a group of engine ranks)", deploy_dp(&r->deploy));
  cc.n_failures = sc->n_failures;
  for (uint32_t i = 0; i < sc->n_failures; i++) {
    cc.failures[i].replica = sc->failures[i].replica;
    cc.failures[i].at_ns = sim_s_to_ns(sc->failures[i].at_s);
  }
  if (r->deploy.disagg && (rc = setup_disagg(r, &cc, err))) return rc;
  if ((rc = scaling_setup(sc, &r->engine, &r->gpu, &r->deploy, &r->plan, &cc, &r->res.scale, err))) return rc;
  if (r->res.scale.on) r->deploy.replicas = r->res.scale.initial; /* the echoes: the fleet at t = 0 */
  if (!(r->sim = cluster_new(&cc, &r->tr, r->cost, err))) return err->code;
  trace_drop_reqs(&r->tr); /* the requests hold what the rows said (ten million rows: 305 MiB) */
  r->prepared = true;
  return SIM_OK;
}

static bool slice_cb(void *ctx, uint64_t max_events, sim_ns until) {
  return cluster_run_slice(ctx, max_events, until);
}
static sim_ns next_cb(void *ctx) { return cluster_next_time(ctx); }

/* The result's record of request r. */
static void record_of(const request *r, run_record *out) {
  memset(out, 0, sizeof *out);
  out->id = r->id, out->replica = r->replica;
  out->prompt_tokens = r->prompt_tokens;
  out->output_tokens = r->disagg_output ? r->disagg_output : r->output_tokens; /* disagg: stopped on a prefill worker */
  out->generated = r->generated, out->cached_tokens = r->cached_tokens, out->preemptions = r->preemptions;
  out->outcome = r->state == RQ_FINISHED                                        ? REQ_FINISHED
                 : r->state == RQ_REJECTED && r->reject != REJ_UNFINISHED ? REQ_REJECTED
                                                                              : REQ_UNFINISHED;
  out->reject = r->state == RQ_FINISHED ? REJ_NONE : r->state == RQ_REJECTED ? r->reject : REJ_UNFINISHED;
  out->arrival_ns = r->arrival_ns, out->send_ns = r->send_ns, out->queued_ns = r->queued_ns;
  out->first_sched_ns = r->first_sched_ns, out->first_token_ns = r->first_token_ns, out->finish_ns = r->finish_ns;
  if (r->disagg_output) /* stopped before reaching a decode worker: the prefill's token is not the client's */
    out->generated = 0, out->first_token_ns = 0;
  out->prefill_worker = r->prefill_worker, out->xfer_bytes = r->xfer_bytes;
  out->xfer_start_ns = r->xfer_start_ns, out->xfer_end_ns = r->xfer_end_ns;
}

/* Rewrites the n requests in place as n records (a record is smaller, so
 * record i lands on bytes of requests 0..i that are already rewritten) and
 * shrinks the block: a ten-million-request run never holds both arrays. */
_Static_assert(sizeof(run_record) <= sizeof(request), "records must fit in place of the requests");
static run_record *records_in_place(request *reqs, size_t n) {
  if (!reqs) return sim_calloc(1, sizeof(run_record));
  char *base = (char *)reqs;
  for (size_t i = 0; i < n; i++) {
    request q;
    memcpy(&q, base + i * sizeof q, sizeof q);
    run_record rec;
    record_of(&q, &rec);
    memcpy(base + i * sizeof rec, &rec, sizeof rec);
  }
  return sim_realloc(base, (n ? n : 1) * sizeof(run_record));
}

/* The finished simulation's result; the cluster's recorder and requests move into it. */
static void collect(run_ctx *r) {
  cluster *c = r->sim;
  run_result *res = &r->res;
  request *reqs = cluster_take_requests(c, &res->n_reqs);
  res->reqs = records_in_place(reqs, res->n_reqs);
  cluster_take_metrics(c, &res->m);
  const cluster_cfg *cfg = cluster_config(c);
  res->engine_cores = cfg->replicas;
  cluster_outcome out;
  cluster_get_outcome(c, &out);
  res->complete = out.complete;
  res->in_flight = out.in_flight;
  res->n_failures = cfg->n_failures;
  for (uint32_t i = 0; i < cfg->n_failures && i < SCENARIO_MAX_FAILURES; i++)
    res->failure_at_ns[i] = cfg->failures[i].at_ns;
  res->time_limit_ns = cfg->time_limit_ns;
  res->replicas_apart = out.apart;
  res->closed_form_steps = out.closed_form_steps;
  res->closed_form_held_steps = out.closed_form_held_steps;
  cost_step_table_counts(r->cost, &res->step_table_hits, &res->step_table_misses);
  res->events = out.events; /* des_reset keeps the count: every replica's events when they ran apart */
  uint64_t pq = 0, ph = 0;
  for (uint32_t i = 0; i < cfg->replicas; i++) {
    const sched *s = cluster_replica(c, i);
    res->kv_lookup_tokens += s->prefix_queries;
    res->kv_hit_tokens += s->prefix_hits;
    pq += s->preempted_queries;
    ph += s->preempted_hits;
    res->spec_drafts += s->spec_drafts;
    res->spec_draft_tokens += s->spec_draft_tokens;
    res->spec_accepted += s->spec_accepted;
    for (int p = 0; p < SPEC_MAX_K; p++) res->spec_accepted_pos[p] += s->spec_accepted_pos[p];
  }
  res->preempted_lookup_tokens = pq;
  res->preempted_hit_tokens = ph;
  double sum = 0;
  for (size_t i = 0; i < res->n_reqs; i++) { /* the KV transfers that ended (disaggregated) */
    const run_record *q = &res->reqs[i];
    if (cfg->disagg.on && q->prefill_worker != UINT32_MAX && q->prefill_worker >= cfg->disagg.prefill)
      res->local_prefills++; /* prefilled where it decoded (cluster_disagg.c: conditional disaggregation) */
    if (!q->xfer_end_ns) continue;
    double ms = (double)(q->xfer_end_ns - q->xfer_start_ns) / 1e6;
    res->xfer_count++;
    res->xfer_bytes += q->xfer_bytes;
    sum += ms;
    if (ms > res->xfer_ms_max) res->xfer_ms_max = ms;
  }
  res->xfer_ms_mean = res->xfer_count ? sum / (double)res->xfer_count : 0.0;
}

/* The summary, from the records alone (the simulation is freed by then: a
 * million-request run never holds both its requests and the summary's arrays). */
static void summarize(run_ctx *r) {
  run_result *res = &r->res;
  metrics_summarize(&res->m, run_result_times, res, res->n_reqs, &r->sc.goodput, &res->sum);
  res->sum.prefix_hit_rate = res->kv_lookup_tokens ? (double)res->kv_hit_tokens / (double)res->kv_lookup_tokens : 0.0;
  res->sum.preempted_prefix_hit_rate =
      res->preempted_lookup_tokens ? (double)res->preempted_hit_tokens / (double)res->preempted_lookup_tokens : 0.0;
}

/* The run's description and verdicts, for everything that reads the result (reports: result.h). */
static void describe(run_ctx *r) {
  run_result *res = &r->res;
  res->sc = r->sc;
  res->model = r->model;
  res->gpu = r->gpu;
  res->engine = r->engine;
  res->deploy = r->deploy;
  res->plan = r->plan;
  res->plan_dec = r->plan_dec;
  res->xfer_nvlink = r->xfer_nvlink;
  res->tr.format = r->tr.format;
  snprintf(res->tr.source, sizeof res->tr.source, "%s", r->tr.source);
  res->tr.n = r->tr.n;
  res->tr.n_failed_rows = r->tr.n_failed_rows;
  res->tr_stats = r->tr_stats;
  snprintf(res->cost_source, sizeof res->cost_source, "%s", r->prof.source);
  res->strat = r->strat;
  cost_graph_sizes_text(r->cost, res->cost_graphs, sizeof res->cost_graphs);
  cost_src_counts(r->cost, res->src_count);
  res->interrupted = r->interrupted;
  runner_bottleneck(res, &res->bn);
  whatif_check(res, &res->whatif);
}

static void free_sim(run_ctx *r) {
  cluster_free(r->sim);
  r->sim = NULL;
}

int runner_execute(run_ctx *r, const drv_opts *drv, sim_err *err) {
  SIM_ASSERT(r->prepared && r->sim);
  if (drv) {
    drv_ops ops = {r->sim, slice_cb, next_cb, NULL};
    int rc = drv_run(&ops, drv, &r->interrupted, err);
    if (rc) return rc;
  } else {
    cluster_run(r->sim);
  }
  cluster_finish(r->sim);
  r->executed = true;
  trace_free_rows(&r->tr); /* the records carry the arrivals; the description stays */
  collect(r);
  scaling_collect(r->sim, &r->res.scale);
  free_sim(r);
  summarize(r);
  describe(r);
  scaling_hours(&r->res);
  return SIM_OK;
}

void runner_free(run_ctx *r) {
  free_sim(r);
  run_result_free(&r->res);
  cost_free(r->cost);
  cost_free(r->cost_dec);
  profsel_free(&r->prof);
  trace_free(&r->tr);
  memset(r, 0, sizeof *r);
}
