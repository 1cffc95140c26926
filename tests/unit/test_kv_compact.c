/* test_kv_compact.c: the compact block manager (records for blocks in use
 * and cached only, runs of anonymous free blocks) against the manager it
 * replaced, which kept a record and a queue entry for every block
 * (kv_reference.h). On random operations over every content kind, with
 * caching on and off, pools from 6 to 400 blocks: the same prefix hits, the
 * same allocation successes, the same free counts and statistics (evictions
 * included) after every operation, and kv_check green. The only permitted
 * difference is which id an anonymous block gets. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/rng.h"
#include "kv_reference.h"
#include "serve/kv.h"

enum { NQ = 6 };

typedef struct twin {
  kv_seq a, b; /* a: compact manager, b: reference */
  kv_content c;
  uint64_t ids[32];
  bool running;
  uint32_t known, computed, sized;
} twin;

static void pick_content(rng *r, twin *t, uint64_t uid) {
  memset(&t->c, 0, sizeof t->c);
  t->c.uid = uid;
  uint32_t prompt = 1 + (uint32_t)rng_below(r, 120);
  switch (rng_below(r, 3)) {
    case 0:
      t->c.kind = KV_CONTENT_NONE;
      break;
    case 1:
      t->c.kind = KV_CONTENT_SESSION;
      t->c.session = rng_below(r, 4); /* few sessions: many hits */
      break;
    default:
      t->c.kind = KV_CONTENT_HASH_IDS;
      t->c.hash_block_tokens = 4 + 4 * (uint32_t)rng_below(r, 2);
      t->c.n_hash = (uint32_t)rng_below(r, 32);
      for (uint32_t i = 0; i < t->c.n_hash; i++) t->ids[i] = 1 + rng_below(r, 3); /* few ids: shared prefixes */
      t->c.hash_ids = t->ids;
      t->c.prompt_tokens = prompt;
  }
  t->known = prompt;
}

static void same_state(kv_mgr *kv, ref_mgr *ref, twin *tw, unsigned long op) {
  cr_assert_eq(kv_num_free(kv), ref_num_free(ref), "op %lu: free %u, reference %u", op, kv_num_free(kv),
               ref_num_free(ref));
  cr_assert_eq(memcmp(kv_get_stats(kv), ref_get_stats(ref), sizeof(kv_stats)), 0, "op %lu: statistics differ", op);
  cr_assert_eq(kv_get_stats(kv)->evictions, ref_get_stats(ref)->evictions, "op %lu", op);
  const kv_seq *list[NQ];
  for (int i = 0; i < NQ; i++) {
    list[i] = &tw[i].a;
    cr_assert_eq(tw[i].a.n_blocks, tw[i].b.n_blocks, "op %lu seq %d", op, i);
    cr_assert_eq(tw[i].a.n_hashed, tw[i].b.n_hashed, "op %lu seq %d", op, i);
  }
  sim_err err = {0};
  cr_assert_eq(kv_check(kv, list, NQ, &err), SIM_OK, "op %lu: %s", op, err.msg);
}

static uint64_t run_twins(uint64_t seed, uint32_t blocks, uint32_t bt, bool caching, unsigned long n_ops) {
  kv_mgr *kv = kv_new(blocks, bt, caching);
  ref_mgr *ref = ref_new(blocks, bt, caching);
  twin tw[NQ];
  memset(tw, 0, sizeof tw);
  rng r;
  rng_seed(&r, seed);
  uint64_t uid = 1;
  for (unsigned long op = 0; op < n_ops; op++) {
    twin *t = &tw[rng_below(&r, NQ)];
    if (!t->running) {
      if (t->c.uid == 0 || rng_below(&r, 3)) pick_content(&r, t, uid++); /* else: resume after preemption */
      uint32_t h1 = kv_match_prefix(kv, &t->c, t->known), h2 = ref_match_prefix(ref, &t->c, t->known);
      cr_assert_eq(h1, h2, "op %lu: hit %u, reference %u", op, h1, h2);
      uint32_t total = h1 + 1 + (uint32_t)rng_below(&r, t->known - h1);
      uint32_t fit = total + (uint32_t)rng_below(&r, 16);
      bool ok1 = kv_allocate_fit(kv, &t->a, &t->c, h1, total, fit);
      bool ok2 = ref_allocate_fit(ref, &t->b, &t->c, h2, total, fit);
      cr_assert_eq(ok1, ok2, "op %lu: admission differs", op);
      if (ok1) {
        t->running = true;
        t->computed = h1;
        t->sized = total;
      }
    } else {
      uint32_t what = (uint32_t)rng_below(&r, 10);
      if (what < 4) {
        t->computed += (uint32_t)rng_below(&r, t->sized - t->computed + 1);
        kv_commit(kv, &t->a, &t->c, t->computed);
        ref_commit(ref, &t->b, &t->c, t->computed);
      } else if (what < 8) {
        uint32_t total = t->sized + 1 + (uint32_t)rng_below(&r, 24);
        bool ok1 = kv_allocate(kv, &t->a, &t->c, 0, total), ok2 = ref_allocate(ref, &t->b, &t->c, 0, total);
        cr_assert_eq(ok1, ok2, "op %lu: growth differs", op);
        if (ok1) {
          t->sized = total;
          if (total > t->known) t->known = total;
        }
      } else {
        if (what == 8) { /* preemption: its own blocks stay findable */
          kv_commit_own(kv, &t->a, &t->c, t->computed);
          ref_commit_own(ref, &t->b, &t->c, t->computed);
        }
        kv_seq_free(kv, &t->a);
        ref_seq_free(ref, &t->b);
        t->running = false;
      }
    }
    same_state(kv, ref, tw, op);
  }
  cr_assert_leq(kv_num_records(kv), blocks);
  for (int i = 0; i < NQ; i++) {
    kv_seq_free(kv, &tw[i].a);
    ref_seq_free(ref, &tw[i].b);
    kv_seq_deinit(&tw[i].a);
    ref_seq_deinit(&tw[i].b);
  }
  same_state(kv, ref, tw, n_ops);
  uint64_t ev = kv_get_stats(kv)->evictions;
  kv_free(kv);
  ref_free(ref);
  return ev;
}

Test(kv_compact, same_hits_evictions_and_counts_as_the_full_queue_caching_on) {
  uint64_t ev = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) ev += run_twins(seed, 6 + 33 * (uint32_t)seed, 4, true, 20000);
  cr_assert_gt(ev, 1000, "only %llu evictions: the runs exercise too little", (unsigned long long)ev);
}

/* SGLang's page size 1: a block per token, the private tails long, the anonymous stack's slices many. */
Test(kv_compact, same_as_the_full_queue_page_size_1) {
  uint64_t ev = 0;
  for (uint64_t seed = 1; seed <= 6; seed++) ev += run_twins(seed, 30 + 70 * (uint32_t)seed, 1, true, 20000);
  cr_assert_gt(ev, 1000, "only %llu evictions: the runs exercise too little", (unsigned long long)ev);
}

Test(kv_compact, same_as_the_full_queue_caching_off) {
  for (uint64_t seed = 1; seed <= 4; seed++) run_twins(seed, 40 + 90 * (uint32_t)seed, 8, false, 20000);
}

/* A pool where every block ends up cached: every block gets a record. */
Test(kv_compact, cached_blocks_keep_records) {
  kv_mgr *kv = kv_new(50, 4, true);
  ref_mgr *ref = ref_new(50, 4, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  for (uint64_t s = 1; s <= 40; s++) {
    kv_content c = {.kind = KV_CONTENT_SESSION, .session = s, .uid = s};
    uint32_t h1 = kv_match_prefix(kv, &c, 40), h2 = ref_match_prefix(ref, &c, 40);
    cr_assert(kv_allocate(kv, &a, &c, h1, 40) && ref_allocate(ref, &b, &c, h2, 40));
    kv_commit(kv, &a, &c, 40);
    ref_commit(ref, &b, &c, 40);
    kv_seq_free(kv, &a);
    ref_seq_free(ref, &b);
  }
  cr_assert_gt(kv_get_stats(kv)->evictions, 300);
  cr_assert_eq(kv_get_stats(kv)->evictions, ref_get_stats(ref)->evictions);
  cr_assert_eq(kv_num_records(kv), 50, "every block cached: every block has a record");
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(kv);
  ref_free(ref);
}
