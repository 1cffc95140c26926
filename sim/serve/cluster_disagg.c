/* cluster_disagg.c: disaggregated serving (docs/DISAGG.md): a request is routed to a prefill worker, runs there
 * with one output token (vLLM's disaggregated proxies send the prefill request with max_tokens=1 and the KV
 * connector's do_remote_decode; Dynamo does the same), keeps its blocks on the prefill worker while its prompt's
 * KV is sent, and is queued on a decode worker (picked by the decode pool's router when the prefill ends) once
 * the KV has arrived. The decode worker admits it when its pool has room for the whole prompt (its scheduler
 * allocates blocks for the received tokens: request.ext_tokens) and recomputes the last prompt token, whose
 * step samples the client's first token (vLLM's NixlConnector loads prompt - 1 tokens:
 * get_num_new_matched_tokens). At the events level: calls cluster_events.c's functions, not cluster.c's. */
#include "serve/cluster_impl.h"

#include <math.h>

int cluster__disagg_init(cluster *c, sim_err *err) {
  const cluster_cfg *cfg = &c->cfg;
  if (!cfg->disagg.on) {
    router_init(&c->rt, cfg->router, cfg->replicas);
    return SIM_OK;
  }
  uint32_t p = cfg->disagg.prefill;
  if (p == 0 || p >= cfg->replicas || !cfg->disagg.decode_cost || !cfg->disagg.decode_kv_blocks)
    return sim_errf(err, SIM_EINPUT, "disaggregated: %u prefill workers of %u engine cores, decode cost model %s, "
                    "%u decode KV blocks: needs >= 1 worker in each pool, a cost model and blocks",
                    p, cfg->replicas, cfg->disagg.decode_cost ? "set" : "missing", cfg->disagg.decode_kv_blocks);
  if (cfg->n_failures || cfg->sched.pipeline_stages > 1 || cfg->disagg.decode_sched.pipeline_stages > 1)
    return sim_errf(err, SIM_EINPUT, "disaggregated: pipeline stages and lost replicas are not modelled with separate "
                    "prefill and decode pools");
  if (!(cfg->disagg.xfer_ns_per_token >= 0) || !(cfg->disagg.xfer_bytes_per_token >= 0))
    return sim_errf(err, SIM_EINPUT, "disaggregated: KV transfer cost %g ns, %g bytes per token is not valid",
                    cfg->disagg.xfer_ns_per_token, cfg->disagg.xfer_bytes_per_token);
  router_init(&c->rt, cfg->router, p);
  router_init(&c->rt_dec, cfg->router, cfg->replicas - p);
  return SIM_OK;
}

router *cluster__router_of(cluster *c, uint32_t ri, uint32_t *at) {
  if (c->cfg.disagg.on && ri >= c->cfg.disagg.prefill) {
    *at = ri - c->cfg.disagg.prefill;
    return &c->rt_dec;
  }
  *at = ri;
  return &c->rt;
}

void cluster__prefill_done(cluster *c, uint32_t ri, const uint32_t *idx, uint32_t n, sim_ns now) {
  replica *rep = &c->reps[ri];
  for (uint32_t k = 0; k < n; k++) {
    request *r = &c->reqs[idx[k]];
    SIM_ASSERT(rep->outstanding > 0);
    rep->outstanding--;
    /* sched_complete released its blocks; it takes as many back at once (nothing ran in between, so they are
       free), held until the decode worker has read them (vLLM's NixlConnector frees a prefill request's blocks
       when the decode side's completion notice arrives) */
    kv_content none = {.uid = (uint64_t)r->id + 1};
    kv_seq_init(&r->kv);
    if (!kv_allocate(rep->s.kv, &r->kv, &none, 0, r->prompt_tokens)) {
      /* some of its blocks are prefix-cache blocks other running requests share: they stay held by those, and
         its own are taken back as far as the pool has them */
      uint32_t fit = kv_num_free(rep->s.kv) * kv_block_tokens(rep->s.kv);
      if (fit) kv_allocate(rep->s.kv, &r->kv, &none, 0, fit < r->prompt_tokens ? fit : r->prompt_tokens);
    }
    r->state = RQ_RUNNING;
    r->finish_ns = 0;
    uint32_t dj = router_pick(&c->rt_dec);
    SIM_ASSERT(dj != UINT32_MAX); /* no decode worker fails (failures are refused) */
    uint32_t di = c->cfg.disagg.prefill + dj;
    c->reps[di].outstanding++;
    cluster__touch(c, di);
    double ns = ceil((double)r->prompt_tokens * c->cfg.disagg.xfer_ns_per_token);
    r->xfer_start_ns = now;
    r->xfer_end_ns = now + c->cfg.disagg.xfer_fixed_ns + (sim_ns)ns;
    r->xfer_bytes = (uint64_t)llround((double)r->prompt_tokens * c->cfg.disagg.xfer_bytes_per_token);
    des_push(&c->ev, r->xfer_end_ns, EV_XFER, di, idx[k]);
  }
  cluster__touch(c, ri);
}

/* A one-token request on an SGLang decode worker: its only token came with the KV; the worker streams it and
 * frees the request in the prebuilt batch, with no forward step. */
static void finish_prebuilt(cluster *c, uint32_t ri, uint32_t idx, sim_ns now) {
  request *r = &c->reqs[idx];
  r->first_token_ns = r->last_token_ns = r->finish_ns = now;
  r->num_computed = r->prompt_tokens;
  r->state = RQ_FINISHED;
  if (c->hooks.tokens) c->hooks.tokens(c->hooks.ctx, idx, now);
  cluster__finished(c, ri, idx, now);
}

/* Conditional disaggregation. Dynamo's disaggregated router prefills remotely when prefill_length -
 * prefix_hit_length > max_local_prefill_length (lib/llm/src/disagg_router.rs, DisaggRouterConf: 1000 by default
 * there; here 0 = off); TensorRT-LLM's disaggregated server picks the generation server first with its KV-aware
 * router and sends the request to a context server when match_length == 0 or total - match >
 * max_local_prefill_length (serve/openai_disagg_server.py, conditional_disagg_config). So: the decode pool's router
 * picks the worker, its prefix cache says what the prompt would hit there, and a short enough remainder (with a
 * hit, for TensorRT-LLM) is prefilled on that decode worker, which then decodes it: no prefill worker, no KV
 * transfer; its record's prefill_worker is the decode core. */
bool cluster__prefill_local(cluster *c, uint32_t idx, sim_ns now) {
  request *r = &c->reqs[idx];
  uint32_t dj = router_pick(&c->rt_dec);
  if (dj == UINT32_MAX) return false;
  uint32_t di = c->cfg.disagg.prefill + dj;
  replica *rep = &c->reps[di];
  uint32_t hit = sched_cached_prefix(&rep->s, c->reqs, idx);
  if ((c->cfg.disagg.local_needs_hit && hit == 0) || r->prompt_tokens - hit > c->cfg.disagg.max_local_prefill)
    return false;
  r->replica = r->prefill_worker = di;
  if (r->queued_ns == SIM_NS_INF) r->queued_ns = now;
  rep->outstanding++;
  sched_add(&rep->s, c->reqs, idx);
  cluster__touch(c, di);
  cluster__kick(c, di, now);
  return true;
}

void cluster__on_xfer(cluster *c, uint32_t ri, uint32_t idx, sim_ns now) {
  request *r = &c->reqs[idx];
  uint32_t pi = r->replica;
  SIM_ASSERT(cluster__is_prefill(c, pi));
  kv_seq_free(c->reps[pi].s.kv, &r->kv);
  kv_seq_deinit(&r->kv);
  cluster__touch(c, pi);
  cluster__kick(c, pi, now); /* the freed blocks may admit a request it holds back */
  r->replica = ri;
  r->output_tokens = r->disagg_output;
  r->disagg_output = 0;
  r->pending = 0;
  r->num_computed = 0;
  r->first_token_ns = 0;
  r->last_token_ns = 0;
  if (c->cfg.disagg.first_token_prefill) { /* SGLang: the prompt's KV and the first token arrive together */
    r->num_tokens = r->prompt_tokens + 1;
    r->generated = 1;
    r->ext_tokens = r->prompt_tokens;
    if (r->output_tokens <= 1) { /* the prebuilt batch finishes it (process_batch_result_prebuilt) */
      finish_prebuilt(c, ri, idx, now);
      return;
    }
  } else {
    r->num_tokens = r->prompt_tokens;
    r->generated = 0;
    r->ext_tokens = r->prompt_tokens ? r->prompt_tokens - 1 : 0;
  }
  r->state = RQ_WAITING;
  sched_add(&c->reps[ri].s, c->reqs, idx);
  cluster__touch(c, ri);
  cluster__kick(c, ri, now);
}
