/* kv_impl.h: the KV manager's state (kv.c), shared with its consistency check (kv_check.c). Private to the
 * two: callers see kv.h. The layout and its invariants are described at the top of kv.c. */
#ifndef SIM_KV_IMPL_H
#define SIM_KV_IMPL_H

#include "serve/kv.h"

typedef struct fq_link {
  uint32_t prev, next; /* free-queue node ids (see the file comment) */
} fq_link;

typedef struct kv_block { /* a record: a block's from kv_commit until it is anonymous again (see kv.c) */
  uint64_t hash;    /* chained hash of the full block's content, 0 = none */
  uint32_t ref_cnt; /* block-table entries referencing this block */
  fq_link l;        /* while a cached free block (ref 0, hash != 0): its place in the free queue (the node is the
                       slot); while the slot is unused: l.next = next unused slot */
  uint32_t id;      /* the block whose record this is */
} kv_block;

typedef struct kv_run {
  fq_link l;      /* place in the free queue; when unused: l.next = next unused run */
  uint32_t count; /* anonymous free blocks in this run, >= 1 */
} kv_run;

struct kv_mgr {
  uint32_t num_blocks;   /* usable blocks */
  uint32_t block_tokens; /* tokens per block */
  uint32_t bt_shift;     /* log2(block_tokens) when a power of two (1 and vLLM's 16: a shift, not a division), else 32 */
  bool caching;          /* prefix caching on */
  uint32_t num_free;     /* free blocks: cached in the queue + anonymous */
  uint32_t n_touched;    /* blocks 0 .. n_touched-1 were handed out at least once; the rest never */
  uint32_t *rec_of;      /* [map_cap] block id -> slot of its record in blk; valid iff bit b of kept */
  uint64_t *kept;        /* [map_cap / 64, rounded up] bit b: block b has a record */
  uint32_t map_cap;      /* <= num_blocks; grown by kv_commit */
  kv_block *blk;         /* [blk_cap] record slots: blk_used ever used, n_rec in use, the rest listed from rec_free */
  uint32_t blk_cap, blk_used, n_rec, rec_free; /* rec_free: UINT32_MAX when none */
  uint32_t *anon;        /* [anon_cap] ids of free blocks without a hash, n_anon of them */
  uint32_t n_anon;
  size_t anon_cap;
  fq_link sent;          /* the queue's sentinel (node id num_blocks) */
  kv_run *run;           /* [run_cap] run nodes */
  size_t run_cap;
  uint32_t run_used, run_unused; /* slots ever used; head of the unused list (UINT32_MAX: none) */
  uint64_t *ht_key;      /* [ht_cap] hash, 0 = empty slot; NULL until the first hash */
  uint32_t *ht_val;      /* [ht_cap] block id */
  uint32_t ht_cap;       /* slots, power of two >= 2 x ht_n (0 before the first hash) */
  uint32_t ht_shift;     /* 64 - log2(ht_cap): home slot = (key * K) >> shift */
  uint32_t ht_n;         /* occupied slots */
  kv_stats stats;
};

/* Home slot of a hash in the open-addressing table. */
static inline uint32_t ht_home(const kv_mgr *kv, uint64_t key) {
  return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> kv->ht_shift);
}

/* Whether block b has a record (kv.c: from kv_commit until it is anonymous again: no hash, no shared place). */
static inline bool rec_kept(const kv_mgr *kv, uint32_t b) {
  return b < kv->map_cap && (kv->kept[b >> 6] >> (b & 63) & 1);
}

/* Block b's record; b must have one. */
static inline kv_block *rec(const kv_mgr *kv, uint32_t b) { return &kv->blk[kv->rec_of[b]]; }

/* Block b's hash: 0 without a record. */
static inline uint64_t rec_hash(const kv_mgr *kv, uint32_t b) { return rec_kept(kv, b) ? rec(kv, b)->hash : 0; }

/* Free-queue node ids: record slots 0 .. num_blocks-1 (cached free blocks), the sentinel num_blocks, runs above. */
static inline bool is_run(const kv_mgr *kv, uint32_t node) { return node > kv->num_blocks; }

static inline fq_link *lnk(kv_mgr *kv, uint32_t node) {
  if (node < kv->num_blocks) return &kv->blk[node].l;
  if (node == kv->num_blocks) return &kv->sent;
  return &kv->run[node - kv->num_blocks - 1].l;
}

#endif
