/* test_sched.c: vLLM V1 scheduling semantics on small hand-checked cases, and
 * invariants (token conservation, KV blocks never double-owned) on random ones. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/rng.h"
#include "serve/sched.h"

typedef struct harness {
  sched s;
  request reqs[256];
  uint32_t n;
  metrics_rec m;
  sim_ns now;
  batch_desc bd; /* the step that ran last */
  uint32_t done[256];
} harness;

static void h_init_cfg(harness *h, const sched_cfg *c, uint32_t blocks) {
  memset(h, 0, sizeof *h);
  sched_init(&h->s, c, blocks, 16, true);
  metrics_init(&h->m, 0);
}

static void h_init(harness *h, uint32_t seqs, uint32_t budget, uint32_t blocks, bool async, admit_policy adm) {
  sched_cfg c = {seqs, budget, 0, true, async, adm, false, 1, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
  h_init_cfg(h, &c, blocks);
}

static uint32_t h_add(harness *h, uint32_t prompt, uint32_t output) {
  request *r = &h->reqs[h->n];
  memset(r, 0, sizeof *r);
  r->id = h->n;
  r->prompt_tokens = prompt;
  r->output_tokens = output;
  r->num_tokens = prompt;
  r->first_sched_ns = SIM_NS_INF;
  kv_seq_init(&r->kv);
  sched_add(&h->s, h->reqs, h->n);
  return h->n++;
}

/* Fills the batch queue at the current time (as the engine does when a step
 * ends), then runs the oldest step for 1 ms and completes it; returns the
 * finished count. h->bd is the step that ran. */
static uint32_t h_step(harness *h) {
  while (!sched_queue_full(&h->s) && sched_schedule(&h->s, h->reqs, h->now)) {
  }
  cr_assert(h->s.q_len > 0, "nothing scheduled");
  h->bd = sched_queued(&h->s, 0)->bd;
  h->now += SIM_NS_PER_MS;
  return sched_complete(&h->s, h->reqs, h->now, &h->m, h->done);
}

static void h_check_kv(harness *h) {
  const kv_seq *seqs[256];
  for (uint32_t i = 0; i < h->n; i++) seqs[i] = &h->reqs[i].kv;
  sim_err err;
  cr_assert_eq(kv_check(h->s.kv, seqs, h->n, &err), 0, "%s", err.msg);
}

static void h_free(harness *h) {
  for (uint32_t i = 0; i < h->n; i++) {
    kv_seq_free(h->s.kv, &h->reqs[i].kv);
    kv_seq_deinit(&h->reqs[i].kv);
  }
  sched_deinit(&h->s);
  metrics_deinit(&h->m);
}

Test(sched, chunked_prefill_emits_first_token_on_last_chunk) {
  harness h;
  h_init(&h, 8, 32, 100, false, ADMIT_ON_DEMAND);
  uint32_t a = h_add(&h, 100, 3);
  uint32_t chunks[] = {32, 32, 32, 4};
  for (int i = 0; i < 4; i++) {
    h_step(&h);
    cr_assert_eq(h.bd.num_tokens, chunks[i]);
    cr_assert_eq(h.reqs[a].generated, i == 3 ? 1u : 0u, "step %d", i);
  }
  cr_assert_eq(h.bd.num_sample, 1);
  cr_assert_eq(h.reqs[a].first_token_ns, 4 * SIM_NS_PER_MS);
  h_step(&h); /* decode: computes token 101, samples the 2nd output */
  cr_assert_eq(h.bd.num_decode, 1);
  cr_assert_eq(h.bd.decode_ctx_tokens, 101);
  cr_assert_eq(h_step(&h), 1); /* 3rd output: finished */
  cr_assert_eq(h.reqs[a].state, RQ_FINISHED);
  cr_assert_eq(h.reqs[a].finish_ns, 6 * SIM_NS_PER_MS);
  cr_assert_eq(kv_num_free(h.s.kv), 100);
  cr_assert_not(sched_has_work(&h.s));
  h_free(&h);
}

Test(sched, running_first_then_waiting_share_the_budget) {
  harness h;
  h_init(&h, 8, 64, 100, false, ADMIT_ON_DEMAND);
  uint32_t a = h_add(&h, 10, 5);
  h_step(&h); /* a prefilled, first token */
  uint32_t b = h_add(&h, 100, 5);
  h_step(&h); /* a decodes (1 token), b gets the remaining 63 */
  cr_assert_eq(h.bd.num_seqs, 2);
  cr_assert_eq(h.bd.num_decode, 1);
  cr_assert_eq(h.bd.num_prefill, 1);
  cr_assert_eq(h.bd.prefills[0].chunk_tokens, 63);
  cr_assert_eq(h.reqs[b].num_computed, 63);
  cr_assert_eq(h.reqs[a].generated, 2);
  h_step(&h); /* a decodes, b finishes its prompt (37) */
  cr_assert_eq(h.bd.num_tokens, 38);
  cr_assert_eq(h.reqs[b].generated, 1);
  h_check_kv(&h);
  h_free(&h);
}

Test(sched, max_num_seqs_caps_admission) {
  harness h;
  h_init(&h, 2, 1000, 100, false, ADMIT_ON_DEMAND);
  for (int i = 0; i < 5; i++) h_add(&h, 10, 10);
  h_step(&h);
  cr_assert_eq(h.bd.num_seqs, 2);
  cr_assert_eq(sched_num_waiting(&h.s), 3);
  h_free(&h);
}

Test(sched, preempts_last_admitted_to_front_of_queue) {
  harness h;
  /* 6 blocks of 16 tokens: two 40-token prompts take 3 blocks each */
  h_init(&h, 8, 1000, 6, false, ADMIT_ON_DEMAND);
  uint32_t a = h_add(&h, 40, 20), b = h_add(&h, 40, 20), c = h_add(&h, 10, 1);
  h_step(&h); /* both prefilled: 6 blocks used, c cannot be admitted */
  cr_assert_eq(kv_num_free(h.s.kv), 0);
  cr_assert_eq(h.reqs[c].state, RQ_WAITING);
  /* tokens 41..48 fit in block 3; at token 49 a needs a 4th block */
  for (int i = 0; i < 8; i++) h_step(&h);
  cr_assert_eq(h.reqs[a].num_computed, 48);
  h_step(&h);
  cr_assert_eq(h.reqs[b].preemptions, 1, "the last admitted request is the victim");
  cr_assert_eq(h.reqs[b].num_computed, 0);
  cr_assert_eq(h.reqs[b].state, RQ_WAITING);
  cr_assert_eq(ring_front(&h.s.waiting), b, "preempted request goes to the front");
  cr_assert_eq(h.reqs[a].preemptions, 0);
  cr_assert_eq(h.s.preemptions, 1);
  cr_assert_eq(h.bd.num_seqs, 1, "no admission in a step that preempted");
  h_check_kv(&h);
  /* run to completion: every request finishes, tokens conserved */
  uint32_t fin = 0;
  for (int i = 0; i < 500 && sched_has_work(&h.s); i++) fin += h_step(&h);
  cr_assert_eq(fin, 3);
  cr_assert_eq(h.reqs[a].generated, 20);
  cr_assert_eq(h.reqs[b].generated, 20);
  cr_assert_eq(h.reqs[c].generated, 1);
  cr_assert_eq(kv_num_free(h.s.kv), 6);
  /* prefix-cache stats as vLLM counts them (PrefixCacheStats.record): the three first admissions (40 + 40 + 10
   * tokens asked for, nothing shared) apart from b's re-admission, which finds the blocks it filled before */
  cr_assert_eq(h.s.prefix_queries, 90);
  cr_assert_eq(h.s.prefix_hits, 0);
  cr_assert_eq(h.s.preempted_queries, 49, "b asks for its 40 prompt + 9 generated tokens");
  cr_assert_eq(h.s.preempted_hits, 32, "two of the three blocks it filled are still cached (a took the third: "
                                        "blocks are freed tail first, so a prefix survives longest)");
  h_free(&h);
}

/* vLLM's batch queue (EngineCore.step_with_batch_queue, 2 batches with async
 * scheduling): the step scheduled while step k runs is scheduled from the
 * state before step k's output is known, and a finished request holds its
 * seat until its last step's output is processed, without being scheduled
 * again (PR #27922). */
Test(sched, async_scheduling_holds_a_finished_seat_until_its_output) {
  harness h;
  h_init(&h, 1, 1000, 100, true, ADMIT_ON_DEMAND);
  uint32_t a = h_add(&h, 10, 1), b = h_add(&h, 10, 1);
  /* step 1 prefills a (its only output token is a placeholder); the engine
   * then tries to queue step 2: a is skipped (last token in flight) and b has
   * no seat, so nothing is queued */
  cr_assert_eq(h_step(&h), 1);
  cr_assert_eq(h.reqs[a].state, RQ_FINISHED);
  cr_assert_eq(h.reqs[a].finish_ns, 1 * SIM_NS_PER_MS);
  cr_assert_eq(h.bd.num_seqs, 1);
  h_step(&h); /* the seat is free now: b runs, no wasted step for a */
  cr_assert_eq(h.bd.num_seqs, 1);
  cr_assert_eq(h.reqs[b].state, RQ_FINISHED);
  cr_assert_eq(h.reqs[b].finish_ns, 2 * SIM_NS_PER_MS);
  h_free(&h);
}

/* A request that arrives while step k runs is first computed in step k+2
 * with async scheduling (step k+1 was scheduled before it arrived), in step
 * k+1 without. (h_add between two h_step calls = an arrival during the step
 * the first call ran.) */
Test(sched, async_scheduling_admits_an_arrival_two_steps_later) {
  for (int async = 0; async < 2; async++) {
    harness h;
    h_init(&h, 8, 1000, 100, async, ADMIT_ON_DEMAND);
    uint32_t a = h_add(&h, 10, 50);
    h_step(&h); /* step 1: a's prefill; async also queued step 2 (a's first decode) at t=0 */
    uint32_t b = h_add(&h, 10, 5); /* arrives during step 1 */
    h_step(&h); /* step 2 */
    cr_assert_eq(h.bd.num_seqs, async ? 1u : 2u, "async %d: who is in step 2", async);
    cr_assert_eq(h.reqs[b].generated, async ? 0u : 1u);
    if (async) {
      h_step(&h); /* step 3, scheduled when step 1 ended */
      cr_assert_eq(h.bd.num_seqs, 2);
      cr_assert_eq(h.reqs[b].generated, 1, "b's first token comes with step 3");
      cr_assert_eq(h.reqs[b].first_token_ns, 3 * SIM_NS_PER_MS);
      cr_assert_eq(h.reqs[a].generated, 3);
    }
    h_free(&h);
  }
}

Test(sched, reserve_full_admits_only_what_fits_to_the_end) {
  harness h;
  /* 10 blocks: a needs ceil((40+100)/16) = 9 blocks reserved up front */
  h_init(&h, 8, 1000, 10, false, ADMIT_RESERVE_FULL);
  uint32_t a = h_add(&h, 40, 100), b = h_add(&h, 40, 100);
  h_step(&h);
  cr_assert_eq(h.reqs[a].kv.n_blocks, 9);
  cr_assert_eq(h.reqs[b].state, RQ_WAITING);
  for (int i = 0; i < 99; i++) h_step(&h);
  cr_assert_eq(h.reqs[a].state, RQ_FINISHED);
  cr_assert_eq(h.s.preemptions, 0);
  h_step(&h);
  cr_assert_eq(h.reqs[b].state, RQ_RUNNING);
  h_free(&h);
}

Test(sched, prefix_hits_skip_cached_tokens) {
  harness h;
  h_init(&h, 8, 1000, 100, false, ADMIT_ON_DEMAND);
  uint32_t a = h_add(&h, 100, 2);
  h.reqs[a].session = 7;
  h_step(&h);
  h_step(&h);
  cr_assert_eq(h.reqs[a].state, RQ_FINISHED);
  uint32_t b = h_add(&h, 150, 2);
  h.reqs[b].session = 7;
  h_step(&h);
  /* a computed 101 tokens: 6 full blocks (96 tokens) are cached */
  cr_assert_eq(h.reqs[b].cached_tokens, 96);
  cr_assert_eq(h.bd.num_tokens, 150 - 96);
  h_free(&h);
}

Test(sched, random_workloads_conserve_tokens_and_blocks) {
  rng r;
  rng_seed(&r, 11);
  for (int round = 0; round < 40; round++) {
    harness h;
    uint32_t blocks = 20 + (uint32_t)rng_below(&r, 60);
    h_init(&h, 1 + (uint32_t)rng_below(&r, 16), 16 + (uint32_t)rng_below(&r, 200), blocks, round % 2,
           round % 5 == 0 ? ADMIT_RESERVE_FULL : ADMIT_ON_DEMAND);
    uint32_t want = 0, n = 30 + (uint32_t)rng_below(&r, 60);
    uint64_t out_total = 0;
    uint32_t added = 0, fin = 0;
    for (int step = 0; step < 20000 && (added < n || sched_has_work(&h.s)); step++) {
      if (added < n && rng_below(&r, 3) == 0) {
        /* keep each request within the pool: prompt + output <= blocks*16 */
        uint32_t cap = blocks * 16;
        uint32_t p = 1 + (uint32_t)rng_below(&r, cap / 2), o = 1 + (uint32_t)rng_below(&r, cap / 2);
        uint32_t id = h_add(&h, p, o);
        bool shared = rng_below(&r, 2);
        uint32_t session = 1 + (uint32_t)rng_below(&r, 3);
        h.reqs[id].session = shared ? session : 0; /* 0: content of its own */
        want += o;
        added++;
      }
      if (!sched_has_work(&h.s)) continue;
      fin += h_step(&h);
      h_check_kv(&h);
      for (uint32_t i = 0; i < h.n; i++) {
        request *q = &h.reqs[i];
        cr_assert_leq(q->num_computed, q->num_tokens);
        cr_assert_eq(q->num_tokens, q->prompt_tokens + q->generated);
        cr_assert_leq(q->generated, q->output_tokens);
      }
    }
    for (uint32_t i = 0; i < h.n; i++) out_total += h.reqs[i].generated;
    cr_assert_eq(fin, added, "round %d: every request finishes", round);
    cr_assert_eq(out_total, want, "round %d: output tokens conserved", round);
    cr_assert_eq(kv_num_free(h.s.kv), blocks);
    h_free(&h);
  }
}

/* vLLM >= 0.19 (scheduler_reserve_full_isl, PR #37307; allocate_slots with
 * full_sequence_must_fit): a waiting request is admitted only when the blocks
 * of its whole current sequence are free; before, its first chunk's blocks
 * were enough. */
Test(sched, full_isl_admission_needs_the_whole_prompt) {
  for (int full = 0; full < 2; full++) {
    harness h;
    sched_cfg c = {8, 64, 0, true, false, ADMIT_ON_DEMAND, full, 1, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
    h_init_cfg(&h, &c, 10); /* 10 blocks of 16 */
    uint32_t a = h_add(&h, 40, 5), b = h_add(&h, 120, 5);
    h_step(&h); /* a: 40 tokens, 3 blocks; b: 24 tokens fit the budget, 2 blocks; its whole prompt needs 8 */
    cr_assert_eq(h.reqs[a].state, RQ_RUNNING);
    if (full) {
      cr_assert_eq(h.reqs[b].state, RQ_WAITING, "7 free blocks < 8");
      cr_assert_eq(h.bd.num_tokens, 40);
    } else {
      cr_assert_eq(h.reqs[b].state, RQ_RUNNING, "first-chunk admission");
      cr_assert_eq(h.reqs[b].num_computed, 24);
      cr_assert_eq(h.reqs[b].kv.n_blocks, 2, "only the chunk's blocks are allocated");
    }
    h_check_kv(&h);
    h_free(&h);
  }
}

/* Requests admitted in the same step share a prefix: vLLM registers the block
 * hashes in allocate_slots, when the step is scheduled, so the second request
 * of a burst finds the first one's prefix although it is not computed yet. */
Test(sched, same_step_admissions_share_a_prefix) {
  harness h;
  h_init(&h, 8, 8192, 1000, false, ADMIT_ON_DEMAND);
  uint64_t ids[4] = {1, 2, 3, 4};
  uint32_t r[3];
  h.s.hash_ids = ids;
  h.s.hash_block_tokens = 512;
  for (int i = 0; i < 3; i++) {
    r[i] = h_add(&h, 2048 + 100, 2);
    h.reqs[r[i]].hash_off = 0;
    h.reqs[r[i]].n_hash = 4;
  }
  h_step(&h);
  cr_assert_eq(h.bd.num_seqs, 3);
  cr_assert_eq(h.reqs[r[0]].cached_tokens, 0);
  cr_assert_eq(h.reqs[r[1]].cached_tokens, 2048);
  cr_assert_eq(h.reqs[r[2]].cached_tokens, 2048);
  cr_assert_eq(h.bd.num_tokens, 2148 + 2 * 100, "the shared prefix is computed once");
  h_check_kv(&h);
  h_free(&h);
}

/* Pipeline parallelism (vLLM V1): the batch queue holds pp batches
 * (max_concurrent_batches = pipeline_parallel_size, config/vllm.py) and there
 * is no async scheduling, so no placeholders: a request whose sampled token
 * is still in flight computes nothing (scheduler.py: num_new_tokens == 0 when
 * "PP>1 and we have already scheduled all prompt tokens but they are not
 * finished yet") and keeps its seat; the next chunk of a prompt can be
 * scheduled while the previous one is in flight. */
Test(sched, pipeline_queue_skips_requests_whose_token_is_in_flight) {
  harness h;
  sched_cfg c = {8, 64, 0, true, false, ADMIT_ON_DEMAND, false, 2, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
  h_init_cfg(&h, &c, 100);
  cr_assert_eq(h.s.depth, 2);
  uint32_t a = h_add(&h, 100, 3), b = h_add(&h, 10, 3);
  sched_step *s1 = sched_schedule(&h.s, h.reqs, 0);
  cr_assert_not_null(s1);
  cr_assert_eq(s1->bd.num_tokens, 64, "a's first chunk takes the budget");
  sched_step *s2 = sched_schedule(&h.s, h.reqs, 0);
  cr_assert_not_null(s2, "a second batch while the first is in flight");
  cr_assert_eq(s2->bd.num_tokens, 36 + 10, "a's second chunk and b's prompt");
  cr_assert_eq(s2->bd.num_sample, 2);
  cr_assert(sched_queue_full(&h.s));
  uint32_t n = sched_complete(&h.s, h.reqs, SIM_NS_PER_MS, &h.m, h.done);
  cr_assert_eq(n, 0);
  cr_assert_eq(h.reqs[a].generated, 0, "a mid-prompt chunk samples nothing");
  cr_assert_null(sched_schedule(&h.s, h.reqs, SIM_NS_PER_MS), "both wait for the tokens of the batch in flight");
  cr_assert_eq(h.s.n_running, 2, "their seats are held");
  sched_complete(&h.s, h.reqs, 2 * SIM_NS_PER_MS, &h.m, h.done);
  cr_assert_eq(h.reqs[a].generated, 1);
  cr_assert_eq(h.reqs[b].generated, 1);
  sched_step *s3 = sched_schedule(&h.s, h.reqs, 2 * SIM_NS_PER_MS);
  cr_assert_not_null(s3);
  cr_assert_eq(s3->bd.num_decode, 2);
  cr_assert_null(sched_schedule(&h.s, h.reqs, 2 * SIM_NS_PER_MS));
  h_free(&h);
  /* the batch queue is pp deep */
  sched_cfg c4 = {8, 64, 0, true, false, ADMIT_ON_DEMAND, false, 4, 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
  h_init_cfg(&h, &c4, 100);
  cr_assert_eq(h.s.depth, 4);
  h_free(&h);
}

/* The random invariants again, with pipeline batch queues of 2 to 4. */
Test(sched, pipeline_random_workloads_conserve_tokens_and_blocks) {
  rng r;
  rng_seed(&r, 12);
  for (int round = 0; round < 30; round++) {
    harness h;
    uint32_t blocks = 20 + (uint32_t)rng_below(&r, 60);
    sched_cfg c = {1 + (uint32_t)rng_below(&r, 16), 16 + (uint32_t)rng_below(&r, 200), 0, true, false,
                   ADMIT_ON_DEMAND, round % 2 == 1, 2 + (uint32_t)rng_below(&r, 3), 0, 0, 0, false, false, false, 0, 0, 0, 0, {0}};
    h_init_cfg(&h, &c, blocks);
    uint32_t want = 0, n = 30 + (uint32_t)rng_below(&r, 60), added = 0, fin = 0;
    for (int step = 0; step < 100000 && /* one step ends per turn; preemption cycles in tiny pools */ (added < n || sched_has_work(&h.s)); step++) {
      if (added < n && rng_below(&r, 3) == 0) {
        uint32_t cap = blocks * 16;
        uint32_t p = 1 + (uint32_t)rng_below(&r, cap / 2), o = 1 + (uint32_t)rng_below(&r, cap / 2);
        h_add(&h, p, o);
        want += o;
        added++;
      }
      if (!sched_has_work(&h.s)) continue;
      while (!sched_queue_full(&h.s) && sched_schedule(&h.s, h.reqs, h.now)) {
      }
      if (!h.s.q_len) continue; /* everything waits for blocks held by nothing: cannot happen within the pool */
      h.now += SIM_NS_PER_MS;
      fin += sched_complete(&h.s, h.reqs, h.now, &h.m, h.done);
      h_check_kv(&h);
      for (uint32_t i = 0; i < h.n; i++) {
        request *q = &h.reqs[i];
        cr_assert_leq(q->num_computed, q->num_tokens, "round %d: no placeholders without async scheduling", round);
        cr_assert_eq(q->num_tokens, q->prompt_tokens + q->generated);
        cr_assert_leq(q->generated, q->output_tokens);
      }
    }
    uint64_t out_total = 0;
    for (uint32_t i = 0; i < h.n; i++) out_total += h.reqs[i].generated;
    cr_assert_eq(fin, added, "round %d: every request finishes", round);
    cr_assert_eq(out_total, want, "round %d: output tokens conserved", round);
    cr_assert_eq(kv_num_free(h.s.kv), blocks);
    h_free(&h);
  }
}
