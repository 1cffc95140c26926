/* kv_reference.h: the block manager as it was before its memory followed use
 * (servesim 19ba9ef, sim/serve/kv.c): a record for every block and vLLM's free
 * queue of every block, linked. test_kv.c runs it beside the compact manager
 * on random operations: hits, evictions and free counts must agree at every
 * step (the compact queue changes which id an anonymous block gets, nothing
 * else). Included by test_kv.c only; everything here is static. */
#ifndef TEST_KV_REFERENCE_H
#define TEST_KV_REFERENCE_H

#include <stdlib.h>
#include <string.h>

#include "serve/kv.h"

typedef struct ref_block {
  uint64_t hash;    /* chained hash of the full block's content, 0 = none */
  uint32_t ref_cnt; /* block-table entries referencing this block */
  uint32_t prev;    /* free queue links (block ids, num_blocks = sentinel) */
  uint32_t next;
  uint8_t in_free;  /* 1 while in the free queue */
} ref_block;

typedef struct ref_mgr ref_mgr;
struct ref_mgr {
  uint32_t num_blocks;   /* usable blocks */
  uint32_t block_tokens; /* tokens per block */
  bool caching;          /* prefix caching on */
  uint32_t num_free;     /* free queue length, blocks */
  ref_block *blk;         /* [num_blocks + 1], last = free-queue sentinel */
  uint64_t *ht_key;      /* [ht_cap] hash, 0 = empty slot */
  uint32_t *ht_val;      /* [ht_cap] block id */
  uint32_t ht_cap;       /* slots, power of two >= 2 x num_blocks */
  uint32_t ht_shift;     /* 64 - log2(ht_cap): home slot = (key * K) >> shift */
  uint32_t ht_n;         /* occupied slots */
  kv_stats stats;
};

/* ---- hashing ---------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xbf58476d1ce4e5b9ull;
  z ^= z >> 27;
  z *= 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

enum {
  TAG_SESSION = 0x5e5510, /* domain separators: contents of different kinds never collide by construction */
  TAG_UID = 0x0d1d,
  TAG_IDS = 0x1d5,
};

static uint64_t chain_hash(uint64_t parent, uint64_t content) {
  uint64_t h = mix64(parent ^ rotl64(content, 29) ^ 0x9e3779b97f4a7c15ull);
  return h ? h : 1;
}

static uint64_t indexed_content(uint64_t tag, uint64_t key, uint64_t i) {
  return mix64(mix64(key ^ mix64(tag)) + i);
}

/* Identity of block i of content c. */
static uint64_t block_content(const ref_mgr *kv, const kv_content *c, uint32_t i) {
  uint64_t bt = kv->block_tokens, lo = (uint64_t)i * bt, hi = lo + bt; /* tokens [lo, hi) */
  if (c->kind == KV_CONTENT_SESSION) return indexed_content(TAG_SESSION, c->session, i);
  if (c->kind == KV_CONTENT_NONE) return indexed_content(TAG_UID, c->uid, i);
  SIM_ASSERT(c->kind == KV_CONTENT_HASH_IDS);
  SIM_ASSERT(c->n_hash == 0 || c->hash_ids);
  uint64_t hbt = c->hash_block_tokens;
  SIM_ASSERT(hbt > 0);
  uint64_t limit = SIM_MIN((uint64_t)c->prompt_tokens, (uint64_t)c->n_hash * hbt);
  if (hi > limit) return indexed_content(TAG_UID, c->uid, i);
  uint64_t x = mix64(TAG_IDS ^ (hbt << 32));
  for (uint64_t k = lo / hbt; k <= (hi - 1) / hbt; k++) x = mix64(x ^ c->hash_ids[k]);
  return mix64(x + lo % hbt); /* offset: implied by the chain depth too, kept for a self-contained identity */
}

static bool hashable(const ref_mgr *kv, const kv_content *c) {
  return kv->caching && c->kind != KV_CONTENT_NONE;
}

/* ---- hash table --------------------------------------------------------------- */

static inline uint32_t ht_home(const ref_mgr *kv, uint64_t key) {
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> kv->ht_shift);
}

/* Slot holding key, or UINT32_MAX. */
static uint32_t ht_find(const ref_mgr *kv, uint64_t key) {
  uint32_t mask = kv->ht_cap - 1;
  for (uint32_t i = ht_home(kv, key);; i = (i + 1) & mask) {
    if (kv->ht_key[i] == key) return i;
    if (kv->ht_key[i] == 0) return UINT32_MAX;
  }
}

static void ht_insert(ref_mgr *kv, uint64_t key, uint32_t val) {
  uint32_t mask = kv->ht_cap - 1, i = ht_home(kv, key);
  while (kv->ht_key[i]) {
    SIM_ASSERT(kv->ht_key[i] != key);
    i = (i + 1) & mask;
  }
  kv->ht_key[i] = key;
  kv->ht_val[i] = val;
  kv->ht_n++;
  SIM_ASSERT(kv->ht_n <= kv->num_blocks);
}

/* Backward-shift deletion: pull each later entry of the run into the hole
 * when its home slot does not lie cyclically in (hole, entry]. */
static void ht_remove_slot(ref_mgr *kv, uint32_t hole) {
  uint32_t mask = kv->ht_cap - 1;
  for (uint32_t j = (hole + 1) & mask; kv->ht_key[j]; j = (j + 1) & mask) {
    uint32_t dist_home = (j - ht_home(kv, kv->ht_key[j])) & mask;
    uint32_t dist_hole = (j - hole) & mask;
    if (dist_home >= dist_hole) {
      kv->ht_key[hole] = kv->ht_key[j];
      kv->ht_val[hole] = kv->ht_val[j];
      hole = j;
    }
  }
  kv->ht_key[hole] = 0;
  kv->ht_n--;
}

/* ---- free queue ------------------------------------------------------------------ */

static void fq_remove(ref_mgr *kv, uint32_t b) {
  ref_block *x = &kv->blk[b];
  SIM_ASSERT(x->in_free);
  kv->blk[x->prev].next = x->next;
  kv->blk[x->next].prev = x->prev;
  x->in_free = 0;
  kv->num_free--;
}

static void fq_append(ref_mgr *kv, uint32_t b) {
  uint32_t s = kv->num_blocks;
  ref_block *x = &kv->blk[b];
  SIM_ASSERT(!x->in_free && x->ref_cnt == 0);
  x->prev = kv->blk[s].prev;
  x->next = s;
  kv->blk[x->prev].next = b;
  kv->blk[s].prev = b;
  x->in_free = 1;
  kv->num_free++;
}

/* ---- public API --------------------------------------------------------------------- */

static ref_mgr *ref_new(uint32_t num_blocks, uint32_t block_tokens, bool prefix_caching) {
  SIM_ASSERT(num_blocks >= 1 && num_blocks < UINT32_MAX / 4);
  SIM_ASSERT(block_tokens >= 1);
  ref_mgr *kv = sim_calloc(1, sizeof *kv);
  kv->num_blocks = num_blocks;
  kv->block_tokens = block_tokens;
  kv->caching = prefix_caching;
  kv->blk = sim_calloc((size_t)num_blocks + 1, sizeof *kv->blk);
  uint32_t s = num_blocks;
  kv->blk[s].prev = kv->blk[s].next = s;
  for (uint32_t b = 0; b < num_blocks; b++) fq_append(kv, b); /* initial order: by id */
  uint32_t log2 = 4;
  while ((1ull << log2) < 2ull * num_blocks) log2++;
  kv->ht_cap = 1u << log2;
  kv->ht_shift = 64 - log2;
  kv->ht_key = sim_calloc(kv->ht_cap, sizeof *kv->ht_key);
  kv->ht_val = sim_calloc(kv->ht_cap, sizeof *kv->ht_val);
  return kv;
}

static void ref_free(ref_mgr *kv) {
  if (!kv) return;
  free(kv->blk);
  free(kv->ht_key);
  free(kv->ht_val);
  free(kv);
}

static uint32_t ref_num_free(const ref_mgr *kv) { return kv->num_free; }
static const kv_stats *ref_get_stats(const ref_mgr *kv) { return &kv->stats; }


static void ref_seq_deinit(kv_seq *s) {
  SIM_ASSERT(s->n_blocks == 0);
  free(s->blocks);
  memset(s, 0, sizeof *s);
}

static void seq_set_cap(kv_seq *s, uint64_t c) {
  if (c > UINT32_MAX) c = UINT32_MAX;
  s->blocks = sim_realloc(s->blocks, (size_t)c * sizeof *s->blocks);
  s->cap = (uint32_t)c;
}

/* Growth while allocating: doubling. */
static void seq_reserve(kv_seq *s, uint32_t need) {
  if (need <= s->cap) return;
  uint64_t c = s->cap ? s->cap : 8;
  while (c < need) c *= 2;
  seq_set_cap(s, c);
}

static uint32_t blocks_for(const ref_mgr *kv, uint32_t tokens) {
  return (uint32_t)(((uint64_t)tokens + kv->block_tokens - 1) / kv->block_tokens);
}


static uint32_t ref_match_prefix(ref_mgr *kv, const kv_content *c, uint32_t num_tokens) {
  if (!kv->caching) return 0;
  kv->stats.lookups++;
  kv->stats.lookup_tokens += num_tokens;
  if (num_tokens == 0) return 0;
  uint32_t max_blocks = (num_tokens - 1) / kv->block_tokens, n = 0;
  uint64_t h = 0;
  for (; n < max_blocks; n++) {
    h = chain_hash(h, block_content(kv, c, n));
    if (ht_find(kv, h) == UINT32_MAX) break;
  }
  uint32_t hit = n * kv->block_tokens;
  kv->stats.hit_tokens += hit;
  return hit;
}


static bool ref_allocate_fit(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens,
                             uint32_t fit_tokens);
static bool ref_allocate(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens) {
  return ref_allocate_fit(kv, s, c, cached_tokens, total_tokens, total_tokens);
}

static bool ref_allocate_fit(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens,
                     uint32_t fit_tokens) {
  uint32_t bt = kv->block_tokens, n_cached = 0, cached_in_free = 0;
  uint64_t h = 0;
  if (s->n_blocks == 0 && cached_tokens > 0) {
    SIM_ASSERT(kv->caching);
    SIM_ASSERT(cached_tokens % bt == 0 && cached_tokens <= total_tokens);
    n_cached = cached_tokens / bt;
    seq_reserve(s, blocks_for(kv, total_tokens));
    /* Re-derive the prefix into the (still empty) table; nothing changes yet. */
    for (uint32_t i = 0; i < n_cached; i++) {
      h = chain_hash(h, block_content(kv, c, i));
      uint32_t slot = ht_find(kv, h);
      SIM_ASSERT(slot != UINT32_MAX); /* matched in this same step: must still be cached */
      uint32_t b = kv->ht_val[slot];
      s->blocks[i] = b;
      cached_in_free += kv->blk[b].in_free;
    }
  }
  uint32_t want = blocks_for(kv, total_tokens), have = s->n_blocks + n_cached;
  uint32_t n_new = want > have ? want - have : 0;
  uint32_t fit = blocks_for(kv, fit_tokens > total_tokens ? fit_tokens : total_tokens);
  uint32_t n_fit = fit > have ? fit - have : 0;
  if (kv->num_free - cached_in_free < n_fit) {
    kv->stats.alloc_failures++;
    return false;
  }
  seq_reserve(s, have + n_new);
  for (uint32_t i = 0; i < n_cached; i++) {
    uint32_t b = s->blocks[i];
    if (kv->blk[b].ref_cnt == 0) fq_remove(kv, b);
    kv->blk[b].ref_cnt++;
  }
  if (n_cached) {
    s->n_blocks = n_cached;
    s->n_hashed = n_cached;
    s->last_hash = h;
  }
  uint32_t sentinel = kv->num_blocks;
  for (uint32_t i = 0; i < n_new; i++) {
    uint32_t b = kv->blk[sentinel].next;
    SIM_ASSERT(b != sentinel);
    fq_remove(kv, b);
    ref_block *x = &kv->blk[b];
    if (x->hash) { /* evict the cached content */
      uint32_t slot = ht_find(kv, x->hash);
      SIM_ASSERT(slot != UINT32_MAX && kv->ht_val[slot] == b);
      ht_remove_slot(kv, slot);
      x->hash = 0;
      kv->stats.evictions++;
    }
    x->ref_cnt = 1;
    s->blocks[s->n_blocks++] = b;
  }
  return true;
}

static void commit(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens);

static void ref_commit(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
  if (hashable(kv, c)) commit(kv, s, c, computed_tokens);
}

static void ref_commit_own(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
  if (kv->caching) commit(kv, s, c, computed_tokens);
}

static void commit(ref_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
  SIM_ASSERT((uint64_t)computed_tokens <= (uint64_t)s->n_blocks * kv->block_tokens);
  uint32_t full = computed_tokens / kv->block_tokens;
  uint64_t h = s->last_hash;
  for (uint32_t i = s->n_hashed; i < full; i++) {
    h = chain_hash(h, block_content(kv, c, i));
    uint32_t b = s->blocks[i];
    SIM_ASSERT(kv->blk[b].hash == 0 && kv->blk[b].ref_cnt == 1);
    if (ht_find(kv, h) == UINT32_MAX) { /* else: a duplicate, see the file comment */
      kv->blk[b].hash = h;
      ht_insert(kv, h, b);
    }
  }
  if (full > s->n_hashed) {
    s->n_hashed = full;
    s->last_hash = h;
  }
}

static void ref_seq_free(ref_mgr *kv, kv_seq *s) {
  for (uint32_t i = s->n_blocks; i-- > 0;) {
    uint32_t b = s->blocks[i];
    SIM_ASSERT(kv->blk[b].ref_cnt > 0);
    if (--kv->blk[b].ref_cnt == 0) fq_append(kv, b);
  }
  s->n_blocks = 0;
  s->n_hashed = 0;
  s->last_hash = 0;
}


#endif
