/* kv.c: paged KV-cache block manager with prefix caching (vLLM V1 semantics).
 *
 * Data structures (all sized once in kv_new, no allocation per call):
 *   - blk[0 .. num_blocks]: one record per block (ref count, hash, links of
 *     the free queue, "in free queue" flag). blk[num_blocks] is the sentinel
 *     of the intrusive doubly-linked free queue: sentinel.next is the head
 *     (next to evict), sentinel.prev the tail (most recently freed).
 *   - an open-addressing hash table hash -> block id, linear probing, power
 *     of two capacity >= 2 x num_blocks. A block carries at most one hash, so
 *     the load factor never exceeds 1/2. Deletion shifts later entries of the
 *     probe run back (no tombstones), so probe lengths never degrade over a
 *     long run.
 *
 * Hashes: a full block's hash is mix(parent_hash, content(block)), parent of
 * block 0 being 0; a computed hash of 0 is replaced by 1, so 0 means "none".
 * content() depends on kv_content:
 *   - SESSION: block i is (session, i): every turn of a session is one stream.
 *   - HASH_IDS: block i (tokens [i*bt, (i+1)*bt)) is shareable when all its
 *     tokens are < prompt_tokens and < n_hash * hash_block_tokens; its
 *     identity is then hash_block_tokens, the ids covering its tokens and
 *     its offset inside the first of them (ids of another granularity name
 *     other tokens). Otherwise it is (uid, i): unique to the request, and so
 *     is every later block through the chain. hash_block_tokens need not be
 *     a multiple of block_tokens, nor larger.
 *   - NONE: every block is (uid, i): shared with nobody. Only the request
 *     itself could ever hit such a block, after a preemption, so its hashes
 *     are registered when it is preempted (kv_commit_own) rather than as its
 *     blocks fill: the same hits as vLLM's cache keyed on real token ids,
 *     without a hash-table insert and eviction for every block of every
 *     request.
 * Blocks keyed on uid (NONE content, and HASH_IDS blocks past the ids) are
 * cached like any other.
 *
 * Invariants beyond those of kv.h (checked by kv_check):
 *   - in_free == (ref_cnt == 0);
 *   - the hash table holds exactly the blocks with hash != 0, each under its
 *     own hash, reachable from its home slot without crossing an empty slot;
 *   - for every sequence, blocks at table index >= n_hashed have no hash and
 *     ref_cnt 1 (freshly allocated, private). Only hashed blocks are shared.
 *
 * Concurrent duplicates: if two sequences compute the same block content at
 * the same time, the second kv_commit finds the hash already registered (to
 * the other block) and keeps that mapping; its own block stays unhashed and
 * is simply freed (uncached) later. The chain state still advances, so the
 * following blocks of that sequence are registered normally.
 *
 * Stats: kv_match_prefix counts every lookup it answers with caching on
 * (lookups, lookup_tokens = num_tokens asked for, hit_tokens = returned). */
#include "serve/kv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kv_block {
  uint64_t hash;    /* chained hash of the full block's content, 0 = none */
  uint32_t ref_cnt; /* block-table entries referencing this block */
  uint32_t prev;    /* free queue links (block ids, num_blocks = sentinel) */
  uint32_t next;
  uint8_t in_free;  /* 1 while in the free queue */
} kv_block;

struct kv_mgr {
  uint32_t num_blocks;   /* usable blocks */
  uint32_t block_tokens; /* tokens per block */
  bool caching;          /* prefix caching on */
  uint32_t num_free;     /* free queue length, blocks */
  kv_block *blk;         /* [num_blocks + 1], last = free-queue sentinel */
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
static uint64_t block_content(const kv_mgr *kv, const kv_content *c, uint32_t i) {
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

static bool hashable(const kv_mgr *kv, const kv_content *c) {
  return kv->caching && c->kind != KV_CONTENT_NONE;
}

/* ---- hash table --------------------------------------------------------------- */

static inline uint32_t ht_home(const kv_mgr *kv, uint64_t key) {
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> kv->ht_shift);
}

/* Slot holding key, or UINT32_MAX. */
static uint32_t ht_find(const kv_mgr *kv, uint64_t key) {
  uint32_t mask = kv->ht_cap - 1;
  for (uint32_t i = ht_home(kv, key);; i = (i + 1) & mask) {
    if (kv->ht_key[i] == key) return i;
    if (kv->ht_key[i] == 0) return UINT32_MAX;
  }
}

static void ht_insert(kv_mgr *kv, uint64_t key, uint32_t val) {
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
static void ht_remove_slot(kv_mgr *kv, uint32_t hole) {
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

static void fq_remove(kv_mgr *kv, uint32_t b) {
  kv_block *x = &kv->blk[b];
  SIM_ASSERT(x->in_free);
  kv->blk[x->prev].next = x->next;
  kv->blk[x->next].prev = x->prev;
  x->in_free = 0;
  kv->num_free--;
}

static void fq_append(kv_mgr *kv, uint32_t b) {
  uint32_t s = kv->num_blocks;
  kv_block *x = &kv->blk[b];
  SIM_ASSERT(!x->in_free && x->ref_cnt == 0);
  x->prev = kv->blk[s].prev;
  x->next = s;
  kv->blk[x->prev].next = b;
  kv->blk[s].prev = b;
  x->in_free = 1;
  kv->num_free++;
}

/* ---- public API --------------------------------------------------------------------- */

kv_mgr *kv_new(uint32_t num_blocks, uint32_t block_tokens, bool prefix_caching) {
  SIM_ASSERT(num_blocks >= 1 && num_blocks < UINT32_MAX / 4);
  SIM_ASSERT(block_tokens >= 1);
  kv_mgr *kv = sim_calloc(1, sizeof *kv);
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

void kv_free(kv_mgr *kv) {
  if (!kv) return;
  free(kv->blk);
  free(kv->ht_key);
  free(kv->ht_val);
  free(kv);
}

uint32_t kv_num_blocks(const kv_mgr *kv) { return kv->num_blocks; }
uint32_t kv_num_free(const kv_mgr *kv) { return kv->num_free; }
uint32_t kv_block_tokens(const kv_mgr *kv) { return kv->block_tokens; }
double kv_usage(const kv_mgr *kv) { return 1.0 - (double)kv->num_free / (double)kv->num_blocks; }
const kv_stats *kv_get_stats(const kv_mgr *kv) { return &kv->stats; }

void kv_seq_init(kv_seq *s) { memset(s, 0, sizeof *s); }

void kv_seq_deinit(kv_seq *s) {
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

static uint32_t blocks_for(const kv_mgr *kv, uint32_t tokens) {
  return (uint32_t)(((uint64_t)tokens + kv->block_tokens - 1) / kv->block_tokens);
}

void kv_seq_reserve(const kv_mgr *kv, kv_seq *s, uint64_t tokens) {
  uint64_t n = (tokens + kv->block_tokens - 1) / kv->block_tokens;
  if (n > s->cap) seq_set_cap(s, n); /* exact: the final length is known */
}

uint32_t kv_match_prefix(kv_mgr *kv, const kv_content *c, uint32_t num_tokens) {
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

uint32_t kv_blocks_needed(const kv_mgr *kv, const kv_seq *s, uint32_t total_tokens) {
  uint32_t want = blocks_for(kv, total_tokens);
  return want > s->n_blocks ? want - s->n_blocks : 0;
}

bool kv_allocate(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens) {
  return kv_allocate_fit(kv, s, c, cached_tokens, total_tokens, total_tokens);
}

bool kv_allocate_fit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens,
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
    kv_block *x = &kv->blk[b];
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

static void commit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens);

void kv_commit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
  if (hashable(kv, c)) commit(kv, s, c, computed_tokens);
}

void kv_commit_own(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
  if (kv->caching) commit(kv, s, c, computed_tokens);
}

static void commit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens) {
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

void kv_seq_free(kv_mgr *kv, kv_seq *s) {
  for (uint32_t i = s->n_blocks; i-- > 0;) {
    uint32_t b = s->blocks[i];
    SIM_ASSERT(kv->blk[b].ref_cnt > 0);
    if (--kv->blk[b].ref_cnt == 0) fq_append(kv, b);
  }
  s->n_blocks = 0;
  s->n_hashed = 0;
  s->last_hash = 0;
}

/* ---- invariant check ---------------------------------------------------------------- */

static int check_fail(sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_fail(sim_err *err, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sim_errf(err, SIM_EINTERNAL, "kv_check: %s", msg);
}

int kv_check(const kv_mgr *kv, const kv_seq *const *seqs, size_t n_seqs, sim_err *err) {
  uint32_t nb = kv->num_blocks, sentinel = nb;
  uint32_t *refs = sim_calloc(nb, sizeof *refs);
  size_t *stamp = sim_calloc(nb, sizeof *stamp); /* last sequence (1-based) seen holding a block */
  int rc = SIM_OK;

  /* 1. block tables: ids in range, no block twice in one table, private tails */
  for (size_t q = 0; q < n_seqs && rc == SIM_OK; q++) {
    const kv_seq *s = seqs[q];
    if (s->n_blocks > s->cap || s->n_hashed > s->n_blocks) {
      rc = check_fail(err, "seq %zu: n_blocks %u, n_hashed %u, cap %u inconsistent", q, s->n_blocks,
                      s->n_hashed, s->cap);
      break;
    }
    for (uint32_t i = 0; i < s->n_blocks; i++) {
      uint32_t b = s->blocks[i];
      if (b >= nb) {
        rc = check_fail(err, "seq %zu entry %u: block id %u out of range", q, i, b);
        break;
      }
      if (stamp[b] == q + 1) {
        rc = check_fail(err, "seq %zu entry %u: block %u appears twice in one table", q, i, b);
        break;
      }
      stamp[b] = q + 1;
      refs[b]++;
    }
  }
  /* 2. per block: ref counts match the tables; in_free <=> ref 0 */
  for (uint32_t b = 0; b < nb && rc == SIM_OK; b++) {
    const kv_block *x = &kv->blk[b];
    if (x->ref_cnt != refs[b])
      rc = check_fail(err, "block %u: ref_cnt %u but %u table entries", b, x->ref_cnt, refs[b]);
    else if ((x->ref_cnt == 0) != (x->in_free != 0))
      rc = check_fail(err, "block %u: ref_cnt %u with in_free %u", b, x->ref_cnt, x->in_free);
  }
  /* 3. tails of tables (index >= n_hashed) are private and unhashed; chain state matches */
  for (size_t q = 0; q < n_seqs && rc == SIM_OK; q++) {
    const kv_seq *s = seqs[q];
    for (uint32_t i = s->n_hashed; i < s->n_blocks; i++) {
      const kv_block *x = &kv->blk[s->blocks[i]];
      if (x->hash != 0 || x->ref_cnt != 1) {
        rc = check_fail(err, "seq %zu entry %u (beyond n_hashed): block %u is hashed or shared", q, i,
                        s->blocks[i]);
        break;
      }
    }
    if (rc == SIM_OK && s->n_hashed > 0) {
      const kv_block *x = &kv->blk[s->blocks[s->n_hashed - 1]];
      if (x->hash != 0 && x->hash != s->last_hash)
        rc = check_fail(err, "seq %zu: last_hash differs from the hash of block %u (entry %u)", q,
                        s->blocks[s->n_hashed - 1], s->n_hashed - 1);
    }
  }
  /* 4. free queue: well linked, only free blocks, length == num_free */
  if (rc == SIM_OK) {
    uint32_t len = 0, prev = sentinel;
    for (uint32_t b = kv->blk[sentinel].next; b != sentinel; prev = b, b = kv->blk[b].next) {
      if (b >= nb) {
        rc = check_fail(err, "free queue: link to block %u out of range after %u (position %u)", b, prev,
                        len);
        break;
      }
      if (kv->blk[b].prev != prev) {
        rc = check_fail(err, "free queue: block %u has prev %u, expected %u", b, kv->blk[b].prev, prev);
        break;
      }
      if (!kv->blk[b].in_free || kv->blk[b].ref_cnt) {
        rc = check_fail(err, "free queue: block %u (position %u) has ref_cnt %u", b, len,
                        kv->blk[b].ref_cnt);
        break;
      }
      if (++len > nb) {
        rc = check_fail(err, "free queue: cycle (longer than %u blocks)", nb);
        break;
      }
    }
    if (rc == SIM_OK && kv->blk[sentinel].prev != prev)
      rc = check_fail(err, "free queue: tail is %u but the last block reached is %u", kv->blk[sentinel].prev,
                      prev);
    uint32_t n_flag = 0;
    for (uint32_t b = 0; b < nb; b++) n_flag += kv->blk[b].in_free;
    if (rc == SIM_OK && (len != kv->num_free || n_flag != len))
      rc = check_fail(err, "free queue: %u linked, num_free %u, %u blocks flagged free", len, kv->num_free,
                      n_flag);
  }
  /* 5. hash table <-> block hashes is a bijection; every entry reachable */
  if (rc == SIM_OK) {
    uint32_t mask = kv->ht_cap - 1, n_entries = 0, n_hashed_blocks = 0;
    for (uint32_t i = 0; i < kv->ht_cap && rc == SIM_OK; i++) {
      uint64_t key = kv->ht_key[i];
      if (!key) continue;
      n_entries++;
      uint32_t b = kv->ht_val[i];
      if (b >= nb || kv->blk[b].hash != key) {
        rc = check_fail(err, "hash table slot %u: maps to block %u which does not carry hash %016" PRIx64, i, b, key);
        break;
      }
      for (uint32_t j = ht_home(kv, key); j != i; j = (j + 1) & mask)
        if (!kv->ht_key[j]) {
          rc = check_fail(err, "hash table slot %u: unreachable from home %u (empty slot %u)", i,
                          ht_home(kv, key), j);
          break;
        }
    }
    for (uint32_t b = 0; b < nb; b++) n_hashed_blocks += kv->blk[b].hash != 0;
    if (rc == SIM_OK && (n_entries != n_hashed_blocks || n_entries != kv->ht_n))
      rc = check_fail(err, "hash table: %u entries (count %u) but %u blocks carry a hash", n_entries, kv->ht_n,
                      n_hashed_blocks);
    if (rc == SIM_OK && !kv->caching && n_entries)
      rc = check_fail(err, "hash table: %u entries with prefix caching off", n_entries);
  }
  free(refs);
  free(stamp);
  return rc;
}
