/* test_cluster_open.c: the cluster's open mode (`servesim serve`):
 *   - the same arrivals fed one by one give exactly the timings of the batch
 *     run (the same model, whatever drives it), and the token hook fires once
 *     per output token, in order;
 *   - aborting requests in every state (in the frontend, waiting, running
 *     with steps in flight, preempted) never double-frees or leaks a block,
 *     never delivers a token of an aborted request, and leaves the seats,
 *     client slots and waiting counts at zero once the rest finish;
 *   - slots are reused: memory follows the requests open, not those served. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "serve/cluster.h"
#include "serve/cluster_impl.h" /* white-box: the cluster's state */
#include "testutil.h"

typedef tu_world world;

/* What the hooks saw, per request id. */
typedef struct seen {
  uint32_t tokens[4096];
  sim_ns first[4096], finish[4096];
  uint8_t closed[4096], cancelled[4096];
  uint32_t id_of_slot[4096];
  cluster *c;
  bool bad;
  char why[256];
} seen;

static void on_tokens(void *ctx, uint32_t idx, sim_ns now) {
  seen *s = ctx;
  const request *r = &s->c->reqs[idx];
  uint32_t id = s->id_of_slot[idx];
  if (s->cancelled[id] || s->closed[id]) {
    s->bad = true;
    snprintf(s->why, sizeof s->why, "token for request %u after it was %s", id, s->closed[id] ? "closed" : "cancelled");
    return;
  }
  s->tokens[id]++;
  if (r->generated != s->tokens[id]) {
    s->bad = true;
    snprintf(s->why, sizeof s->why, "request %u: hook %u, generated %u", id, s->tokens[id], r->generated);
  }
  if (s->tokens[id] == 1) s->first[id] = now;
}

static void on_closed(void *ctx, uint32_t idx, sim_ns now) {
  seen *s = ctx;
  uint32_t id = s->id_of_slot[idx];
  if (s->closed[id]++) {
    s->bad = true;
    snprintf(s->why, sizeof s->why, "request %u closed twice", id);
  }
  s->finish[id] = s->c->reqs[idx].state == RQ_FINISHED ? now : SIM_NS_INF;
}

static void setup(world *w, rng *r, cluster_cfg *cc, bool tiny_pool) {
  w->m = tu_model_llama70b();
  w->g = tu_gpu_h200();
  w->e = tu_engine_vllm();
  w->e.async_scheduling = rng_below(r, 2);
  w->d = tu_deploy(4, DT_BF16);
  sim_err err = {0, ""};
  cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
  memset(cc, 0, sizeof *cc);
  cc->replicas = 1 + (uint32_t)rng_below(r, 3);
  cc->router = (route_policy)rng_below(r, 3);
  cc->block_tokens = 16;
  cc->max_model_len = 4096;
  cc->kv_blocks = tiny_pool ? 300 + (uint32_t)rng_below(r, 300) : 20000;
  cc->prefix_caching = rng_below(r, 2);
  cc->sched.max_num_seqs = 4 + (uint32_t)rng_below(r, 60);
  cc->sched.chunked_prefill = true;
  cc->sched.max_num_batched_tokens = 256 + (uint32_t)rng_below(r, 4096);
  cc->sched.async_scheduling = w->e.async_scheduling;
  cc->sched.admission = ADMIT_ON_DEMAND;
  cc->frontend_latency_ns = rng_below(r, 2) ? 0 : (1 + rng_below(r, 20)) * SIM_NS_PER_MS;
}

/* The cluster of cc, built on an empty trace and opened with the recording hooks. */
static seen *open_world(world *w, const cluster_cfg *cc) {
  trace_init(&w->tr);
  sim_err err = {0, ""};
  cr_assert((w->c = cluster_new(cc, &w->tr, w->cost, &err)), "%s", err.msg);
  seen *s = calloc(1, sizeof *s);
  s->c = w->c;
  cluster_hooks hk = {s, on_tokens, on_closed};
  cluster_open(w->c, &hk);
  return s;
}

Test(cluster_open, same_arrivals_same_timings_as_the_batch_run) {
  rng r;
  rng_seed(&r, 777);
  for (int round = 0; round < 40; round++) {
    world *w = calloc(1, sizeof *w), *o = calloc(1, sizeof *o);
    cluster_cfg cc;
    setup(w, &r, &cc, rng_below(&r, 3) == 0);
    trace_init(&w->tr);
    uint32_t n = 1 + (uint32_t)rng_below(&r, 200);
    sim_ns t = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (i && rng_below(&r, 5)) t += 1 + rng_below(&r, 300 * SIM_NS_PER_MS); /* bursts of equal times too */
      trace_push(&w->tr, t, 1 + (uint32_t)rng_below(&r, 2000), 1 + (uint32_t)rng_below(&r, 300), 0, NULL, 0);
    }
    sim_err err = {0, ""};
    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster_run(w->c);
    cr_assert(w->c->complete);

    /* the same deployment, open, fed the arrivals one instant at a time */
    trace_init(&o->tr);
    cr_assert((o->c = cluster_new(&cc, &o->tr, w->cost, &err)), "%s", err.msg);
    seen *s = calloc(1, sizeof *s);
    s->c = o->c;
    cluster_hooks hk = {s, on_tokens, on_closed};
    cluster_open(o->c, &hk);
    for (uint32_t i = 0; i < n;) {
      sim_ns at = w->tr.reqs[i].arrival_ns;
      /* every event before this instant; the arrivals of one instant together (as the trace's) */
      if (at) cluster_run_slice(o->c, UINT64_MAX, at - 1);
      for (; i < n && w->tr.reqs[i].arrival_ns == at; i++) {
        uint32_t idx = cluster_new_request(o->c, w->tr.reqs[i].prompt_tokens, w->tr.reqs[i].output_tokens);
        s->id_of_slot[idx] = i;
        cluster_arrive(o->c, idx, at);
      }
    }
    cluster_run_slice(o->c, UINT64_MAX, SIM_NS_INF);
    cr_assert(!s->bad, "round %d: %s", round, s->why);
    for (uint32_t i = 0; i < n; i++) {
      const request *b = &w->c->reqs[i];
      cr_assert_eq(s->closed[i], 1, "round %d: request %u closed %u times", round, i, s->closed[i]);
      if (b->state == RQ_FINISHED) {
        cr_assert_eq(s->tokens[i], b->output_tokens, "round %d request %u", round, i);
        cr_assert_eq(s->first[i], b->first_token_ns, "round %d request %u: first token %llu, batch %llu", round, i,
                     (unsigned long long)s->first[i], (unsigned long long)b->first_token_ns);
        cr_assert_eq(s->finish[i], b->finish_ns, "round %d request %u", round, i);
      } else {
        cr_assert_eq(s->finish[i], SIM_NS_INF, "round %d request %u: rejected in batch, not open", round, i);
      }
    }
    cr_assert_eq(cluster_open_requests(o->c), 0);
    cr_assert_eq(o->c->m.finished, w->c->m.finished);
    cluster_free(o->c);
    cluster_free(w->c);
    trace_free(&w->tr);
    trace_free(&o->tr);
    cost_free(w->cost);
    free(s);
    free(w);
    free(o);
  }
}

Test(cluster_open, aborts_in_every_state_leak_nothing) {
  rng r;
  rng_seed(&r, 4242);
  uint64_t cancelled_running = 0, cancelled_frontend = 0, cancelled_waiting = 0, preempted = 0;
  for (int round = 0; round < 60; round++) {
    world *w = calloc(1, sizeof *w);
    cluster_cfg cc;
    setup(w, &r, &cc, rng_below(&r, 2) == 0);
    if (rng_below(&r, 2)) cc.frontend_latency_ns = 5 * SIM_NS_PER_MS;
    seen *s = open_world(w, &cc);
    cluster *c = w->c;
    sim_err err = {0, ""};
    uint32_t n = 0, slot_of[4096], open_max = 0;
    sim_ns now = 0;
    while (n < 600) {
      now += rng_below(&r, 40 * SIM_NS_PER_MS);
      cluster_run_slice(c, UINT64_MAX, now);
      if (rng_below(&r, 3)) { /* a new request, often with a prompt that shares a prefix with others */
        uint32_t prompt = 1 + (uint32_t)rng_below(&r, 3000);
        uint32_t idx = cluster_new_request(c, prompt, 1 + (uint32_t)rng_below(&r, 400));
        uint64_t ids[200];
        uint32_t nb = prompt / cc.block_tokens, group = (uint32_t)rng_below(&r, 4);
        for (uint32_t j = 0; j < nb && j < 200; j++) ids[j] = j < 40 ? group * 1000 + j : rng_u64(&r);
        if (rng_below(&r, 4)) cluster_set_prompt_ids(c, idx, ids, nb < 200 ? nb : 200);
        s->id_of_slot[idx] = n;
        slot_of[n] = idx;
        cluster_arrive(c, idx, now);
        n++;
      } else if (n) { /* a client leaves: an open request at random */
        uint32_t id = (uint32_t)rng_below(&r, n);
        if (s->closed[id] || s->cancelled[id]) continue;
        const request *q = &c->reqs[slot_of[id]];
        cancelled_frontend += q->state == RQ_FRONTEND;
        cancelled_waiting += q->state == RQ_WAITING;
        cancelled_running += q->state == RQ_RUNNING;
        preempted += q->preemptions > 0;
        s->cancelled[id] = 1;
        cluster_cancel(c, slot_of[id], now);
      }
      size_t open = cluster_open_requests(c);
      if (open > open_max) open_max = (uint32_t)open;
      cr_assert(!s->bad, "round %d: %s", round, s->why);
    }
    cluster_run_slice(c, UINT64_MAX, SIM_NS_INF);
    cr_assert(!s->bad, "round %d: %s", round, s->why);
    for (uint32_t i = 0; i < n; i++) {
      cr_assert_eq(s->closed[i] + s->cancelled[i], 1, "round %d: request %u closed %u, cancelled %u", round, i,
                   s->closed[i], s->cancelled[i]);
    }
    cr_assert_eq(cluster_open_requests(c), 0, "round %d", round);
    cr_assert_eq(c->in_flight, 0, "round %d", round);
    cr_assert_eq(cluster_waiting(c), 0, "round %d", round);
    for (uint32_t ri = 0; ri < cc.replicas; ri++) {
      cr_assert_eq(c->reps[ri].outstanding, 0, "round %d replica %u", round, ri);
      cr_assert_eq(sched_num_running(&c->reps[ri].s), 0);
      cr_assert_eq(kv_num_free(c->reps[ri].s.kv), cc.kv_blocks, "round %d replica %u: every block back", round, ri);
      cr_assert_eq(kv_check(c->reps[ri].s.kv, NULL, 0, &err), 0, "round %d: %s", round, err.msg);
    }
    cr_assert_eq(c->n_ids - c->dead_ids, 0, "round %d: no prompt ids of closed requests kept", round);
    /* slots reused: never more than were open at once (plus frontend-cancelled ones awaiting delivery) */
    cr_assert_leq(c->n_reqs, (size_t)open_max + 64, "round %d: %zu slots for at most %u open", round, c->n_reqs,
                  open_max);
    cluster_free(c);
    trace_free(&w->tr);
    cost_free(w->cost);
    free(s);
    free(w);
  }
  /* the random walk reached every state it means to test */
  cr_assert_gt(cancelled_running, 50);
  cr_assert_gt(cancelled_waiting, 5);
  cr_assert_gt(cancelled_frontend, 5);
  cr_assert_gt(preempted, 0);
}

/* Prefix caching across requests that arrive one by one: the second of two requests with the same prompt
 * ids finds the first one's blocks (all but the last full block's worth vLLM recomputes), and gets its first
 * token sooner; a request with other ids finds nothing. Many requests later, compaction has kept only the
 * open requests' ids. */
Test(cluster_open, prompt_ids_share_blocks_across_requests) {
  rng r;
  rng_seed(&r, 9);
  world *w = calloc(1, sizeof *w);
  cluster_cfg cc;
  setup(w, &r, &cc, false);
  cc.replicas = 1;
  cc.prefix_caching = true;
  cc.frontend_latency_ns = 0;
  seen *s = open_world(w, &cc);
  cluster *c = w->c;
  uint64_t ids[128], other[128];
  for (int j = 0; j < 128; j++) ids[j] = 77 + (uint64_t)j, other[j] = 5000 + (uint64_t)j;
  sim_ns t = 0, ttft[3];
  uint32_t cached[3];
  const uint64_t *which[3] = {ids, ids, other};
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t idx = cluster_new_request(c, 2048, 4);
    s->id_of_slot[idx] = k;
    cluster_set_prompt_ids(c, idx, which[k], 128);
    cluster_arrive(c, idx, t);
    cluster_run_slice(c, UINT64_MAX, SIM_NS_INF); /* each runs alone to its end */
    cached[k] = c->reqs[idx].cached_tokens;
    ttft[k] = s->first[k] - t;
    t = s->finish[k] + SIM_NS_PER_MS;
  }
  cr_assert_eq(cached[0], 0);
  cr_assert_geq(cached[1], 2048 - 16, "the same prompt: its blocks found (%u tokens)", cached[1]);
  cr_assert_lt(cached[1], 2048, "the last token is always computed");
  cr_assert_eq(cached[2], 0, "other ids: nothing shared");
  cr_assert_lt(ttft[1] * 3, ttft[0], "a cached prompt's first token comes much sooner (%llu vs %llu ns)",
               (unsigned long long)ttft[1], (unsigned long long)ttft[0]);
  /* churn: thousands of requests with ids; what the arena keeps is what open requests hold */
  for (uint32_t k = 3; k < 3003; k++) {
    uint32_t idx = cluster_new_request(c, 256, 1);
    s->id_of_slot[idx] = k % 4096;
    cluster_set_prompt_ids(c, idx, ids, 16);
    cluster_arrive(c, idx, t);
    if (k % 7 == 0) {
      cluster_run_slice(c, UINT64_MAX, SIM_NS_INF);
      t = c->m.level_t_ns; /* the clock went on */
    }
  }
  cluster_run_slice(c, UINT64_MAX, SIM_NS_INF);
  cr_assert_eq(cluster_open_requests(c), 0);
  cr_assert_lt(c->cap_ids, 3000u * 16u, "compacted: %zu ids allocated for 48,000 written", c->cap_ids);
  cluster_free(c);
  trace_free(&w->tr);
  cost_free(w->cost);
  free(s);
  free(w);
}
