/* test_kv.c: the paged KV block manager: counts and failure atomicity, prefix
 * hits (free-but-cached and shared), hit caps, LRU eviction order, the three
 * content kinds, and a randomized model check (every hit is real content,
 * every expected hit is found) with kv_check after every operation. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/rng.h"
#include "serve/kv.h"
#include "serve/kv_impl.h" /* the records, for records_only_while_hashed */

#define MAXSEQ 64

static void check_all(const kv_mgr *kv, kv_seq *const *seqs, size_t n) {
  sim_err err = {0};
  int rc = kv_check(kv, (const kv_seq *const *)seqs, n, &err);
  cr_assert_eq(rc, SIM_OK, "%s", err.msg);
}
#define CHECK(kv, ...)                                            \
  do {                                                            \
    kv_seq *seqs_[] = {__VA_ARGS__};                              \
    check_all((kv), seqs_, sizeof seqs_ / sizeof seqs_[0]);       \
  } while (0)

static kv_content session_content(uint64_t session, uint64_t uid) {
  kv_content c = {.kind = KV_CONTENT_SESSION, .session = session, .uid = uid};
  return c;
}

static kv_content ids_content(const uint64_t *ids, uint32_t n, uint32_t hbt, uint32_t prompt, uint64_t uid) {
  kv_content c = {.kind = KV_CONTENT_HASH_IDS, .hash_ids = ids, .n_hash = n, .hash_block_tokens = hbt,
                  .prompt_tokens = prompt, .uid = uid};
  return c;
}

static const kv_content none_content = {.kind = KV_CONTENT_NONE, .uid = 999};

/* ---- basics -------------------------------------------------------------------- */

Test(kv, alloc_free_counts_usage_and_failure_atomicity) {
  kv_mgr *kv = kv_new(10, 16, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  cr_assert_eq(kv_num_blocks(kv), 10);
  cr_assert_eq(kv_block_tokens(kv), 16);
  cr_assert_eq(kv_num_free(kv), 10);
  cr_assert_float_eq(kv_usage(kv), 0.0, 1e-12);

  cr_assert_eq(kv_blocks_needed(kv, &a, 50), 4);
  cr_assert(kv_allocate(kv, &a, &none_content, 0, 50));
  CHECK(kv, &a, &b);
  cr_assert_eq(a.n_blocks, 4);
  for (uint32_t i = 0; i < 4; i++) cr_assert_eq(a.blocks[i], i, "fresh pool hands out blocks in id order");
  cr_assert_eq(kv_num_free(kv), 6);
  cr_assert_float_eq(kv_usage(kv), 0.4, 1e-12);
  cr_assert_eq(kv_blocks_needed(kv, &a, 64), 0);
  cr_assert_eq(kv_blocks_needed(kv, &a, 65), 1);
  cr_assert_eq(kv_blocks_needed(kv, &a, 10), 0);

  /* growing within the last block takes nothing */
  cr_assert(kv_allocate(kv, &a, &none_content, 0, 64));
  CHECK(kv, &a, &b);
  cr_assert_eq(a.n_blocks, 4);
  cr_assert_eq(kv_num_free(kv), 6);

  /* 7 blocks do not fit in 6: nothing changes */
  cr_assert_not(kv_allocate(kv, &b, &none_content, 0, 97));
  CHECK(kv, &a, &b);
  cr_assert_eq(b.n_blocks, 0);
  cr_assert_eq(kv_num_free(kv), 6);
  cr_assert_eq(kv_get_stats(kv)->alloc_failures, 1);

  cr_assert(kv_allocate(kv, &b, &none_content, 0, 96));
  CHECK(kv, &a, &b);
  cr_assert_eq(kv_num_free(kv), 0);
  cr_assert_float_eq(kv_usage(kv), 1.0, 1e-12);

  /* extending a running sequence fails atomically too */
  uint32_t before[4];
  memcpy(before, a.blocks, sizeof before);
  cr_assert_not(kv_allocate(kv, &a, &none_content, 0, 65));
  CHECK(kv, &a, &b);
  cr_assert_eq(a.n_blocks, 4);
  cr_assert_eq(memcmp(before, a.blocks, sizeof before), 0);
  cr_assert_eq(kv_get_stats(kv)->alloc_failures, 2);

  kv_seq_free(kv, &a);
  CHECK(kv, &a, &b);
  cr_assert_eq(a.n_blocks, 0);
  cr_assert_eq(kv_num_free(kv), 4);
  kv_seq_free(kv, &b);
  CHECK(kv, &a, &b);
  cr_assert_eq(kv_num_free(kv), 10);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(kv);
}

Test(kv, check_detects_broken_bookkeeping) {
  kv_mgr *kv = kv_new(8, 4, true);
  kv_seq a, fake;
  kv_seq_init(&a);
  cr_assert(kv_allocate(kv, &a, &none_content, 0, 8));
  sim_err err = {0};
  /* a live sequence left out of the list: ref counts do not match */
  cr_assert_eq(kv_check(kv, NULL, 0, &err), SIM_EINTERNAL);
  cr_assert(strstr(err.msg, "ref_cnt") != NULL, "%s", err.msg);
  /* a table naming a block twice */
  uint32_t dup[2] = {a.blocks[0], a.blocks[0]};
  fake = (kv_seq){.blocks = dup, .n_blocks = 2, .cap = 2};
  const kv_seq *list[] = {&fake};
  cr_assert_eq(kv_check(kv, list, 1, &err), SIM_EINTERNAL);
  cr_assert(strstr(err.msg, "twice") != NULL, "%s", err.msg);
  /* a free block claimed by a table */
  uint32_t stray[1] = {7};
  fake = (kv_seq){.blocks = stray, .n_blocks = 1, .cap = 1};
  const kv_seq *list2[] = {&a, &fake};
  cr_assert_eq(kv_check(kv, list2, 2, &err), SIM_EINTERNAL);
  cr_assert(strstr(err.msg, "block 7") != NULL, "%s", err.msg);
  /* a block that was handed out and freed, claimed by a table */
  kv_seq b;
  kv_seq_init(&b);
  cr_assert(kv_allocate(kv, &b, &none_content, 0, 4));
  uint32_t freed = b.blocks[0];
  kv_seq_free(kv, &b);
  uint32_t again[1] = {freed};
  fake = (kv_seq){.blocks = again, .n_blocks = 1, .cap = 1};
  cr_assert_eq(kv_check(kv, list2, 2, &err), SIM_EINTERNAL);
  cr_assert(strstr(err.msg, "is free") != NULL, "%s", err.msg);
  kv_seq_deinit(&b);
  kv_seq_free(kv, &a);
  kv_seq_deinit(&a);
  kv_free(kv);
}

/* Records follow the peak of blocks held at once, not the pool or the tokens
 * served: a million-block pool serving 10,000 sequences of up to 40 blocks,
 * at most 3 at a time, keeps at most 120 records (prefix caching on, content
 * nobody shares). */
Test(kv, records_follow_peak_use_not_pool_size) {
  kv_mgr *kv = kv_new(1000000, 16, true);
  cr_assert_eq(kv_num_records(kv), 0, "an idle pool has no block records");
  kv_seq s[3];
  for (int i = 0; i < 3; i++) kv_seq_init(&s[i]);
  rng r;
  rng_seed(&r, 5);
  uint32_t peak = 0;
  for (int n = 0; n < 10000; n++) {
    kv_seq *q = &s[n % 3];
    if (q->n_blocks) kv_seq_free(kv, q);
    kv_content c = {.kind = KV_CONTENT_NONE, .uid = (uint64_t)n + 1};
    cr_assert(kv_allocate(kv, q, &c, 0, 1 + (uint32_t)rng_below(&r, 640)));
    kv_commit(kv, q, &c, q->n_blocks * 16);
    uint32_t held = s[0].n_blocks + s[1].n_blocks + s[2].n_blocks;
    peak = held > peak ? held : peak;
    cr_assert_eq(kv_num_free(kv), 1000000 - held);
  }
  cr_assert_leq(kv_num_records(kv), peak);
  cr_assert_leq(peak, 120);
  CHECK(kv, &s[0], &s[1], &s[2]);
  for (int i = 0; i < 3; i++) {
    kv_seq_free(kv, &s[i]);
    kv_seq_deinit(&s[i]);
  }
  CHECK(kv, &s[0], &s[1], &s[2]);
  kv_free(kv);
}

/* ---- prefix hits ------------------------------------------------------------------ */

/* Runs one request of `tokens` known tokens to completion of its prefill. */
static void run_prefill(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t tokens) {
  uint32_t cached = kv_match_prefix(kv, c, tokens);
  cr_assert(kv_allocate(kv, s, c, cached, tokens));
  kv_commit(kv, s, c, tokens);
}

Test(kv, hit_on_free_but_cached_blocks) {
  kv_mgr *kv = kv_new(100, 16, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_content c1 = session_content(7, 1), c2 = session_content(7, 2);
  cr_assert_eq(kv_match_prefix(kv, &c1, 100), 0);
  cr_assert(kv_allocate(kv, &a, &c1, 0, 100));
  kv_commit(kv, &a, &c1, 100);
  CHECK(kv, &a, &b);
  cr_assert_eq(a.n_blocks, 7);
  cr_assert_eq(a.n_hashed, 6, "6 full blocks of 16 in 100 tokens");
  uint32_t a_blocks[7];
  memcpy(a_blocks, a.blocks, sizeof a_blocks);
  kv_seq_free(kv, &a);
  CHECK(kv, &a, &b);
  cr_assert_eq(kv_num_free(kv), 100);

  /* caps: at most num_tokens - 1, block aligned */
  cr_assert_eq(kv_match_prefix(kv, &c2, 96), 80);
  cr_assert_eq(kv_match_prefix(kv, &c2, 97), 96);
  cr_assert_eq(kv_match_prefix(kv, &c2, 1000), 96, "only 6 blocks were ever full");
  cr_assert_eq(kv_match_prefix(kv, &c2, 1), 0);
  cr_assert_eq(kv_match_prefix(kv, &c2, 0), 0);

  uint32_t hit = kv_match_prefix(kv, &c2, 110);
  cr_assert_eq(hit, 96);
  cr_assert(kv_allocate(kv, &b, &c2, hit, 110));
  CHECK(kv, &a, &b);
  cr_assert_eq(b.n_blocks, 7);
  cr_assert_eq(b.n_hashed, 6);
  for (int i = 0; i < 6; i++) cr_assert_eq(b.blocks[i], a_blocks[i], "block %d reused", i);
  cr_assert_eq(kv_num_free(kv), 93);
  /* b's new block came from the untouched part of the pool: nothing evicted */
  cr_assert_eq(kv_get_stats(kv)->evictions, 0);
  const kv_stats *st = kv_get_stats(kv);
  cr_assert_eq(st->lookups, 7);
  cr_assert_eq(st->hit_tokens, 80 + 96 + 96 + 96);
  cr_assert_eq(st->lookup_tokens, 100 + 96 + 97 + 1000 + 1 + 0 + 110);
  kv_seq_free(kv, &b);
  CHECK(kv, &a, &b);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(kv);
}

Test(kv, hit_on_blocks_of_a_running_sequence_is_shared) {
  kv_mgr *kv = kv_new(100, 16, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_content ca = session_content(3, 1), cb = session_content(3, 2);
  run_prefill(kv, &a, &ca, 100);
  CHECK(kv, &a, &b);
  uint32_t hit = kv_match_prefix(kv, &cb, 120);
  cr_assert_eq(hit, 96);
  cr_assert(kv_allocate(kv, &b, &cb, hit, 120));
  CHECK(kv, &a, &b);
  for (int i = 0; i < 6; i++) cr_assert_eq(b.blocks[i], a.blocks[i]);
  cr_assert_neq(b.blocks[6], a.blocks[6]);
  cr_assert_eq(b.n_blocks, 8);
  cr_assert_eq(kv_num_free(kv), 100 - 7 - 2, "shared blocks counted once");
  kv_seq_free(kv, &a); /* the shared prefix stays in use by b */
  CHECK(kv, &a, &b);
  cr_assert_eq(kv_num_free(kv), 100 - 8);
  kv_seq_free(kv, &b);
  CHECK(kv, &a, &b);
  cr_assert_eq(kv_num_free(kv), 100);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(kv);
}

Test(kv, no_hits_without_caching_or_shared_content) {
  kv_mgr *off = kv_new(50, 16, false), *on = kv_new(50, 16, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_content c = session_content(1, 1);
  run_prefill(off, &a, &c, 100);
  CHECK(off, &a);
  cr_assert_eq(a.n_hashed, 0);
  kv_seq_free(off, &a);
  cr_assert_eq(kv_match_prefix(off, &c, 100), 0);
  cr_assert_eq(kv_get_stats(off)->lookups, 0, "no lookups counted with caching off");

  /* content of unknown identity is unique to its request: nobody else hits
   * it, so it is not hashed as it fills; the request itself finds its blocks
   * again after a preemption, which registers them (kv_commit_own) */
  kv_content stranger = none_content;
  stranger.uid = none_content.uid + 1;
  run_prefill(on, &a, &none_content, 100);
  CHECK(on, &a);
  cr_assert_eq(a.n_hashed, 0);
  cr_assert_eq(kv_match_prefix(on, &none_content, 100), 0, "not hashed while it runs");
  kv_commit_own(on, &a, &none_content, 100); /* preempted */
  cr_assert_eq(a.n_hashed, 6);
  CHECK(on, &a);
  cr_assert_eq(kv_match_prefix(on, &stranger, 100), 0, "running");
  kv_seq_free(on, &a);
  CHECK(on, &a);
  cr_assert_eq(kv_match_prefix(on, &stranger, 100), 0, "freed");
  cr_assert_eq(kv_match_prefix(on, &none_content, 100), 96, "its own blocks, 6 full ones");
  /* different sessions share nothing */
  run_prefill(on, &a, &c, 100);
  kv_content other = session_content(2, 5);
  cr_assert_eq(kv_match_prefix(on, &other, 100), 0);
  cr_assert_eq(kv_match_prefix(on, &c, 100), 96);
  kv_seq_free(on, &a);
  CHECK(on, &a);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(off);
  kv_free(on);
}

Test(kv, eviction_is_lru_with_tail_blocks_first) {
  kv_mgr *kv = kv_new(8, 4, true);
  kv_seq a, b, c;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_seq_init(&c);
  kv_content s1 = session_content(1, 1), s2 = session_content(2, 2);
  run_prefill(kv, &a, &s1, 16); /* blocks 0..3 */
  run_prefill(kv, &b, &s2, 16); /* blocks 4..7 */
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(a.blocks[0], 0);
  cr_assert_eq(b.blocks[0], 4);
  kv_seq_free(kv, &a); /* queue: 3 2 1 0 */
  kv_seq_free(kv, &b); /* queue: 3 2 1 0 7 6 5 4 */
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(kv_match_prefix(kv, &s1, 17), 16);
  cr_assert_eq(kv_match_prefix(kv, &s2, 17), 16);

  cr_assert(kv_allocate(kv, &c, &none_content, 0, 4));
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(c.blocks[0], 3, "a's last block is evicted first");
  cr_assert_eq(kv_get_stats(kv)->evictions, 1);
  cr_assert_eq(kv_match_prefix(kv, &s1, 17), 12, "a lost only its tail block");
  cr_assert_eq(kv_match_prefix(kv, &s2, 17), 16);

  cr_assert(kv_allocate(kv, &c, &none_content, 0, 20));
  CHECK(kv, &a, &b, &c);
  uint32_t want[] = {3, 2, 1, 0, 7};
  for (int i = 0; i < 5; i++) cr_assert_eq(c.blocks[i], want[i], "pop %d", i);
  cr_assert_eq(kv_get_stats(kv)->evictions, 5);
  cr_assert_eq(kv_match_prefix(kv, &s1, 17), 0);
  cr_assert_eq(kv_match_prefix(kv, &s2, 17), 12, "b lost only its tail block");
  kv_seq_free(kv, &c);
  CHECK(kv, &a, &b, &c);

  /* a hit refreshes recency: reusing s2's prefix and freeing it moves it behind c's blocks */
  kv_seq d;
  kv_seq_init(&d);
  uint32_t hit = kv_match_prefix(kv, &s2, 13);
  cr_assert(kv_allocate(kv, &d, &s2, hit, 12));
  kv_seq_free(kv, &d);
  CHECK(kv, &a, &b, &c, &d);
  cr_assert(kv_allocate(kv, &c, &none_content, 0, 20)); /* 5 blocks: c's old ones */
  CHECK(kv, &a, &b, &c, &d);
  cr_assert_eq(kv_match_prefix(kv, &s2, 13), 12, "recently used prefix survives");
  kv_seq_free(kv, &c);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_seq_deinit(&c);
  kv_seq_deinit(&d);
  kv_free(kv);
}

Test(kv, cached_blocks_in_free_queue_are_set_aside) {
  kv_mgr *kv = kv_new(8, 4, true);
  kv_seq a, b, c;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_seq_init(&c);
  kv_content s1 = session_content(1, 1);
  run_prefill(kv, &a, &s1, 16);
  kv_seq_free(kv, &a);
  cr_assert(kv_allocate(kv, &b, &none_content, 0, 16)); /* takes 4..7, leaves a's cached 0..3 */
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(kv_num_free(kv), 4);
  uint32_t hit = kv_match_prefix(kv, &s1, 17);
  cr_assert_eq(hit, 16);
  /* 4 free, but all 4 are the cached blocks: one new block does not fit */
  cr_assert_not(kv_allocate(kv, &c, &s1, hit, 17));
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(c.n_blocks, 0);
  cr_assert_eq(kv_num_free(kv), 4);
  cr_assert_eq(kv_get_stats(kv)->evictions, 0);
  cr_assert_eq(kv_match_prefix(kv, &s1, 17), 16, "the failed call evicted nothing");
  cr_assert(kv_allocate(kv, &c, &s1, 16, 16));
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(kv_num_free(kv), 0);
  kv_seq_free(kv, &b);
  kv_seq_free(kv, &c);
  CHECK(kv, &a, &b, &c);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_seq_deinit(&c);
  kv_free(kv);
}

Test(kv, concurrent_duplicate_keeps_first_mapping) {
  kv_mgr *kv = kv_new(20, 4, true);
  kv_seq a, b, c;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_seq_init(&c);
  kv_content s = session_content(5, 1);
  /* both admitted before either computed anything: no hit for b */
  cr_assert(kv_allocate(kv, &a, &s, 0, 12));
  cr_assert(kv_allocate(kv, &b, &s, 0, 12));
  kv_commit(kv, &a, &s, 12);
  kv_commit(kv, &b, &s, 12);
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(b.n_hashed, 3);
  cr_assert_eq(kv_match_prefix(kv, &s, 13), 12);
  uint32_t hit = kv_match_prefix(kv, &s, 13);
  cr_assert(kv_allocate(kv, &c, &s, hit, 13));
  for (int i = 0; i < 3; i++) cr_assert_eq(c.blocks[i], a.blocks[i], "the first registration wins");
  kv_commit(kv, &c, &s, 13);
  CHECK(kv, &a, &b, &c);
  kv_seq_free(kv, &a);
  kv_seq_free(kv, &b);
  kv_seq_free(kv, &c);
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(kv_num_free(kv), 20);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_seq_deinit(&c);
  kv_free(kv);
}

/* ---- content kinds ------------------------------------------------------------------ */

Test(kv, hash_ids_512_share_exactly_the_common_hash_blocks) {
  kv_mgr *kv = kv_new(1000, 16, true);
  kv_seq a, b, c;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_seq_init(&c);
  uint64_t ida[] = {11, 22, 33}, idb[] = {11, 22, 44};
  kv_content ca = ids_content(ida, 3, 512, 1536, 1), cb = ids_content(idb, 3, 512, 1536, 2);
  run_prefill(kv, &a, &ca, 1536);
  CHECK(kv, &a, &b, &c);
  cr_assert_eq(a.n_hashed, 96);
  uint32_t hit = kv_match_prefix(kv, &cb, 1536);
  cr_assert_eq(hit, 1024, "two common ids = 64 blocks");
  cr_assert(kv_allocate(kv, &b, &cb, hit, 1536));
  CHECK(kv, &a, &b, &c);
  for (int i = 0; i < 64; i++) cr_assert_eq(b.blocks[i], a.blocks[i]);
  for (int i = 64; i < 96; i++)
    for (int j = 0; j < 96; j++) cr_assert_neq(b.blocks[i], a.blocks[j]);
  cr_assert_eq(kv_num_free(kv), 1000 - 96 - 32);
  kv_commit(kv, &b, &cb, 1536);
  CHECK(kv, &a, &b, &c);
  /* same ids, same prompt: everything but the last token */
  kv_content cc = ids_content(ida, 3, 512, 1536, 3);
  cr_assert_eq(kv_match_prefix(kv, &cc, 1536), 1520);
  /* the first id alone */
  uint64_t idc[] = {11, 77, 33};
  cc = ids_content(idc, 3, 512, 1536, 3);
  cr_assert_eq(kv_match_prefix(kv, &cc, 1536), 512);
  /* a different first id shares nothing, even with the rest equal */
  uint64_t idd[] = {10, 22, 33};
  cc = ids_content(idd, 3, 512, 1536, 3);
  cr_assert_eq(kv_match_prefix(kv, &cc, 1536), 0);
  /* a short prompt with the same ids: capped by its own length */
  cc = ids_content(ida, 2, 512, 700, 3);
  cr_assert_eq(kv_match_prefix(kv, &cc, 700), 688, "43 blocks: 43*16 = 688 <= 699");
  kv_seq_free(kv, &a);
  kv_seq_free(kv, &b);
  CHECK(kv, &a, &b, &c);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_seq_deinit(&c);
  kv_free(kv);
}

Test(kv, hash_ids_partial_hash_block_and_outputs_are_private) {
  kv_mgr *kv = kv_new(1000, 16, true);
  kv_seq d;
  kv_seq_init(&d);
  uint64_t ids[] = {11, 22};
  /* 1000 prompt tokens: the second id covers a partial hash block (488 tokens) */
  kv_content cd = ids_content(ids, 2, 512, 1000, 1);
  run_prefill(kv, &d, &cd, 1000);
  /* decode 40 tokens: their KV is written, but they are unique to d */
  cr_assert(kv_allocate(kv, &d, &cd, 0, 1040));
  kv_commit(kv, &d, &cd, 1039);
  CHECK(kv, &d);
  cr_assert_eq(d.n_hashed, 64);
  /* the same prompt: 62 full prompt blocks (992 tokens); block 62 crosses the prompt end */
  kv_content ce = ids_content(ids, 2, 512, 1000, 2);
  cr_assert_eq(kv_match_prefix(kv, &ce, 1000), 992);
  cr_assert_eq(kv_match_prefix(kv, &ce, 1040), 992, "d's outputs are not e's tokens");
  /* d itself resuming after a preemption: its own outputs hit */
  cr_assert_eq(kv_match_prefix(kv, &cd, 1040), 1024);
  /* a prompt whose ids cover more: block 62 is shareable for it, not for d */
  kv_content cf = ids_content(ids, 2, 512, 1040, 3);
  cr_assert_eq(kv_match_prefix(kv, &cf, 1040), 992);
  /* a different second id: only the first hash block */
  uint64_t ids2[] = {11, 23};
  kv_content cg = ids_content(ids2, 2, 512, 1000, 4);
  cr_assert_eq(kv_match_prefix(kv, &cg, 1000), 512);
  kv_seq_free(kv, &d);
  CHECK(kv, &d);
  cr_assert_eq(kv_match_prefix(kv, &ce, 1000), 992, "still cached after free");
  kv_seq_deinit(&d);
  kv_free(kv);
}

Test(kv, hash_ids_not_a_multiple_of_the_block) {
  /* 10-token hash blocks, 16-token KV blocks: block 0 = ids 0..1, block 1 = ids 1..3 */
  kv_mgr *kv = kv_new(100, 16, true);
  kv_seq a;
  kv_seq_init(&a);
  uint64_t ids[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  kv_content ca = ids_content(ids, 10, 10, 100, 1);
  run_prefill(kv, &a, &ca, 100);
  CHECK(kv, &a);
  uint64_t v[10];
  struct {
    int changed;
    uint32_t hit;
  } cases[] = {{9, 80}, {6, 48}, {5, 48}, {4, 32}, {3, 16}, {2, 16}, {1, 0}, {0, 0}};
  /* id k covers tokens [10k, 10k+10): changing it breaks the first block touching those tokens */
  for (size_t t = 0; t < SIM_ARRAY_LEN(cases); t++) {
    memcpy(v, ids, sizeof v);
    v[cases[t].changed] += 100;
    kv_content cv = ids_content(v, 10, 10, 100, 2);
    cr_assert_eq(kv_match_prefix(kv, &cv, 100), cases[t].hit, "id %d changed", cases[t].changed);
  }
  kv_content same = ids_content(ids, 10, 10, 100, 2);
  cr_assert_eq(kv_match_prefix(kv, &same, 100), 96);
  kv_seq_free(kv, &a);

  /* 4-token hash blocks, smaller than the 16-token KV blocks */
  uint64_t small[25], small2[25];
  for (int i = 0; i < 25; i++) small[i] = small2[i] = 1000 + (uint64_t)i;
  kv_content cs = ids_content(small, 25, 4, 100, 3);
  run_prefill(kv, &a, &cs, 100);
  CHECK(kv, &a);
  small2[8] = 5; /* tokens 32..35: block 2 */
  kv_content cs2 = ids_content(small2, 25, 4, 100, 4);
  cr_assert_eq(kv_match_prefix(kv, &cs2, 100), 32);
  kv_seq_free(kv, &a);
  CHECK(kv, &a);
  kv_seq_deinit(&a);
  kv_free(kv);
}

Test(kv, session_turn_two_hits_turn_one_prompt_and_output) {
  kv_mgr *kv = kv_new(200, 16, true);
  kv_seq t1, t2;
  kv_seq_init(&t1);
  kv_seq_init(&t2);
  kv_content c1 = session_content(42, 1), c2 = session_content(42, 2);
  /* turn 1: 100 prompt tokens, 50 output tokens; the last output's KV is never written */
  run_prefill(kv, &t1, &c1, 100);
  for (uint32_t n = 101; n <= 150; n++) {
    cr_assert(kv_allocate(kv, &t1, &c1, 0, n));
    kv_commit(kv, &t1, &c1, n - 1);
  }
  CHECK(kv, &t1, &t2);
  cr_assert_eq(t1.n_hashed, 9);
  kv_seq_free(kv, &t1);
  /* turn 2: the whole conversation so far + 60 new tokens */
  uint32_t hit = kv_match_prefix(kv, &c2, 210);
  cr_assert_eq(hit, 144, "floor(149 / 16) = 9 blocks");
  cr_assert(kv_allocate(kv, &t2, &c2, hit, 210));
  CHECK(kv, &t1, &t2);
  kv_commit(kv, &t2, &c2, 210);
  CHECK(kv, &t1, &t2);
  cr_assert_eq(t2.n_hashed, 13);
  kv_content other = session_content(43, 3);
  cr_assert_eq(kv_match_prefix(kv, &other, 210), 0);
  kv_seq_free(kv, &t2);
  kv_seq_deinit(&t1);
  kv_seq_deinit(&t2);
  kv_free(kv);
}

/* ---- randomized model check ---------------------------------------------------------- */

/* Test-side token identity, independent of kv.c's hashing: token j of content c. */
static uint64_t tmix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

/* Prefix identity of blocks 0..n-1 of c, into out[0..n-1] (n blocks of bt tokens). */
static void model_prefix_ids(const kv_content *c, uint32_t bt, uint32_t n, uint64_t *out) {
  uint64_t h = 0x1234;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t hi = (uint64_t)(i + 1) * bt;
    bool shared = c->kind == KV_CONTENT_SESSION ||
                  (hi <= c->prompt_tokens && hi <= (uint64_t)c->n_hash * c->hash_block_tokens);
    for (uint64_t j = (uint64_t)i * bt; j < hi; j++) {
      if (c->kind == KV_CONTENT_SESSION) {
        h = tmix(tmix(tmix(h, 1), c->session), j);
      } else if (shared) {
        /* an id names hash_block_tokens tokens: ids of another granularity are other tokens */
        h = tmix(tmix(tmix(tmix(h, 2), c->hash_block_tokens), c->hash_ids[j / c->hash_block_tokens]),
                 j % c->hash_block_tokens);
      } else {
        h = tmix(tmix(tmix(h, 3), c->uid), j);
      }
    }
    out[i] = h;
  }
}

typedef struct pseq {
  kv_seq s;
  kv_content c;
  uint64_t ids[64];
  bool running;
  uint32_t known;    /* tokens known (prompt + generated) */
  uint32_t computed; /* tokens with KV written */
  uint32_t sized;    /* tokens the table was sized for */
} pseq;

typedef struct world {
  kv_mgr *kv;
  uint32_t nb, bt;
  bool caching, model; /* model: track contents and predict every hit */
  rng r;
  pseq q[MAXSEQ];
  uint32_t nq;
  uint64_t next_uid;
  uint64_t *ident;    /* [nb] prefix identity of the content written in the block, 0 = none */
  bool *registered;   /* [nb] the model's view: this block is in the hash table */
  uint64_t scratch[4096];
  uint8_t *mark;      /* [nb] */
  uint64_t ops;
} world;

static void new_content(world *w, pseq *p) {
  uint32_t kind = (uint32_t)rng_below(&w->r, 3);
  p->c = (kv_content){.kind = (kv_content_kind)kind, .uid = ++w->next_uid};
  uint32_t prompt = 1 + (uint32_t)rng_below(&w->r, w->model ? 60 : 1000);
  if (kind == KV_CONTENT_SESSION) {
    p->c.session = rng_below(&w->r, 3);
  } else if (kind == KV_CONTENT_HASH_IDS) {
    static const uint32_t hbts[] = {1, 3, 4, 5, 8, 16, 512};
    uint32_t hbt = hbts[rng_below(&w->r, SIM_ARRAY_LEN(hbts))];
    if (!w->model) hbt = 64;
    uint32_t n = (uint32_t)SIM_MIN((prompt + hbt - 1) / hbt, 64u);
    if (rng_below(&w->r, 4) == 0 && n > 0) n -= (uint32_t)rng_below(&w->r, n + 1); /* ids cover less */
    uint32_t common = (uint32_t)rng_below(&w->r, n + 1);
    for (uint32_t k = 0; k < n; k++) p->ids[k] = k < common ? 100 + k : rng_below(&w->r, 4);
    p->c.hash_ids = p->ids;
    p->c.n_hash = n;
    p->c.hash_block_tokens = hbt;
    p->c.prompt_tokens = prompt;
  }
  p->known = prompt;
}

/* Number of leading blocks the model expects kv_match_prefix to find. */
static uint32_t model_hit_blocks(world *w, const kv_content *c, uint32_t num_tokens) {
  if (!w->caching || c->kind == KV_CONTENT_NONE || num_tokens == 0) return 0;
  uint32_t cap = (num_tokens - 1) / w->bt, n = 0;
  SIM_ASSERT(cap <= SIM_ARRAY_LEN(w->scratch));
  model_prefix_ids(c, w->bt, cap, w->scratch);
  for (; n < cap; n++) {
    bool found = false;
    for (uint32_t b = 0; b < w->nb && !found; b++) found = w->registered[b] && w->ident[b] == w->scratch[n];
    if (!found) break;
  }
  return n;
}

static void world_check(world *w) {
  kv_seq *list[MAXSEQ];
  for (uint32_t i = 0; i < w->nq; i++) list[i] = &w->q[i].s;
  check_all(w->kv, list, w->nq);
  memset(w->mark, 0, w->nb);
  uint32_t in_use = 0;
  for (uint32_t i = 0; i < w->nq; i++)
    for (uint32_t k = 0; k < w->q[i].s.n_blocks; k++) {
      uint32_t b = w->q[i].s.blocks[k];
      in_use += !w->mark[b];
      w->mark[b] = 1;
    }
  cr_assert_eq(kv_num_free(w->kv) + in_use, w->nb, "op %lu: free %u + in use %u != %u", (unsigned long)w->ops,
               kv_num_free(w->kv), in_use, w->nb);
}

/* Records contents written by a commit from block `from` up to the new full count. */
static void model_commit(world *w, pseq *p, uint32_t from_blocks) {
  if (!w->model || !w->caching || p->c.kind == KV_CONTENT_NONE) return;
  uint32_t full = p->computed / w->bt;
  if (full <= from_blocks) return;
  SIM_ASSERT(full <= SIM_ARRAY_LEN(w->scratch));
  model_prefix_ids(&p->c, w->bt, full, w->scratch);
  for (uint32_t i = from_blocks; i < full; i++) {
    uint32_t b = p->s.blocks[i];
    w->ident[b] = w->scratch[i];
    bool dup = false;
    for (uint32_t x = 0; x < w->nb && !dup; x++) dup = w->registered[x] && w->ident[x] == w->scratch[i];
    w->registered[b] = !dup; /* kv_commit keeps an existing mapping */
  }
}

static void op_admit(world *w, pseq *p) {
  if (rng_below(&w->r, 3) == 0 && p->c.uid) {
    /* resume after preemption: same content, tokens generated so far */
    p->known = SIM_MAX(p->known, p->sized);
  } else {
    new_content(w, p);
  }
  uint32_t hit = kv_match_prefix(w->kv, &p->c, p->known);
  cr_assert_eq(hit % w->bt, 0);
  cr_assert(hit == 0 || hit < p->known);
  if (w->model) {
    uint32_t want = model_hit_blocks(w, &p->c, p->known);
    cr_assert_eq(hit / w->bt, want, "op %lu: kind %d, %u known tokens: hit %u blocks, model %u", (unsigned long)w->ops,
                 (int)p->c.kind, p->known, hit / w->bt, want);
  }
  uint32_t total = hit + 1 + (uint32_t)rng_below(&w->r, p->known - hit);
  uint32_t free_before = kv_num_free(w->kv);
  if (!kv_allocate(w->kv, &p->s, &p->c, hit, total)) {
    cr_assert_eq(p->s.n_blocks, 0);
    cr_assert_eq(kv_num_free(w->kv), free_before);
    return;
  }
  uint32_t n_hit = hit / w->bt;
  cr_assert_eq(p->s.n_blocks, (total + w->bt - 1) / w->bt);
  cr_assert_eq(p->s.n_hashed, n_hit);
  if (w->model) {
    if (n_hit) {
      model_prefix_ids(&p->c, w->bt, n_hit, w->scratch);
      for (uint32_t i = 0; i < n_hit; i++)
        cr_assert_eq(w->ident[p->s.blocks[i]], w->scratch[i], "op %lu: block %u hit holds other content",
                     (unsigned long)w->ops, i);
    }
    for (uint32_t i = n_hit; i < p->s.n_blocks; i++) { /* fresh blocks: content overwritten */
      w->ident[p->s.blocks[i]] = 0;
      w->registered[p->s.blocks[i]] = false;
    }
  }
  p->running = true;
  p->computed = hit;
  p->sized = total;
}

static void op_running(world *w, pseq *p) {
  uint32_t what = (uint32_t)rng_below(&w->r, 10);
  if (what < 4) { /* compute some tokens */
    uint32_t from = p->computed / w->bt;
    p->computed += (uint32_t)rng_below(&w->r, p->sized - p->computed + 1);
    kv_commit(w->kv, &p->s, &p->c, p->computed);
    if (w->caching && p->c.kind != KV_CONTENT_NONE) cr_assert_eq(p->s.n_hashed, p->computed / w->bt);
    model_commit(w, p, from);
  } else if (what < 8) { /* grow (decode or next chunk) */
    uint32_t old_blocks = p->s.n_blocks, free_before = kv_num_free(w->kv);
    uint32_t total = p->sized + 1 + (uint32_t)rng_below(&w->r, w->model ? 12 : 64);
    uint32_t need = kv_blocks_needed(w->kv, &p->s, total);
    if (kv_allocate(w->kv, &p->s, &p->c, 0, total)) {
      cr_assert_eq(p->s.n_blocks, old_blocks + need);
      cr_assert_eq(kv_num_free(w->kv), free_before - need);
      if (w->model)
        for (uint32_t i = old_blocks; i < p->s.n_blocks; i++) {
          w->ident[p->s.blocks[i]] = 0;
          w->registered[p->s.blocks[i]] = false;
        }
      p->sized = total;
      p->known = SIM_MAX(p->known, total);
    } else {
      cr_assert(need > free_before);
      cr_assert_eq(p->s.n_blocks, old_blocks);
      cr_assert_eq(kv_num_free(w->kv), free_before);
    }
  } else { /* finish or preempt */
    kv_seq_free(w->kv, &p->s);
    cr_assert_eq(p->s.n_blocks, 0);
    p->running = false;
  }
}

static void world_step(world *w) {
  w->ops++;
  pseq *p = &w->q[rng_below(&w->r, w->nq)];
  if (rng_below(&w->r, 20) == 0) { /* a lookup without admission */
    pseq *o = &w->q[rng_below(&w->r, w->nq)];
    if (o->c.uid) {
      uint32_t n = (uint32_t)rng_below(&w->r, o->known + 1);
      uint32_t hit = kv_match_prefix(w->kv, &o->c, n);
      if (w->model) cr_assert_eq(hit / w->bt, model_hit_blocks(w, &o->c, n));
    }
    return;
  }
  if (p->running)
    op_running(w, p);
  else
    op_admit(w, p);
}

static void world_init(world *w, uint32_t nb, uint32_t bt, bool caching, bool model, uint32_t nq, uint64_t seed) {
  memset(w, 0, sizeof *w);
  w->kv = kv_new(nb, bt, caching);
  w->nb = nb;
  w->bt = bt;
  w->caching = caching;
  w->model = model;
  w->nq = nq;
  rng_seed(&w->r, seed);
  for (uint32_t i = 0; i < nq; i++) kv_seq_init(&w->q[i].s);
  w->ident = sim_calloc(nb, sizeof *w->ident);
  w->registered = sim_calloc(nb, sizeof *w->registered);
  w->mark = sim_calloc(nb, 1);
}

static void world_deinit(world *w) {
  for (uint32_t i = 0; i < w->nq; i++) {
    kv_seq_free(w->kv, &w->q[i].s);
    kv_seq_deinit(&w->q[i].s);
  }
  cr_assert_eq(kv_num_free(w->kv), w->nb);
  kv_free(w->kv);
  free(w->ident);
  free(w->registered);
  free(w->mark);
}

Test(kv, randomized_ops_keep_invariants_and_match_the_model) {
  static const struct {
    uint32_t nb, bt, nq;
    bool caching;
  } cfgs[] = {{1, 4, 4, true}, {3, 4, 8, true}, {12, 4, 16, true}, {40, 4, 24, true}, {25, 1, 12, true},
              {30, 5, 12, true}, {40, 16, 12, true}, {20, 4, 12, false}};
  uint64_t hits = 0, evictions = 0, failures = 0;
  for (size_t k = 0; k < SIM_ARRAY_LEN(cfgs); k++) {
    static world w;
    world_init(&w, cfgs[k].nb, cfgs[k].bt, cfgs[k].caching, true, cfgs[k].nq, 1000 + k);
    for (int i = 0; i < 20000; i++) {
      world_step(&w);
      world_check(&w);
    }
    hits += kv_get_stats(w.kv)->hit_tokens;
    evictions += kv_get_stats(w.kv)->evictions;
    failures += kv_get_stats(w.kv)->alloc_failures;
    world_deinit(&w);
  }
  /* the mix exercised what it is meant to */
  cr_assert_gt(hits, 1000);
  cr_assert_gt(evictions, 1000);
  cr_assert_gt(failures, 100);
}

Test(kv, million_ops_stress) {
  static world w;
  world_init(&w, 800, 16, true, false, MAXSEQ, 77);
  for (int i = 0; i < 1000000; i++) {
    world_step(&w);
    if (i % 10000 == 0) world_check(&w);
  }
  world_check(&w);
  const kv_stats *st = kv_get_stats(w.kv);
  cr_assert_gt(st->hit_tokens, 0);
  cr_assert_gt(st->evictions, 0);
  cr_assert_gt(st->alloc_failures, 0);
  cr_assert_leq(st->hit_tokens, st->lookup_tokens);
  world_deinit(&w);
}

static void check_ok(const kv_mgr *kv, const kv_seq *const *list, size_t n) {
  sim_err err = {0};
  cr_assert_eq(kv_check(kv, list, n, &err), SIM_OK, "%s", err.msg);
}

/* Records follow the hashed blocks: none for blocks handed out and freed unhashed, one from kv_commit_own until the
 * block is evicted, slots reused; kv_check refuses a record left on an anonymous block. */
Test(kv, records_only_while_hashed) {
  kv_mgr *kv = kv_new(64, 1, true);
  kv_seq a, b;
  kv_seq_init(&a);
  kv_seq_init(&b);
  kv_content ca = {.kind = KV_CONTENT_NONE, .uid = 1}, cb = {.kind = KV_CONTENT_NONE, .uid = 2};
  const kv_seq *la[] = {&a}, *lb[] = {&b};
  cr_assert(kv_allocate(kv, &a, &ca, 0, 40));
  kv_commit(kv, &a, &ca, 40); /* nothing to share: no hash, no record */
  cr_assert_eq(kv->n_rec, 0);
  check_ok(kv, la, 1);
  kv_commit_own(kv, &a, &ca, 30); /* preempted: its first 30 blocks hashed for itself */
  cr_assert_eq(kv->n_rec, 30);
  check_ok(kv, la, 1);
  kv_seq_free(kv, &a); /* 10 anonymous, 30 cached */
  cr_assert_eq(kv->n_rec, 30, "cached free blocks keep their records");
  check_ok(kv, NULL, 0);
  cr_assert(kv_allocate(kv, &b, &cb, 0, 60)); /* 34 anonymous, then 26 cached ones evicted */
  cr_assert_eq(kv_get_stats(kv)->evictions, 26);
  cr_assert_eq(kv->n_rec, 4, "an evicted block is anonymous again: no record");
  check_ok(kv, lb, 1);
  cr_assert_eq(kv_match_prefix(kv, &ca, 100), 4, "a's 4 first blocks are still cached");
  kv_seq_free(kv, &b);
  check_ok(kv, NULL, 0);
  uint32_t hit = kv_match_prefix(kv, &ca, 20);
  cr_assert_eq(hit, 4);
  cr_assert(kv_allocate(kv, &a, &ca, hit, 20)); /* resumes on its 4 cached blocks, 16 new ones */
  cr_assert_eq(kv->n_rec, 4);
  check_ok(kv, la, 1);
  kv_commit_own(kv, &a, &ca, 20);
  cr_assert_eq(kv->n_rec, 20);
  cr_assert_leq(kv->blk_used, 30, "slots are reused");
  check_ok(kv, la, 1);
  kv_seq_free(kv, &a);
  check_ok(kv, NULL, 0);
  cr_assert_eq(kv->n_rec, 20, "all 20 cached once free");

  /* a record left on an anonymous block */
  SIM_ASSERT(kv->n_anon > 0);
  uint32_t x = kv->anon[0];
  kv->rec_of[x] = 0;
  kv->kept[x >> 6] |= 1ull << (x & 63);
  sim_err err = {0};
  cr_assert_eq(kv_check(kv, NULL, 0, &err), SIM_EINTERNAL);
  cr_assert(strstr(err.msg, "has a record") != NULL || strstr(err.msg, "record slot") != NULL, "%s", err.msg);
  kv->kept[x >> 6] &= ~(1ull << (x & 63));
  check_ok(kv, NULL, 0);
  kv_seq_deinit(&a);
  kv_seq_deinit(&b);
  kv_free(kv);
}
