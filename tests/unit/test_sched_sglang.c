/* test_sched_sglang.c: SGLang's scheduler (admission token_ratio, serve/sched_sglang.c) on hand-checked cases,
 * each number derived from SGLang's code at 1efc33c64 (v0.5.9; docs/SGLANG.md sections 2-4):
 *   srt/environ.py               INIT_NEW_TOKEN_RATIO 0.7, MIN_NEW_TOKEN_RATIO_FACTOR 0.14, DECAY_STEPS 600,
 *                                RETRACT_DECODE_STEPS 20, CLIP_MAX_NEW_TOKENS 4096
 *   managers/scheduler.py        l.811-823 ratio init/min/decay; get_next_batch_to_run (prefill first);
 *                                update_running_batch (decay, retraction)
 *   managers/schedule_policy.py  PrefillAdder.add_one_req / add_chunked_req / budget_state
 *   managers/schedule_batch.py   check_decode_mem, retract_decode (victim order, new ratio)
 *   mem_cache/radix_cache.py     _key_match_page_size1: token-granular prefix match
 *   managers/schedule_policy.py  calc_priority, _compute_prefix_matches, _sort_by_longest_prefix (lpm)
 * Pages of one token (server_args page_size None -> 1), no overlap (async off: one step at a time). */
#include <criterion/criterion.h>
#include <string.h>

#include "serve/sched.h"

typedef struct harness {
  sched s;
  request reqs[128];
  uint32_t n;
  metrics_rec m;
  sim_ns now;
  batch_desc bd;
  uint32_t done[128];
} harness;

static void h_init_async(harness *h, uint32_t chunk, uint32_t pool, double conservativeness, uint32_t page,
                         bool async, uint32_t retract_steps, bool mixed) {
  memset(h, 0, sizeof *h);
  sched_cfg c = {2048,  chunk, 0, true,  async, ADMIT_TOKEN_RATIO, false, 1, 16384, conservativeness, retract_steps,
                 false, false, mixed, 0, 0, 0, 0, {0}};
  sched_init(&h->s, &c, pool, page, true);
  metrics_init(&h->m, 0);
}

static void h_init(harness *h, uint32_t chunk, uint32_t pool, double conservativeness, uint32_t page) {
  h_init_async(h, chunk, pool, conservativeness, page, false, 1, false);
}

static uint32_t h_add(harness *h, uint32_t prompt, uint32_t output, uint32_t session) {
  request *r = &h->reqs[h->n];
  memset(r, 0, sizeof *r);
  r->id = h->n;
  r->prompt_tokens = prompt;
  r->output_tokens = output;
  r->num_tokens = prompt;
  r->session = session;
  r->first_sched_ns = SIM_NS_INF;
  kv_seq_init(&r->kv);
  sched_add(&h->s, h->reqs, h->n);
  return h->n++;
}

static void h_step(harness *h) {
  cr_assert(sched_schedule(&h->s, h->reqs, h->now), "nothing scheduled");
  h->bd = sched_queued(&h->s, 0)->bd;
  h->now += SIM_NS_PER_MS;
  sched_complete(&h->s, h->reqs, h->now, &h->m, h->done);
}

static void h_check_kv(harness *h) {
  const kv_seq *seqs[128];
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

/* scheduler.py l.811-823 with schedule_conservativeness 1: init 0.7, min 0.7 x 0.14 = 0.098, decay
 * (0.7 - 0.098) / 600 per decode step (update_running_batch, no retraction). */
Test(sched_sglang, new_token_ratio_decays_per_decode_step) {
  harness h;
  h_init(&h, 8192, 10000, 1.0, 1);
  cr_assert_float_eq(h.s.ratio, 0.7, 1e-12);
  cr_assert_float_eq(h.s.ratio_min, 0.098, 1e-12);
  h_add(&h, 10, 50, 0);
  h_step(&h); /* prefill: the ratio does not move */
  cr_assert_float_eq(h.s.ratio, 0.7, 1e-12);
  for (int i = 0; i < 10; i++) h_step(&h);
  cr_assert_eq(h.bd.num_decode, 1);
  cr_assert_float_eq(h.s.ratio, 0.7 - 10 * (0.7 - 0.098) / 600, 1e-12);
  h_free(&h);
}

/* PrefillAdder.add_one_req: admit while extend + min(max_new - out, 4096) < available + evictable -
 * new_token_ratio x sum_running min(max_new - out, 4096). Pool 1000 tokens; A (prompt 100, output 500) is
 * prefilled (100 tokens held, 1 output token). Then free = 900, running reserve = 0.7 x 499 = 349.3, room
 * 550.7: B (300 + 200 = 500) is admitted; with the running output reserved whole (ratio 1: room 401) it would
 * not be. C (300 + 260 = 560 >= 550.7) is not: the step decodes A instead and batch_is_full is set. */
Test(sched_sglang, admission_reserves_running_output_at_the_ratio) {
  harness h;
  h_init(&h, 8192, 1000, 1.0, 1);
  h_add(&h, 100, 500, 0);
  h_step(&h);
  uint32_t b = h_add(&h, 300, 200, 0);
  h_step(&h);
  cr_assert_eq(h.reqs[b].state, RQ_RUNNING, "500 < 900 - 0.7 x 499");
  cr_assert_eq(h.bd.num_prefill, 1);
  cr_assert_eq(h.bd.num_decode, 0, "prefill first: A does not decode in B's prefill step");
  h_free(&h);

  h_init(&h, 8192, 1000, 1.0, 1);
  h_add(&h, 100, 500, 0);
  h_step(&h);
  uint32_t c = h_add(&h, 300, 260, 0);
  h_step(&h);
  cr_assert_eq(h.reqs[c].state, RQ_WAITING, "560 >= 900 - 0.7 x 499");
  cr_assert_eq(h.bd.num_decode, 1);
  cr_assert_eq(h.bd.num_prefill, 0);
  cr_assert(h.s.full, "NO_TOKEN sets batch_is_full");
  h_free(&h);
}

/* Chunked prefill (chunked_prefill_size 64): A (150 prompt tokens) is cut at 64 (rem_chunk_tokens), its next
 * round takes 64 more (add_chunked_req, one chunked request at a time), the last round its 22 and B's whole 20
 * prompt in the same batch (42 <= 64). Then A and B decode together; a new arrival C runs in a prefill-only
 * step (get_next_batch_to_run: prefill first, no mixing without --enable-mixed-chunk). */
Test(sched_sglang, chunked_prefill_step_composition) {
  harness h;
  h_init(&h, 64, 10000, 1.0, 1);
  uint32_t a = h_add(&h, 150, 5, 0), b = h_add(&h, 20, 5, 0);
  h_step(&h);
  cr_assert_eq(h.bd.num_tokens, 64);
  cr_assert_eq(h.bd.num_seqs, 1);
  cr_assert_eq(h.reqs[b].state, RQ_WAITING);
  h_step(&h);
  cr_assert_eq(h.bd.num_tokens, 64);
  cr_assert_eq(h.bd.prefills[0].ctx_tokens, 64);
  h_step(&h);
  cr_assert_eq(h.bd.num_prefill, 2);
  cr_assert_eq(h.bd.prefills[0].chunk_tokens, 22);
  cr_assert_eq(h.bd.prefills[1].chunk_tokens, 20);
  cr_assert_eq(h.bd.num_sample, 2);
  cr_assert_eq(h.reqs[a].generated, 1);
  h_step(&h);
  cr_assert_eq(h.bd.num_decode, 2);
  cr_assert_eq(h.bd.decode_ctx_tokens, 151 + 21);
  h_add(&h, 10, 5, 0);
  h_step(&h);
  cr_assert_eq(h.bd.num_prefill, 1);
  cr_assert_eq(h.bd.num_decode, 0);
  cr_assert_eq(h.bd.num_tokens, 10);
  h_check_kv(&h);
  h_free(&h);
}

/* Retraction (schedule_batch.py check_decode_mem / retract_decode). schedule_conservativeness 0.1: ratio 0.07.
 * Pool 200; A (10 + 80), B (20 + 80), C (30 + 80) admitted one prefill step each (90 < 200; 100 < 190 -
 * 0.07 x 79; 110 < 170 - 0.07 x 158), 140 tokens left. Three decodes a step: after 46 decode steps 2 are
 * left and each request has 47 output tokens; the next decode needs 3: retract. Victim: fewest output tokens,
 * then the longest prompt: C (30). Its 30 prefilled tokens stay cached (release_kv_cache without insert
 * keeps what the tree already holds), its 46 decoded tokens are freed; it goes to the back of the queue
 * keeping its 47 output tokens. New ratio: (47 + 47 + 20 x 2) / (80 + 80 + 1) = 134 / 161. */
Test(sched_sglang, retraction_victim_kv_and_ratio) {
  harness h;
  h_init(&h, 8192, 200, 0.1, 1);
  cr_assert_float_eq(h.s.ratio, 0.07, 1e-12);
  uint32_t a = h_add(&h, 10, 80, 0);
  h_step(&h);
  uint32_t b = h_add(&h, 20, 80, 0);
  h_step(&h);
  uint32_t c = h_add(&h, 30, 80, 0);
  h_step(&h);
  cr_assert_eq(h.reqs[c].state, RQ_RUNNING);
  cr_assert_eq(kv_num_free(h.s.kv), 140);
  for (int i = 0; i < 46; i++) h_step(&h);
  cr_assert_eq(kv_num_free(h.s.kv), 2);
  cr_assert_eq(h.s.preemptions, 0);
  cr_assert_eq(h.reqs[c].generated, 47);
  h_step(&h);
  cr_assert_eq(h.s.preemptions, 1);
  cr_assert_eq(h.reqs[c].state, RQ_WAITING);
  cr_assert_eq(h.reqs[a].state, RQ_RUNNING);
  cr_assert_eq(h.reqs[b].state, RQ_RUNNING);
  cr_assert_eq(h.reqs[c].generated, 47, "output kept: decoding resumes after the re-prefill");
  cr_assert_eq(h.reqs[c].num_computed, 0);
  cr_assert_eq(h.s.retracted_tokens, 76);
  cr_assert_eq(h.bd.num_decode, 2);
  cr_assert_eq(kv_num_free(h.s.kv), 2 + 76 - 2);
  cr_assert_float_eq(h.s.ratio, 134.0 / 161.0, 1e-12);
  /* what a re-prefill of C finds cached: its 30 prompt tokens (radix prefix), not its decoded ones (prompts
     that share nothing: content keyed on the request, kv.h) */
  kv_content cc = {.kind = KV_CONTENT_NONE, .uid = c + 1};
  cr_assert_eq(kv_match_prefix(h.s.kv, &cc, h.reqs[c].num_tokens), 30);
  h_check_kv(&h);
  h_free(&h);
}

/* Radix cache at page size 1 (_key_match_page_size1): a second turn of a session (the same token stream)
 * finds every token the first computed, 37 of its 50, not only whole pages (page size 16: 32). */
Test(sched_sglang, radix_hits_are_token_granular) {
  uint32_t page[] = {1, 16}, want[] = {37, 32};
  for (int i = 0; i < 2; i++) {
    harness h;
    h_init(&h, 8192, 4096, 1.0, page[i]);
    h_add(&h, 37, 4, 9);
    h_step(&h);
    uint32_t y = h_add(&h, 50, 4, 9);
    h_step(&h);
    cr_assert_eq(h.reqs[y].cached_tokens, want[i], "page %u: %u", page[i], h.reqs[y].cached_tokens);
    cr_assert_eq(h.bd.num_tokens, 50 - want[i]);
    cr_assert_eq(h.s.prefix_hits, want[i]);
    h_free(&h);
  }
}

static void h_init_lpm(harness *h, uint32_t chunk, bool lpm) {
  memset(h, 0, sizeof *h);
  sched_cfg c = {2048, chunk, 0, true, false, ADMIT_TOKEN_RATIO, false, 1, 16384, 1.0, 1, false, lpm, false, 0, 0, 0, 0, {0}};
  sched_init(&h->s, &c, 100000, 1, true);
  metrics_init(&h->m, 0);
}

static bool h_running(const harness *h, uint32_t i) { return h->reqs[i].state == RQ_RUNNING || h->reqs[i].generated; }

/* schedule_policy lpm (schedule_policy.py: _sort_by_longest_prefix): the request whose prompt the radix cache
 * holds most of goes first. A first request of session 1 (200 tokens) leaves its prompt cached; then B (a new
 * session, 100 tokens) and C (session 1, 300 tokens: 200 cached, 100 to compute) wait, B first. With a chunk of
 * 100 tokens one of them prefills: fcfs takes B, lpm takes C. */
Test(sched_sglang, lpm_takes_the_longest_cached_prefix_first) {
  for (int lpm = 0; lpm < 2; lpm++) {
    harness h;
    h_init_lpm(&h, 100, lpm);
    uint32_t a = h_add(&h, 200, 1, 1);
    while (!h.reqs[a].finish_ns) h_step(&h);
    uint32_t b = h_add(&h, 100, 4, 2), c = h_add(&h, 300, 4, 1);
    h_step(&h);
    cr_assert_eq(h_running(&h, c), (bool)lpm, "lpm %d: C (200 of 300 cached) admitted first", lpm);
    cr_assert_eq(h_running(&h, b), !lpm, "lpm %d: B", lpm);
    if (lpm) cr_assert_eq(h.reqs[c].cached_tokens, 200);
    h_free(&h);
  }
}

/* In-batch prefix caching (_compute_prefix_matches, thresholds 32 and 32): E and F share their 100-token
 * prompt (one session) and nothing is cached; G is another session's. lpm puts F behind G, so that E fills the
 * cache that F then hits: with a chunk of 200 the first prefill takes E and G, and F's prefill in the next step
 * finds E's prompt cached (99 tokens: one is always computed). Under fcfs the first prefill takes E and F; here
 * F already finds E's tokens in that same batch (servesim registers a block when the step that computes it is
 * scheduled, vLLM's rule; SGLang inserts a prompt into the radix tree after its prefill ran, so F would miss
 * there: docs/SGLANG.md), which leaves 99 tokens of the chunk to G. */
Test(sched_sglang, lpm_defers_a_request_sharing_a_prefix_in_the_queue) {
  for (int lpm = 0; lpm < 2; lpm++) {
    harness h;
    h_init_lpm(&h, 200, lpm);
    uint32_t e = h_add(&h, 100, 4, 5), f = h_add(&h, 100, 4, 5), g = h_add(&h, 100, 4, 6);
    h_step(&h);
    cr_assert_eq(h.reqs[e].num_computed, 100);
    cr_assert_eq(h.reqs[g].num_computed, lpm ? 100 : 99, "lpm %d: G %u", lpm, h.reqs[g].num_computed);
    cr_assert_eq(h_running(&h, f), !lpm, "lpm %d: F deferred under lpm only", lpm);
    if (lpm) h_step(&h);
    cr_assert(h_running(&h, f));
    cr_assert_eq(h.reqs[f].cached_tokens, 99, "lpm %d: F hits E's prompt: %u", lpm, h.reqs[f].cached_tokens);
    h_free(&h);
  }
}

/* Random workloads under memory pressure (pools of 60-400 tokens, overlap on or off, both retraction rules,
 * conservativeness 0.05-1, mixed chunked prefill in every third round): every request finishes with exactly its output, pages are never double-owned,
 * and the pool is whole again at the end. No number from SGLang here: the invariants its scheduler keeps. */
Test(sched_sglang, random_workloads_conserve_tokens_and_pages) {
  uint64_t x = 88172645463325252ull, retractions = 0, chunked = 0, mixed = 0;
  for (int round = 0; round < 40; round++) {
    harness h;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t pool = 60 + (uint32_t)(x % 341), chunk = 8 + (uint32_t)((x >> 12) % 120);
    double cons = 0.05 + (double)((x >> 24) % 96) / 100.0;
    h_init_async(&h, chunk, pool, cons, 1, round % 2 == 1, round % 4 < 2 ? 1 : 20, round % 3 == 0);
    uint32_t n = 20 + (uint32_t)((x >> 32) % 100), added = 0, fin = 0;
    uint64_t want = 0;
    for (int step = 0; step < 200000 && (added < n || sched_has_work(&h.s)); step++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      if (added < n && x % 3 == 0) {
        uint32_t p = 1 + (uint32_t)((x >> 8) % (pool / 2)), o = 1 + (uint32_t)((x >> 24) % (pool / 2 - 1));
        h_add(&h, p, o, 0);
        want += o;
        added++;
      }
      if (!sched_has_work(&h.s)) continue;
      while (!sched_queue_full(&h.s) && sched_schedule(&h.s, h.reqs, h.now)) {
      }
      cr_assert(h.s.q_len > 0, "round %d step %d: work but nothing scheduled", round, step);
      h.now += SIM_NS_PER_MS;
      const batch_desc *bd = &h.s.q[h.s.q_head].bd;
      chunked += bd->num_prefill && bd->num_sample < bd->num_seqs;
      mixed += round % 3 == 0 && bd->num_prefill && bd->num_decode;
      fin += sched_complete(&h.s, h.reqs, h.now, &h.m, h.done);
      h_check_kv(&h);
      for (uint32_t i = 0; i < h.n; i++) {
        cr_assert_eq(h.reqs[i].num_tokens, h.reqs[i].prompt_tokens + h.reqs[i].generated);
        cr_assert_leq(h.reqs[i].generated, h.reqs[i].output_tokens);
      }
    }
    uint64_t out = 0;
    for (uint32_t i = 0; i < h.n; i++) out += h.reqs[i].generated;
    cr_assert_eq(fin, added, "round %d: every request finishes", round);
    cr_assert_eq(out, want, "round %d: output tokens conserved", round);
    cr_assert_eq(kv_num_free(h.s.kv), pool);
    retractions += h.s.preemptions;
    h_free(&h);
  }
  cr_assert_gt(retractions, 0, "the pools are small enough to retract");
  cr_assert_gt(chunked, 0, "and the chunks small enough to cut prompts");
  cr_assert_gt(mixed, 0, "and mixed steps happen where mixing is on");
}

/* --enable-mixed-chunk (scheduler.py _get_new_batch_prefill_raw, "Mixed-style chunked prefill"; PrefillAdder
 * with mixed_with_decode_tokens = running_bs: rem_chunk_tokens and rem_input_tokens lose a token per running
 * request, rem_total_token_offset gains one). Chunk 64. A (20 + 5) is prefilled alone. B (150 + 5) arrives:
 * with one request running the chunk is 63 tokens and A decodes in the same step; again 63 (126 of 150), then
 * the last 24 with A's decode; then a plain decode step of both. The ratio does not decay in a mixed step
 * (update_running_batch runs only in the decode branch). Without mixing B's chunks are 64, 64, 22 and A waits. */
Test(sched_sglang, mixed_chunk_decodes_the_running_batch_in_prefill_steps) {
  harness h;
  h_init_async(&h, 64, 10000, 1.0, 1, false, 1, true);
  uint32_t a = h_add(&h, 20, 5, 0);
  h_step(&h);
  cr_assert_eq(h.reqs[a].generated, 1);
  uint32_t b = h_add(&h, 150, 5, 0);
  uint32_t chunk[] = {63, 63, 24};
  for (int i = 0; i < 3; i++) {
    double ratio = h.s.ratio;
    h_step(&h);
    cr_assert_eq(h.bd.num_prefill, 1, "step %d", i);
    cr_assert_eq(h.bd.prefills[0].chunk_tokens, chunk[i], "step %d", i);
    cr_assert_eq(h.bd.num_decode, 1, "step %d: A decodes with the chunk", i);
    cr_assert_eq(h.bd.num_tokens, chunk[i] + 1);
    cr_assert_eq(h.reqs[a].generated, 2u + (uint32_t)i);
    cr_assert_float_eq(h.s.ratio, ratio, 1e-15, "no decay in a mixed step");
  }
  cr_assert_eq(h.reqs[b].generated, 1);
  double ratio = h.s.ratio;
  h_step(&h);
  cr_assert_eq(h.bd.num_prefill, 0);
  cr_assert_eq(h.bd.num_decode, 2);
  cr_assert_lt(h.s.ratio, ratio, "a decode step decays the ratio");
  h_check_kv(&h);
  h_free(&h);
  /* the same arrivals without mixing */
  h_init(&h, 64, 10000, 1.0, 1);
  a = h_add(&h, 20, 5, 0);
  h_step(&h);
  b = h_add(&h, 150, 5, 0);
  uint32_t plain[] = {64, 64, 22};
  for (int i = 0; i < 3; i++) {
    h_step(&h);
    cr_assert_eq(h.bd.prefills[0].chunk_tokens, plain[i], "step %d", i);
    cr_assert_eq(h.bd.num_decode, 0);
  }
  cr_assert_eq(h.reqs[a].generated, 1, "A waited for B's prompt");
  cr_assert_eq(h.reqs[b].generated, 1);
  h_check_kv(&h);
  h_free(&h);
}
