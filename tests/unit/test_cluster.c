/* test_cluster.c: request accounting of the whole deployment on random
 * adversarial workloads (ties in arrival times, over-long requests, tiny KV
 * pools that preempt, client slots, replicas lost at t = 0 and mid-run, time
 * limits, async scheduling on and off, both admission policies, prefix
 * caching with shared content, lockstep data-parallel groups):
 *   - every request ends FINISHED or REJECTED (with a reason) exactly once:
 *     closed count == requests, no request left in another state;
 *   - a finished request generated exactly its output tokens;
 *   - the client's in-flight count and each replica's outstanding count come
 *     back to 0 when every request is closed (they are unsigned: an underflow
 *     would wrap and never come back);
 *   - the KV pools pass kv_check against the block tables still held, and
 *     every block returns to the free queue once those are released. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "serve/cluster.h"
#include "serve/cluster_impl.h" /* white-box: the cluster's state */
#include "testutil.h"

typedef tu_world world;

static void check_closed(const cluster *c, int round) {
  size_t fin = 0, rej = 0;
  for (size_t i = 0; i < c->n_reqs; i++) {
    const request *r = &c->reqs[i];
    cr_assert(r->state == RQ_FINISHED || r->state == RQ_REJECTED, "round %d: request %zu left in state %d", round, i,
              (int)r->state);
    if (r->state == RQ_FINISHED) {
      fin++;
      cr_assert_eq(r->generated, r->output_tokens, "round %d: request %zu", round, i);
      cr_assert_eq(r->reject, REJ_NONE);
    } else {
      rej++;
      cr_assert_neq(r->reject, REJ_NONE, "round %d: request %zu rejected without a reason", round, i);
    }
  }
  cr_assert_eq(c->n_closed, c->n_reqs, "round %d: closed %zu of %zu", round, c->n_closed, c->n_reqs);
  cr_assert_eq(fin + rej, c->n_reqs);
  cr_assert_eq(c->m.finished, fin, "round %d: finished counted once each", round);
}

static void check_kv(const cluster *c, int round) {
  for (uint32_t ri = 0; ri < c->cfg.replicas; ri++) {
    const kv_seq **seqs = calloc(c->n_reqs + 1, sizeof *seqs);
    size_t n = 0;
    for (size_t i = 0; i < c->n_reqs; i++)
      if (c->reqs[i].kv.n_blocks && c->reqs[i].replica == ri) seqs[n++] = &c->reqs[i].kv;
    sim_err err;
    cr_assert_eq(kv_check(c->reps[ri].s.kv, seqs, n, &err), 0, "round %d replica %u: %s", round, ri, err.msg);
    free(seqs);
  }
}

Test(cluster, random_adversarial_runs_close_every_request_once) {
  rng r;
  rng_seed(&r, 20240601);
  for (int round = 0; round < 400; round++) {
    world *w = calloc(1, sizeof *w);
    w->m = tu_model_llama70b();
    w->g = tu_gpu_h200();
    w->e = tu_engine_vllm();
    w->e.async_scheduling = rng_below(&r, 2);
    w->d = tu_deploy(4, DT_BF16);
    if (rng_below(&r, 4) == 0) { /* pipeline parallelism: no async scheduling (cfg_resolve) */
      w->d.pp = 2 + (uint32_t)rng_below(&r, 3);
      w->e.async_scheduling = false;
      w->d.async_scheduling = 0;
    }
    sim_err err = {0, ""};
    cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);

    cluster_cfg cc;
    memset(&cc, 0, sizeof cc);
    cc.replicas = 1 + (uint32_t)rng_below(&r, 4);
    cc.router = (route_policy)rng_below(&r, 3);
    cc.block_tokens = 16;
    cc.max_model_len = 64 + (uint32_t)rng_below(&r, 2000);
    /* usually a pool that holds max_model_len (what the memory plan
     * guarantees), sometimes one that does not (KV_TOO_SMALL rejections) */
    uint32_t need = (cc.max_model_len + 15) / 16;
    cc.kv_blocks = rng_below(&r, 5) ? need + (uint32_t)rng_below(&r, 3 * need) : 1 + (uint32_t)rng_below(&r, need);
    cc.prefix_caching = rng_below(&r, 2);
    cc.sched.max_num_seqs = 1 + (uint32_t)rng_below(&r, 64);
    cc.sched.chunked_prefill = rng_below(&r, 4) != 0;
    cc.sched.max_num_batched_tokens = cc.sched.chunked_prefill ? 16 + (uint32_t)rng_below(&r, 4096)
                                                               : cc.max_model_len + (uint32_t)rng_below(&r, 512);
    cc.sched.long_prefill_token_threshold = rng_below(&r, 4) == 0 ? 1 + (uint32_t)rng_below(&r, 512) : 0;
    cc.sched.async_scheduling = w->e.async_scheduling;
    cc.sched.pipeline_stages = w->d.pp;
    cc.sched.admission = rng_below(&r, 4) == 0 ? ADMIT_RESERVE_FULL : ADMIT_ON_DEMAND;
    cc.max_concurrency = rng_below(&r, 2) ? 0 : 1 + (uint32_t)rng_below(&r, 6);
    cc.frontend_latency_ns = rng_below(&r, 3) == 0 ? (1 + rng_below(&r, 50)) * SIM_NS_PER_MS : 0;
    cc.sample_interval_ns = rng_below(&r, 2) ? 0 : (1 + rng_below(&r, 2000)) * SIM_NS_PER_MS;
    bool limited = rng_below(&r, 6) == 0;
    cc.time_limit_ns = limited ? (1 + rng_below(&r, 20000)) * SIM_NS_PER_MS : 0;
    if (w->d.pp == 1 && rng_below(&r, 4) == 0) { /* lockstep DP groups of 2-4 ranks (no failures with them) */
      cc.dp_group = 2 + (uint32_t)rng_below(&r, 3);
      cc.dp_lockstep = true;
      cc.replicas = cc.dp_group * (1 + (uint32_t)rng_below(&r, 2));
    }
    cc.n_failures = cc.dp_lockstep ? 0 : (uint32_t)rng_below(&r, cc.replicas + 1);
    for (uint32_t k = 0; k < cc.n_failures; k++) {
      cc.failures[k].replica = (uint32_t)rng_below(&r, cc.replicas);
      cc.failures[k].at_ns = rng_below(&r, 3) == 0 ? 0 : rng_below(&r, 30000) * SIM_NS_PER_MS;
    }

    trace_init(&w->tr);
    uint32_t n = 1 + (uint32_t)rng_below(&r, 120);
    sim_ns t = 0;
    uint64_t ids[8];
    for (uint32_t i = 0; i < n; i++) {
      if (rng_below(&r, 3) == 0) t += rng_below(&r, 2000) * SIM_NS_PER_MS; /* many equal timestamps */
      uint32_t p = 1 + (uint32_t)rng_below(&r, cc.max_model_len);
      uint32_t o = 1 + (uint32_t)rng_below(&r, rng_below(&r, 4) ? 64 : cc.max_model_len);
      uint32_t sess = rng_below(&r, 3) == 0 ? 1 + (uint32_t)rng_below(&r, 4) : 0;
      uint32_t nh = 0;
      if (!sess && rng_below(&r, 3) == 0) {
        nh = 1 + (uint32_t)rng_below(&r, 8);
        for (uint32_t k = 0; k < nh; k++) ids[k] = k < 2 ? k + 1 : rng_below(&r, 4);
      }
      trace_push(&w->tr, t, p, o, sess, nh ? ids : NULL, nh);
    }
    w->tr.hash_block_tokens = 32;

    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster_run(w->c);
    if (!limited) {
      cr_assert(w->c->complete, "round %d: the run ends with every request closed", round);
      cr_assert_eq(w->c->in_flight, 0, "round %d", round);
      cr_assert_eq(w->c->cq.len, 0);
      for (uint32_t ri = 0; ri < cc.replicas; ri++)
        cr_assert_eq(w->c->reps[ri].outstanding, 0, "round %d: replica %u", round, ri);
    } else {
      cr_assert_leq(w->c->in_flight, n, "round %d: in-flight count wrapped", round);
      for (uint32_t ri = 0; ri < cc.replicas; ri++) cr_assert_leq(w->c->reps[ri].outstanding, n);
    }
    check_kv(w->c, round);
    cluster_finish(w->c);
    cluster_finish(w->c); /* idempotent */
    check_closed(w->c, round);
    /* every block comes back once the tables still held (zombies, time limit) are released */
    for (size_t i = 0; i < w->c->n_reqs; i++) {
      request *q = &w->c->reqs[i];
      if (q->kv.n_blocks) kv_seq_free(w->c->reps[q->replica].s.kv, &q->kv);
    }
    for (uint32_t ri = 0; ri < cc.replicas; ri++)
      cr_assert_eq(kv_num_free(w->c->reps[ri].s.kv), cc.kv_blocks, "round %d replica %u", round, ri);
    cluster_free(w->c);
    trace_free(&w->tr);
    cost_free(w->cost);
    free(w);
  }
}

/* Pipeline parallelism overlaps consecutive batches: two 512-token prompts
 * at t = 0 with a 512-token budget go in two batches. Without PP (and
 * without async scheduling) the second is scheduled when the first returns:
 * its first token comes one whole step (host work + GPU) after the first's.
 * With 2 stages the engine schedules it at once (a batch queue of pp
 * batches: vLLM's max_concurrent_batches) and it enters stage 0 as soon as
 * the first batch leaves it: its first token comes about one stage later. */
Test(cluster, pipeline_overlaps_consecutive_batches) {
  sim_ns first[2], gap[2];
  for (uint32_t pp = 1; pp <= 2; pp++) {
    world *w = calloc(1, sizeof *w);
    w->m = tu_model_llama70b();
    w->g = tu_gpu_h200();
    w->e = tu_engine_vllm();
    w->e.async_scheduling = false;
    w->d = tu_deploy(4, DT_BF16);
    w->d.pp = pp;
    w->d.async_scheduling = 0;
    sim_err err = {0, ""};
    cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
    cluster_cfg cc;
    memset(&cc, 0, sizeof cc);
    cc.replicas = 1;
    cc.block_tokens = 16;
    cc.max_model_len = 4096;
    cc.kv_blocks = 1000;
    cc.sched = (sched_cfg){8, 512, 0, true, false, ADMIT_ON_DEMAND, false, pp, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
    trace_init(&w->tr);
    trace_push(&w->tr, 0, 512, 1, 0, NULL, 0);
    trace_push(&w->tr, 0, 512, 1, 0, NULL, 0);
    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster_run(w->c);
    cr_assert(w->c->complete);
    cr_assert_eq(w->c->reps[0].steps, 2);
    first[pp - 1] = w->c->reqs[0].finish_ns;
    gap[pp - 1] = w->c->reqs[1].finish_ns - w->c->reqs[0].finish_ns;
    if (pp == 2) {
      /* the step costs of one 512-token prompt, as the timeline used them */
      batch_desc b = {.num_tokens = 512, .num_seqs = 1, .num_sample = 1, .num_prefill = 1,
                      .prefills = &(prefill_chunk){512, 0}};
      step_cost sc;
      cost_step(w->cost, &b, &sc);
      double stage = fmax(sc.stage_ns[0], sc.stage_ns[1]);
      cr_assert_leq((double)gap[1], stage + 2, "the second batch trails by at most one stage (%g ns)",
                    stage);
      cr_assert_geq((double)gap[1], sc.stage_ns[1] - 2);
    }
    cluster_free(w->c);
    trace_free(&w->tr);
    cost_free(w->cost);
    free(w);
  }
  cr_assert_lt(gap[1], gap[0] * 6 / 10, "pp 2: %lld ns between the first tokens, pp 1: %lld ns", (long long)gap[1],
               (long long)gap[0]);
  cr_assert_gt(first[1], first[0], "a lone batch pays the send between the stages and the host work unhidden");
}

/* Lockstep DP (MoE layers): rank 0 prefills a 4000-token prompt while rank 1
 * decodes a short request. In lockstep rank 1's steps last as long as rank
 * 0's: its first token comes with rank 0's (one group step, one end), its
 * second with rank 0's second, and each rank's GPU time includes the wait
 * (its own cost plus the wait = the group's). With independent ranks its
 * first token comes long before. */
Test(cluster, dp_lockstep_ranks_step_together) {
  sim_ns first1[2], first0[2];
  for (int lock = 0; lock <= 1; lock++) {
    world *w = calloc(1, sizeof *w);
    w->m = tu_model_llama70b();
    w->g = tu_gpu_h200();
    w->e = tu_engine_vllm();
    w->e.async_scheduling = false;
    w->d = tu_deploy(1, DT_FP8);
    w->d.dp = 2;
    w->d.async_scheduling = 0;
    sim_err err = {0, ""};
    cr_assert_eq(cost_new(&w->cost, &w->m, &w->g, &w->e, &w->d, &err), SIM_OK, "%s", err.msg);
    cluster_cfg cc;
    memset(&cc, 0, sizeof cc);
    cc.replicas = 2;
    cc.dp_group = 2;
    cc.dp_lockstep = lock;
    cc.router = ROUTE_LEAST_OUTSTANDING;
    cc.block_tokens = 16;
    cc.max_model_len = 8192;
    cc.kv_blocks = 1000;
    cc.sched = (sched_cfg){8, 8192, 0, true, false, ADMIT_ON_DEMAND, false, 1, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
    trace_init(&w->tr);
    trace_push(&w->tr, 0, 4000, 2, 0, NULL, 0);
    trace_push(&w->tr, 0, 16, 2, 0, NULL, 0);
    cr_assert((w->c = cluster_new(&cc, &w->tr, w->cost, &err)), "%s", err.msg);
    cluster_run(w->c);
    cr_assert(w->c->complete);
    cr_assert_eq(w->c->reqs[0].replica, 0);
    cr_assert_eq(w->c->reqs[1].replica, 1);
    first0[lock] = w->c->reqs[0].first_token_ns;
    first1[lock] = w->c->reqs[1].first_token_ns;
    if (lock) {
      cr_assert_eq(first1[1], first0[1], "one group step: both first tokens at its end");
      cr_assert_eq(w->c->reqs[1].finish_ns, w->c->reqs[0].finish_ns, "the second group step ends both");
      cr_assert_eq(w->c->reps[0].steps, 2);
      cr_assert_eq(w->c->reps[1].steps, 2);
      cr_assert_float_eq(w->c->reps[1].busy_ns, w->c->reps[0].busy_ns, 1e-6 * w->c->reps[0].busy_ns,
                         "rank 1's GPU time is the group's: %g vs %g ns", w->c->reps[1].busy_ns, w->c->reps[0].busy_ns);
    }
    cluster_free(w->c);
    trace_free(&w->tr);
    cost_free(w->cost);
    free(w);
  }
  cr_assert_lt(first1[0] * 3, first0[0], "independent ranks: the short prompt's first token comes far earlier");
  cr_assert_eq(first0[1], first0[0], "the slow rank's own timeline is the group's");
}
