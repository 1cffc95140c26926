/* test_disagg.c: disaggregated serving (serve/cluster_disagg.c) on random runs: prefill and decode pools of
 * random sizes, TPs (each pool its own cost model), attention-DP ranks per worker (lockstep groups per pool),
 * batch knobs, KV pools small enough for the decode side to
 * queue (backpressure), client slots, prefix caching, both admission policies, async scheduling on and off:
 *   - every request closes exactly once, a finished one with its output tokens, none lost while decode workers
 *     hold them back (closed count == requests, outstanding counts back to 0);
 *   - every finished request's KV was sent once (one prefill worker, a transfer that ends after its prefill's
 *     token and before its decode worker schedules it) and received once (its decode worker is a decode worker);
 *   - the prefill worker frees the KV only after the transfer: at every XFER event the request still holds
 *     blocks of its prefill worker's pool, and every pool's blocks all come back at the end;
 *   - the client's first token is the decode worker's (TTFT covers the transfer);
 *   - with conditional disaggregation (half the vLLM-like rounds, with or without TensorRT-LLM's prefix-hit
 *     rule) a request prefilled on its decode worker sends nothing and is counted apart. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "serve/cluster.h"
#include "serve/cluster_impl.h" /* white-box: the cluster's state */
#include "testutil.h"

/* Runs the cluster's shared timeline event by event, checking at each transfer's end that the prefill side still
 * holds the request's blocks (the cluster frees them in on_xfer, after this check). */
static uint64_t run_checking_holds(cluster *c, int round) {
  uint64_t xfers = 0;
  while (!c->complete) {
    const des_event *top = des_peek(&c->ev);
    if (!top) break;
    if (top->kind == EV_XFER) {
      const request *r = &c->reqs[top->arg];
      cr_assert(r->replica < c->cfg.disagg.prefill, "round %d: request %u's KV arrives from a prefill worker",
                round, r->id);
      /* no prompt shares content here (no hash ids, no sessions), so it holds all its prompt's blocks */
      cr_assert_eq(r->kv.n_blocks, (r->prompt_tokens + 15) / 16,
                   "round %d: request %u's prefill blocks are held until the transfer ends", round, r->id);
      cr_assert(top->target >= c->cfg.disagg.prefill && top->target < c->cfg.replicas,
                "round %d: the KV goes to a decode worker", round);
      xfers++;
    }
    cluster_run_slice(c, 1, SIM_NS_INF);
  }
  return xfers;
}

Test(disagg, random_runs_send_each_kv_once_and_lose_no_request) {
  rng g;
  rng_seed(&g, 20261205);
  uint64_t locals = 0;
  for (int round = 0; round < 150; round++) {
    tu_world *w = calloc(1, sizeof *w);
    w->m = tu_model_llama70b();
    w->g = tu_gpu_h200();
    w->e = tu_engine_vllm();
    w->e.async_scheduling = rng_below(&g, 2);
    uint32_t tps[3] = {2, 4, 8};
    w->d = tu_deploy(tps[rng_below(&g, 3)], DT_BF16);
    deploy_cfg dd = tu_deploy(tps[rng_below(&g, 3)], DT_BF16);
    cost_model *dec = NULL;
    sim_err err = {0, ""};
    cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
    cr_assert_eq(cost_new(&dec, &w->m, &w->g, &w->e, &dd, &err), SIM_OK, "%s", err.msg);

    cluster_cfg cc;
    memset(&cc, 0, sizeof cc);
    /* workers of 1-3 attention-DP ranks (engine cores), in lockstep groups or not */
    uint32_t gp = 1 + (uint32_t)rng_below(&g, 3), gd = 1 + (uint32_t)rng_below(&g, 3);
    uint32_t np = gp * (1 + (uint32_t)rng_below(&g, 3)), nd = gd * (1 + (uint32_t)rng_below(&g, 3));
    cc.replicas = np + nd;
    cc.dp_group = gp;
    cc.disagg.decode_dp_group = gd;
    cc.dp_lockstep = rng_below(&g, 2);
    cc.router = (route_policy)rng_below(&g, 3);
    cc.block_tokens = 16;
    cc.max_model_len = 64 + (uint32_t)rng_below(&g, 2000);
    uint32_t need = (cc.max_model_len + 15) / 16;
    cc.kv_blocks = need + (uint32_t)rng_below(&g, 2 * need);
    cc.prefix_caching = rng_below(&g, 2);
    cc.sched.max_num_seqs = 1 + (uint32_t)rng_below(&g, 16);
    cc.sched.chunked_prefill = rng_below(&g, 4) != 0;
    cc.sched.max_num_batched_tokens = cc.sched.chunked_prefill ? 16 + (uint32_t)rng_below(&g, 4096)
                                                               : cc.max_model_len + (uint32_t)rng_below(&g, 512);
    cc.sched.async_scheduling = w->e.async_scheduling;
    uint32_t adm = (uint32_t)rng_below(&g, 6); /* SGLang's pools in a third of the rounds */
    bool sgl = adm >= 4;
    cc.sched.admission = sgl ? ADMIT_TOKEN_RATIO : adm == 0 ? ADMIT_RESERVE_FULL : ADMIT_ON_DEMAND;
    if (sgl) {
      cc.sched.max_prefill_tokens = 16 + (uint32_t)rng_below(&g, 8192);
      cc.sched.schedule_conservativeness = 0.3 + 0.1 * (double)rng_below(&g, 10);
      cc.sched.retract_steps = rng_below(&g, 2) ? 1 : 20;
    }
    cc.max_concurrency = rng_below(&g, 2) ? 0 : 1 + (uint32_t)rng_below(&g, 12);
    cc.sample_interval_ns = rng_below(&g, 2) ? 0 : (1 + rng_below(&g, 2000)) * SIM_NS_PER_MS;
    cc.disagg.on = true;
    cc.disagg.prefill = np;
    cc.disagg.decode_cost = dec;
    cc.disagg.decode_sched = cc.sched;
    cc.disagg.decode_sched.max_num_seqs = 1 + (uint32_t)rng_below(&g, 64);
    cc.disagg.decode_sched.prebuilt = cc.disagg.first_token_prefill = sgl;
    /* a decode pool barely larger than one request: requests queue on the decode side (backpressure) */
    cc.disagg.decode_kv_blocks = need + (uint32_t)rng_below(&g, 3 * need);
    cc.disagg.xfer_ns_per_token = (double)rng_below(&g, 2000);
    cc.disagg.xfer_bytes_per_token = 327680.0; /* Llama-3.1-70B BF16: 80 layers x 8 KV heads x 128 x 2 x 2 bytes */
    cc.disagg.xfer_fixed_ns = rng_below(&g, 20000);
    /* conditional disaggregation in half the non-SGLang rounds (SGLang has none: cfg_resolve refuses it) */
    if (!sgl && rng_below(&g, 2)) {
      cc.disagg.max_local_prefill = 1 + (uint32_t)rng_below(&g, cc.max_model_len);
      cc.disagg.local_needs_hit = rng_below(&g, 2);
    }

    trace_init(&w->tr);
    uint32_t n = 1 + (uint32_t)rng_below(&g, 100);
    sim_ns t = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (rng_below(&g, 3) == 0) t += rng_below(&g, 500) * SIM_NS_PER_MS;
      uint32_t p = 1 + (uint32_t)rng_below(&g, cc.max_model_len);
      uint32_t o = 1 + (uint32_t)rng_below(&g, rng_below(&g, 4) ? 64 : cc.max_model_len);
      trace_push(&w->tr, t, p, o, 0, NULL, 0);
    }
    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster *c = w->c;
    uint64_t xfers = run_checking_holds(c, round);
    cr_assert(c->complete, "round %d: every request closed", round);
    cr_assert_eq(c->in_flight, 0, "round %d", round);
    for (uint32_t ri = 0; ri < cc.replicas; ri++)
      cr_assert_eq(c->reps[ri].outstanding, 0, "round %d: worker %u", round, ri);
    cluster_finish(c);
    uint64_t fin = 0, local = 0;
    for (size_t i = 0; i < c->n_reqs; i++) {
      const request *r = &c->reqs[i];
      cr_assert(r->state == RQ_FINISHED || r->state == RQ_REJECTED, "round %d: request %zu state %d", round, i,
                (int)r->state);
      cr_assert_eq(r->kv.n_blocks, 0, "round %d: request %zu holds no block at the end", round, i);
      if (r->state != RQ_FINISHED) {
        cr_assert_neq(r->reject, REJ_NONE);
        cr_assert_eq(r->xfer_end_ns, 0, "round %d: a refused request sent nothing", round);
        continue;
      }
      fin++;
      cr_assert_eq(r->generated, r->output_tokens, "round %d: request %zu", round, i);
      cr_assert_eq(r->disagg_output, 0);
      cr_assert(r->replica >= np && r->replica < cc.replicas, "round %d: decoded on a decode worker", round);
      if (r->prefill_worker >= np) { /* prefilled where it decoded: conditional disaggregation */
        cr_assert(cc.disagg.max_local_prefill, "round %d: request %zu local without the setting", round, i);
        cr_assert_eq(r->prefill_worker, r->replica, "round %d: request %zu", round, i);
        cr_assert(r->xfer_end_ns == 0 && r->xfer_bytes == 0, "round %d: request %zu: no transfer", round, i);
        cr_assert(r->first_token_ns > r->send_ns && r->finish_ns >= r->first_token_ns);
        local++;
        continue;
      }
      cr_assert(r->prefill_worker < np, "round %d: request %zu prefilled on a prefill worker", round, i);
      cr_assert(r->xfer_end_ns >= r->xfer_start_ns && r->xfer_start_ns >= r->send_ns);
      cr_assert_eq(r->xfer_bytes, (uint64_t)(r->prompt_tokens * 327680.0), "round %d: the prompt's KV, once", round);
      if (sgl) /* SGLang: the prefill worker's token, streamed when the decode worker takes the request in */
        cr_assert(r->first_token_ns >= r->xfer_end_ns, "round %d: the first token comes with the KV or later", round);
      else
        cr_assert(r->first_token_ns > r->xfer_end_ns, "round %d: the first token comes after the KV arrived", round);
      cr_assert(r->finish_ns >= r->first_token_ns);
    }
    cr_assert_eq(xfers + local, fin, "round %d: one transfer per finished request not prefilled locally (%llu + %llu, "
                 "%llu)", round, (unsigned long long)xfers, (unsigned long long)local, (unsigned long long)fin);
    locals += local;
    cr_assert_eq(c->m.finished, fin);
    for (uint32_t ri = 0; ri < cc.replicas; ri++)
      cr_assert_eq(kv_num_free(c->reps[ri].s.kv), ri < np ? cc.kv_blocks : cc.disagg.decode_kv_blocks,
                   "round %d: worker %u's blocks all come back", round, ri);
    cluster_free(c);
    trace_free(&w->tr);
    cost_free(w->cost);
    cost_free(dec);
    free(w);
  }
  cr_assert(locals > 0, "some requests prefilled on their decode worker");
}

/* One request on idle 1P1D pools: where its first token comes from. vLLM's decode worker recomputes the last
 * prompt token and samples the client's first token in its first step (after the transfer); SGLang's streams the
 * prefill worker's token when it takes the request in (disaggregation/decode.py: prebuilt batch, no forward), so
 * the first token is at the transfer's end, and a one-token request finishes there. */
static void one_request(bool sgl, uint32_t out, request *res) {
  tu_world *w = calloc(1, sizeof *w);
  w->m = tu_model_llama70b();
  w->g = tu_gpu_h200();
  w->e = tu_engine_vllm();
  w->d = tu_deploy(8, DT_BF16);
  sim_err err = {0, ""};
  cost_model *dec = NULL;
  cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cost_new(&dec, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
  cluster_cfg cc;
  memset(&cc, 0, sizeof cc);
  cc.replicas = 2;
  cc.dp_group = 1;
  cc.disagg.decode_dp_group = 1;
  cc.block_tokens = 16;
  cc.max_model_len = 8192;
  cc.kv_blocks = 4096;
  cc.sched = (sched_cfg){64, 8192, 0, true, false, sgl ? ADMIT_TOKEN_RATIO : ADMIT_ON_DEMAND, false, 1,
                         sgl ? 16384 : 0, sgl ? 1.0 : 0, sgl ? 1 : 0, false, false, false, 0, 0, 0, 0, {0}};
  cc.disagg.on = true;
  cc.disagg.prefill = 1;
  cc.disagg.decode_cost = dec;
  cc.disagg.decode_sched = cc.sched;
  cc.disagg.decode_sched.prebuilt = cc.disagg.first_token_prefill = sgl;
  cc.disagg.decode_kv_blocks = 4096;
  cc.disagg.xfer_ns_per_token = 100;
  cc.disagg.xfer_bytes_per_token = 327680.0;
  cc.disagg.xfer_fixed_ns = 10000;
  trace_init(&w->tr);
  trace_push(&w->tr, 0, 2000, out, 0, NULL, 0);
  cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
  while (!w->c->complete && des_peek(&w->c->ev)) cluster_run_slice(w->c, 1, SIM_NS_INF);
  cr_assert(w->c->complete);
  cluster_finish(w->c);
  *res = w->c->reqs[0];
  cr_assert_eq(kv_num_free(w->c->reps[1].s.kv), 4096, "the decode worker's blocks come back");
  cluster_free(w->c);
  trace_free(&w->tr);
  cost_free(w->cost);
  cost_free(dec);
  free(w);
}

Test(disagg, first_token_source_by_engine) {
  request v, s, s1;
  one_request(false, 8, &v);
  one_request(true, 8, &s);
  one_request(true, 1, &s1);
  cr_assert_eq(v.xfer_end_ns, s.xfer_end_ns, "the same prefill and transfer");
  cr_assert_eq(v.xfer_end_ns, 0 + v.xfer_start_ns + 10000 + 200000, "2000 tokens x 100 ns + the fixed 10 us");
  cr_assert_gt(v.first_token_ns, v.xfer_end_ns, "vLLM: the decode worker's first step samples it");
  cr_assert_eq(s.first_token_ns, s.xfer_end_ns, "SGLang: streamed when the idle decode worker takes it in");
  cr_assert_eq(s.generated, 8);
  cr_assert_eq(s1.state, RQ_FINISHED);
  cr_assert_eq(s1.first_token_ns, s1.xfer_end_ns, "one token: finished in the prebuilt batch");
  cr_assert_eq(s1.finish_ns, s1.xfer_end_ns);
  /* vLLM: 8 tokens in 8 decode steps; SGLang: 7 (the first came with the KV) */
  cr_assert_lt(s.finish_ns, v.finish_ns);
}
