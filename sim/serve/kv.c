/* kv.c: paged KV-cache block manager with prefix caching (vLLM V1 semantics).
 *
 * Memory follows what is in use, not the pool's size (a fleet of idle
 * replicas costs nothing per block; issue fleet-scale):
 *   - records (ref count, hash, free-queue links) only for blocks that
 *     need one: from kv_commit, which hashes a block, until the block is
 *     anonymous again (freed without a hash, or evicted). Only a hashed
 *     block is ever shared, cached or queued on its own; any other block
 *     has no hash and a ref count implied by where it is (a private tail:
 *     1; the anonymous stack: 0). The records lie densely in slots (blk,
 *     grown by doubling, unused slots listed), reached through a map from
 *     block id (rec_of, valid where bit b of `kept` is set, grown by
 *     doubling without being written). Handing out and freeing blocks that
 *     are never hashed (a request with nothing to share: most, and with
 *     SGLang's page size 1 a block per token) writes no record and no map
 *     entry; hashing one writes its map entry and a slot that is in cache.
 *     Blocks n_touched and up were never handed out: they are free and
 *     carry nothing (a high-water mark).
 *   - the free queue (vLLM's eviction order) as a doubly-linked list of
 *     nodes that are either a cached free block (ref 0, a hash: its
 *     record's slot is the node) or a run of k anonymous free blocks (ref 0, no
 *     hash). A free block without a hash holds nothing anybody can hit, so
 *     anonymous blocks are interchangeable: only how many of them lie
 *     between the cached ones decides which cached block is evicted when,
 *     and the runs keep exactly that. Their ids wait on a stack (`anon`,
 *     last freed first); when it is empty, a never-used id is taken. So the
 *     ids handed out (n_touched) grow to the peak of blocks in use plus
 *     cached free blocks, and no further, and the records to the peak of
 *     hashed blocks: a replica serving millions of tokens without prefix
 *     hits keeps as many ids as it ever held at once. Hits, evictions and
 *     free counts are those of vLLM's queue of every block; only which id
 *     an anonymous block gets differs, and no output depends on it.
 *     Node ids: record slots 0 .. num_blocks-1, the sentinel num_blocks (its
 *     next is the head, next to evict; its prev the tail), runs
 *     num_blocks+1+r. Walking the queue (evicting a preempted request's
 *     cached blocks one after the other) so reads the dense slots only.
 *   - an open-addressing hash table hash -> block id, linear probing, power
 *     of two capacity kept >= 2 x the hashes it holds (allocated at the
 *     first hash, doubled and rebuilt as it fills), so the load factor never
 *     exceeds 1/2. Deletion shifts later entries of the probe run back (no
 *     tombstones), so probe lengths never degrade over a long run.
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
 *   - a free block is either in the queue as a node (ref 0, a hash) or on
 *     the anonymous stack (no hash, no record); never both; a block in use
 *     is in neither;
 *   - the runs' counts add up to the stack's size plus the never-used
 *     blocks; no run is empty and no two runs are neighbours;
 *   - the hash table holds exactly the blocks with hash != 0, each under its
 *     own hash, reachable from its home slot without crossing an empty slot;
 *   - for every sequence, blocks at table index >= n_hashed have no hash and
 *     are in that table alone (freshly allocated, private). Only hashed
 *     blocks are shared. A private block has no record, neither when it is
 *     handed out nor when it is freed: its ref count of 1 is implied by its
 *     place in the table, until kv_commit hashes it and writes a record;
 *   - a block has a record iff it has a hash or sits at index < n_hashed
 *     of a table (a duplicate, see below, has a record without a hash
 *     while it is held). Handing out and
 *     freeing the blocks of a request with nothing to share (most of them,
 *     and with SGLang's page size 1 a block per token) so touch no record:
 *     their ids are scattered over the pool, a cache miss each.
 *   - the anonymous stack holds no order anybody reads: a sequence's
 *     private tail is pushed as one copied slice, and an allocation takes
 *     the top slice at once (the ids a request gets differ from a queue of
 *     single blocks, nothing else).
 *
 * Concurrent duplicates: if two sequences compute the same block content at
 * the same time, the second kv_commit finds the hash already registered (to
 * the other block) and keeps that mapping; its own block stays unhashed and
 * is simply freed (uncached) later. The chain state still advances, so the
 * following blocks of that sequence are registered normally.
 *
 * Stats: kv_match_prefix counts every lookup it answers with caching on
 * (lookups, lookup_tokens = num_tokens asked for, hit_tokens = returned). */
#include "serve/kv_impl.h"

#include <stdlib.h>
#include <string.h>

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

/* Slot holding key, or UINT32_MAX. */
static uint32_t ht_find(const kv_mgr *kv, uint64_t key) {
  if (!kv->ht_cap) return UINT32_MAX;
  uint32_t mask = kv->ht_cap - 1;
  for (uint32_t i = ht_home(kv, key);; i = (i + 1) & mask) {
    if (kv->ht_key[i] == key) return i;
    if (kv->ht_key[i] == 0) return UINT32_MAX;
  }
}

static void ht_put(kv_mgr *kv, uint64_t key, uint32_t val) {
  uint32_t mask = kv->ht_cap - 1, i = ht_home(kv, key);
  while (kv->ht_key[i]) {
    SIM_ASSERT(kv->ht_key[i] != key);
    i = (i + 1) & mask;
  }
  kv->ht_key[i] = key;
  kv->ht_val[i] = val;
  kv->ht_n++;
}

/* Doubles the table (or makes the first one) and re-inserts every entry. */
static void ht_grow(kv_mgr *kv) {
  uint64_t *old_key = kv->ht_key;
  uint32_t *old_val = kv->ht_val, old_cap = kv->ht_cap;
  uint32_t log2 = old_cap ? 64 - kv->ht_shift + 1 : 6;
  kv->ht_cap = 1u << log2;
  kv->ht_shift = 64 - log2;
  kv->ht_key = sim_calloc(kv->ht_cap, sizeof *kv->ht_key);
  kv->ht_val = sim_calloc(kv->ht_cap, sizeof *kv->ht_val);
  kv->ht_n = 0;
  for (uint32_t i = 0; i < old_cap; i++)
    if (old_key[i]) ht_put(kv, old_key[i], old_val[i]);
  free(old_key);
  free(old_val);
}

static void ht_insert(kv_mgr *kv, uint64_t key, uint32_t val) {
  if (2ull * (kv->ht_n + 1) > kv->ht_cap) ht_grow(kv);
  ht_put(kv, key, val);
  SIM_ASSERT(kv->ht_n <= kv->n_touched);
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

/* ---- ids and records ---------------------------------------------------------------- */

/* Hands out m never-used blocks (the high-water mark rises; nothing is written for them). */
static void blocks_new(kv_mgr *kv, uint32_t *out, uint32_t m) {
  SIM_ASSERT(m <= kv->num_blocks - kv->n_touched);
  for (uint32_t i = 0; i < m; i++) out[i] = kv->n_touched + i;
  kv->n_touched += m;
}

/* Gives block b a record: a slot (an unused one, or a new one, the slots growing by doubling), the map's entry (the
   map growing by doubling, its new entries unwritten and unkept). The caller writes the record. */
static kv_block *rec_keep(kv_mgr *kv, uint32_t b) {
  SIM_ASSERT(b < kv->n_touched && !rec_kept(kv, b));
  if (b >= kv->map_cap) {
    uint64_t c = kv->map_cap ? 2ull * kv->map_cap : 64;
    while (c <= b) c *= 2;
    uint32_t cap = (uint32_t)SIM_MIN(c, (uint64_t)kv->num_blocks);
    size_t words = ((size_t)kv->map_cap + 63) / 64, new_words = ((size_t)cap + 63) / 64;
    kv->rec_of = sim_realloc(kv->rec_of, (size_t)cap * sizeof *kv->rec_of);
    kv->kept = sim_realloc(kv->kept, new_words * sizeof *kv->kept);
    memset(kv->kept + words, 0, (new_words - words) * sizeof *kv->kept);
    kv->map_cap = cap;
  }
  uint32_t slot;
  if (kv->rec_free != UINT32_MAX) {
    slot = kv->rec_free;
    kv->rec_free = kv->blk[slot].l.next;
  } else {
    if (kv->blk_used == kv->blk_cap) {
      uint64_t c = kv->blk_cap ? 2ull * kv->blk_cap : 64;
      kv->blk_cap = (uint32_t)SIM_MIN(c, (uint64_t)kv->num_blocks);
      kv->blk = sim_realloc(kv->blk, (size_t)kv->blk_cap * sizeof *kv->blk);
    }
    slot = kv->blk_used++;
  }
  kv->rec_of[b] = slot;
  kv->kept[b >> 6] |= 1ull << (b & 63);
  kv->n_rec++;
  kv->blk[slot].id = b;
  return &kv->blk[slot];
}

/* Block b, whose record is in `slot`, is anonymous again (free without a hash, or handed out as a private block):
   the slot is unused. (Not asserted here: rec_of[b] would be a cache miss a block; kv_check checks the map.) */
static void rec_drop(kv_mgr *kv, uint32_t b, uint32_t slot) {
  kv->kept[b >> 6] &= ~(1ull << (b & 63));
  kv->blk[slot].l.next = kv->rec_free;
  kv->rec_free = slot;
  kv->n_rec--;
}

/* ---- free queue ------------------------------------------------------------------ */

static kv_run *run_of(kv_mgr *kv, uint32_t node) { return &kv->run[node - kv->num_blocks - 1]; }

static void fq_unlink(kv_mgr *kv, uint32_t node) {
  fq_link *x = lnk(kv, node);
  lnk(kv, x->prev)->next = x->next;
  lnk(kv, x->next)->prev = x->prev;
}

static void fq_link_tail(kv_mgr *kv, uint32_t node) {
  uint32_t s = kv->num_blocks;
  fq_link *x = lnk(kv, node);
  x->prev = kv->sent.prev;
  x->next = s;
  lnk(kv, x->prev)->next = node;
  kv->sent.prev = node;
}

static uint32_t run_new(kv_mgr *kv, uint32_t count) {
  uint32_t r;
  if (kv->run_unused != UINT32_MAX) {
    r = kv->run_unused;
    kv->run_unused = kv->run[r].l.next;
  } else {
    SIM_GROW(kv->run, kv->run_cap, kv->run_used + 1);
    r = kv->run_used++;
  }
  kv->run[r].count = count;
  return kv->num_blocks + 1 + r;
}

static void run_release(kv_mgr *kv, uint32_t node) {
  uint32_t r = node - kv->num_blocks - 1;
  kv->run[r].l.next = kv->run_unused;
  kv->run_unused = r;
}

/* A block whose ref count reached 0 joins the tail: as its own node when it
 * carries a hash, else counted into the tail run. */
static void fq_append(kv_mgr *kv, uint32_t b) {
  uint32_t slot = kv->rec_of[b];
  kv_block *x = &kv->blk[slot];
  SIM_ASSERT(x->ref_cnt == 0);
  if (x->hash) {
    fq_link_tail(kv, slot);
  } else {
    rec_drop(kv, b, slot);
    if (is_run(kv, kv->sent.prev)) run_of(kv, kv->sent.prev)->count++;
    else fq_link_tail(kv, run_new(kv, 1));
    SIM_GROW(kv->anon, kv->anon_cap, kv->n_anon + 1);
    kv->anon[kv->n_anon++] = b;
  }
  kv->num_free++;
}

/* A cached free block leaves the queue (its content is reused); the runs on
 * either side of it merge. */
static void fq_take_cached(kv_mgr *kv, uint32_t b) {
  kv_block *x = rec(kv, b);
  SIM_ASSERT(x->ref_cnt == 0 && x->hash);
  uint32_t p = x->l.prev, n = x->l.next;
  fq_unlink(kv, kv->rec_of[b]);
  if (is_run(kv, p) && is_run(kv, n)) {
    run_of(kv, p)->count += run_of(kv, n)->count;
    fq_unlink(kv, n);
    run_release(kv, n);
  }
  kv->num_free--;
}

/* Takes the head of the queue (vLLM's popleft): the next anonymous block or
 * the least recently freed cached one, whose hash is evicted. */
static uint32_t fq_pop(kv_mgr *kv) {
  uint32_t head = kv->sent.next, b;
  SIM_ASSERT(head != kv->num_blocks);
  if (is_run(kv, head)) {
    if (--run_of(kv, head)->count == 0) {
      fq_unlink(kv, head);
      run_release(kv, head);
    }
    if (kv->n_anon) b = kv->anon[--kv->n_anon];
    else blocks_new(kv, &b, 1);
  } else { /* the node is the record's slot */
    kv_block *x = &kv->blk[head];
    b = x->id;
    fq_unlink(kv, head);
    uint32_t slot = ht_find(kv, x->hash);
    SIM_ASSERT(slot != UINT32_MAX && kv->ht_val[slot] == b);
    ht_remove_slot(kv, slot);
    rec_drop(kv, b, head); /* handed out as a private block */
    kv->stats.evictions++;
  }
  kv->num_free--;
  return b;
}

/* ---- public API --------------------------------------------------------------------- */

kv_mgr *kv_new(uint32_t num_blocks, uint32_t block_tokens, bool prefix_caching) {
  SIM_ASSERT(num_blocks >= 1 && num_blocks < UINT32_MAX / 4);
  SIM_ASSERT(block_tokens >= 1);
  kv_mgr *kv = sim_calloc(1, sizeof *kv);
  kv->num_blocks = num_blocks;
  kv->block_tokens = block_tokens;
  kv->bt_shift = 32;
  for (uint32_t k = 0; k < 32; k++)
    if (block_tokens == 1u << k) kv->bt_shift = k;
  kv->caching = prefix_caching;
  kv->run_unused = UINT32_MAX;
  kv->rec_free = UINT32_MAX;
  kv->sent.prev = kv->sent.next = num_blocks;
  fq_link_tail(kv, run_new(kv, num_blocks)); /* every block free, never used: one run */
  kv->num_free = num_blocks;
  return kv;
}

void kv_free(kv_mgr *kv) {
  if (!kv) return;
  free(kv->blk);
  free(kv->rec_of);
  free(kv->kept);
  free(kv->anon);
  free(kv->run);
  free(kv->ht_key);
  free(kv->ht_val);
  free(kv);
}

uint32_t kv_num_blocks(const kv_mgr *kv) { return kv->num_blocks; }
uint32_t kv_num_free(const kv_mgr *kv) { return kv->num_free; }
uint32_t kv_block_tokens(const kv_mgr *kv) { return kv->block_tokens; }
uint32_t kv_num_records(const kv_mgr *kv) { return kv->n_touched; }
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
  uint64_t t = (uint64_t)tokens + kv->block_tokens - 1;
  return (uint32_t)(kv->bt_shift < 32 ? t >> kv->bt_shift : t / kv->block_tokens);
}

void kv_seq_reserve(const kv_mgr *kv, kv_seq *s, uint64_t tokens) {
  uint64_t n = (tokens + kv->block_tokens - 1) / kv->block_tokens;
  if (n > s->cap) seq_set_cap(s, n); /* exact: the final length is known */
}

uint32_t kv_peek_prefix(const kv_mgr *kv, const kv_content *c, uint32_t num_tokens) {
  if (!kv->caching || num_tokens == 0) return 0;
  uint32_t max_blocks = (num_tokens - 1) / kv->block_tokens, n = 0;
  uint64_t h = 0;
  for (; n < max_blocks; n++) {
    h = chain_hash(h, block_content(kv, c, n));
    if (ht_find(kv, h) == UINT32_MAX) break;
  }
  return n * kv->block_tokens;
}

uint32_t kv_shared_prefix(const kv_mgr *kv, const kv_content *a, const kv_content *b, uint32_t num_tokens) {
  uint32_t n = 0, blocks = num_tokens / kv->block_tokens;
  while (n < blocks && block_content(kv, a, n) == block_content(kv, b, n)) n++;
  return n * kv->block_tokens;
}

uint32_t kv_match_prefix(kv_mgr *kv, const kv_content *c, uint32_t num_tokens) {
  if (!kv->caching) return 0;
  kv->stats.lookups++;
  kv->stats.lookup_tokens += num_tokens;
  uint32_t hit = kv_peek_prefix(kv, c, num_tokens);
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
  /* A decode step's one new block at page size 1, from the anonymous stack, room in the table: what the general path
     below does for it, without its arithmetic (a block per token and request in an SGLang run). */
  if (cached_tokens == 0 && fit_tokens <= total_tokens && kv->bt_shift == 0 && total_tokens == s->n_blocks + 1 &&
      s->n_blocks < s->cap && kv->n_anon && is_run(kv, kv->sent.next)) {
    uint32_t head = kv->sent.next;
    if (--run_of(kv, head)->count == 0) {
      fq_unlink(kv, head);
      run_release(kv, head);
    }
    s->blocks[s->n_blocks++] = kv->anon[--kv->n_anon];
    kv->num_free--;
    return true;
  }
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
      cached_in_free += rec(kv, b)->ref_cnt == 0;
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
    if (rec(kv, b)->ref_cnt == 0) fq_take_cached(kv, b);
    rec(kv, b)->ref_cnt++;
  }
  if (n_cached) {
    s->n_blocks = n_cached;
    s->n_hashed = n_cached;
    s->last_hash = h;
  }
  /* New blocks are private (index >= n_hashed): their records are not written (a block on the anonymous stack or
     never used has hash 0; its ref count of 1 is implied by its place in the table, see the file comment). */
  for (uint32_t left = n_new; left;) {
    uint32_t head = kv->sent.next;
    if (!is_run(kv, head)) { /* a cached block: evicted */
      s->blocks[s->n_blocks++] = fq_pop(kv);
      left--;
      continue;
    }
    /* a run of anonymous blocks: as many at once as it holds, the stack's top slice first, then never-used ids */
    kv_run *r = run_of(kv, head);
    uint32_t m = SIM_MIN(left, r->count), from_stack = SIM_MIN(m, kv->n_anon);
    if ((r->count -= m) == 0) {
      fq_unlink(kv, head);
      run_release(kv, head);
    }
    uint32_t *out = s->blocks + s->n_blocks;
    if (from_stack == 1) { /* a decode step's block: no call */
      out[0] = kv->anon[--kv->n_anon];
    } else if (from_stack) {
      kv->n_anon -= from_stack;
      memcpy(out, kv->anon + kv->n_anon, (size_t)from_stack * sizeof *out);
    }
    blocks_new(kv, out + from_stack, m - from_stack);
    s->n_blocks += m;
    kv->num_free -= m;
    left -= m;
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
    kv_block *x = rec_keep(kv, b); /* a private block has none */
    x->ref_cnt = 1; /* leaves the private tail: its record now counts (see kv_seq_free) */
    x->hash = 0;
    if (ht_find(kv, h) == UINT32_MAX) { /* else: a duplicate, see the file comment */
      x->hash = h;
      ht_insert(kv, h, b);
    }
  }
  if (full > s->n_hashed) {
    s->n_hashed = full;
    s->last_hash = h;
  }
}

void kv_seq_free(kv_mgr *kv, kv_seq *s) {
  /* The private tail (entries >= n_hashed: ref 1 implied, no hash, see the file comment) goes first, as anonymous
     blocks, without touching their records: a record on the anonymous stack or in a private tail is not read until
     kv_commit hashes the block, which writes its ref_cnt. This is most of every free: a million requests'
     blocks, scattered over the pool, would otherwise cost a cache miss each. */
  SIM_ASSERT(s->n_hashed <= s->n_blocks);
  uint32_t k = s->n_blocks - s->n_hashed;
  if (k) {
    if (is_run(kv, kv->sent.prev)) run_of(kv, kv->sent.prev)->count += k;
    else fq_link_tail(kv, run_new(kv, k));
    SIM_GROW(kv->anon, kv->anon_cap, (size_t)kv->n_anon + k);
    memcpy(kv->anon + kv->n_anon, s->blocks + s->n_hashed, (size_t)k * sizeof *kv->anon);
    kv->n_anon += k;
    kv->num_free += k;
  }
  for (uint32_t i = s->n_hashed; i-- > 0;) {
    uint32_t b = s->blocks[i];
    kv_block *x = rec(kv, b);
    SIM_ASSERT(x->ref_cnt > 0);
    if (--x->ref_cnt == 0) fq_append(kv, b);
  }
  s->n_blocks = 0;
  s->n_hashed = 0;
  s->last_hash = 0;
}
