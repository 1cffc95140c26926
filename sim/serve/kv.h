/* kv.h: paged KV-cache block manager with prefix caching (vLLM V1 semantics).
 *
 * The pool holds `num_blocks` usable blocks of `block_tokens` tokens each
 * (the engine's reserved null block is already excluded by the caller).
 * A sequence owns an ordered block table (kv_seq). A block is either
 *   - in use: ref_cnt >= 1 (shared by several sequences when a cached prefix
 *     is reused), or
 *   - free: ref_cnt == 0, in the free queue. A free block may still carry the
 *     hash of a full block it held ("cached"); reusing its content (a prefix
 *     hit) takes it out of the free queue again; allocating it for new content
 *     evicts that hash.
 * Free queue order = eviction order: least recently freed first. When a
 * sequence frees its table, its blocks are appended tail-first (the last block
 * of the sequence is appended first), so a sequence's prefix blocks are the
 * last of its blocks to be evicted.
 *
 * Content identity: a full block's hash chains the previous block's hash with
 * the identity of the tokens in the block (kv_content below), so equal hashes
 * mean equal prefixes. Blocks of unknown content (KV_CONTENT_NONE) are keyed
 * on the request's uid: no other request ever hits them (what a cache keyed
 * on real token ids does with prompts that share nothing), but the request
 * itself does after a preemption, as in vLLM.
 *
 * Invariants (checked by kv_check):
 *   - every block is either in the free queue (ref 0) or referenced by
 *     exactly ref_cnt block-table entries; never both, never double-owned;
 *   - num_free == length of the free queue;
 *   - a hash maps to at most one block, and that block carries the hash.
 *
 * Complexity: allocate/free O(blocks touched); lookup O(blocks matched)
 * expected (open-addressing hash table). Memory: a record per block only
 * for blocks ever hashed, among ids up to the peak of blocks in use plus
 * cached free blocks (kv_num_records), so an idle pool of any size costs a
 * few hundred bytes; the records, the hash table and a sequence's own table
 * grow by amortized doubling.
 *
 * Ownership: kv_new returns the manager, kv_free releases it. kv_seq is caller storage
 * (embedded in the request); kv_seq_free releases its blocks to the pool,
 * kv_seq_deinit its memory. */
#ifndef SIM_KV_H
#define SIM_KV_H

#include "core/common.h"

typedef enum kv_content_kind {
  KV_CONTENT_NONE = 0, /* unknown content: unique to the request (keyed on uid) */
  KV_CONTENT_HASH_IDS, /* trace-provided prefix-block ids (Mooncake hash_ids) */
  KV_CONTENT_SESSION   /* multi-turn session: every turn extends one token stream */
} kv_content_kind;

/* What the tokens of a sequence are, for prefix hashing. Borrowed pointers. */
typedef struct kv_content {
  kv_content_kind kind;
  uint64_t uid;               /* unique per request: identity of tokens nobody shares */
  uint64_t session;           /* SESSION: session key; token i of every turn is (session, i) */
  const uint64_t *hash_ids;   /* HASH_IDS: one id per hash_block_tokens prompt tokens */
  uint32_t n_hash;
  uint32_t hash_block_tokens; /* HASH_IDS: tokens per id; a multiple of block_tokens or not */
  uint32_t prompt_tokens;     /* HASH_IDS: ids describe only prompt tokens; later tokens are unique */
} kv_content;

typedef struct kv_seq {
  uint32_t *blocks;  /* block table: block ids in token order */
  uint32_t n_blocks; /* blocks held */
  uint32_t cap;
  uint32_t n_hashed; /* leading full blocks whose hashes are computed: registered, or
                        left unregistered as a duplicate of another block (see kv_commit) */
  uint64_t last_hash;/* hash of block n_hashed-1 (chain state) */
} kv_seq;

typedef struct kv_mgr kv_mgr; /* opaque */

typedef struct kv_stats {
  uint64_t lookups;          /* kv_match_prefix calls with caching on (a request
                                retried in a later step counts again) */
  uint64_t lookup_tokens;    /* num_tokens those calls asked for */
  uint64_t hit_tokens;       /* tokens those calls found cached */
  uint64_t evictions;        /* cached blocks reused for other content */
  uint64_t alloc_failures;   /* kv_allocate calls that did not fit */
} kv_stats;

kv_mgr *kv_new(uint32_t num_blocks, uint32_t block_tokens, bool prefix_caching);
void kv_free(kv_mgr *kv);

uint32_t kv_num_blocks(const kv_mgr *kv);
uint32_t kv_num_free(const kv_mgr *kv); /* free queue length, cached-but-free included */
uint32_t kv_block_tokens(const kv_mgr *kv);
/* Blocks ever handed out (the high-water mark of ids: at most the peak of
 * blocks in use plus cached free ones, <= kv_num_blocks; see kv.c). Only the
 * hashed ones among them ever get a record. */
uint32_t kv_num_records(const kv_mgr *kv);
/* vLLM's kv_cache_usage: 1 - free / num_blocks, in [0, 1]. */
double kv_usage(const kv_mgr *kv);
const kv_stats *kv_get_stats(const kv_mgr *kv);

void kv_seq_init(kv_seq *s);
void kv_seq_deinit(kv_seq *s); /* frees table memory; the table must be empty (kv_seq_free first) */
/* Sizes the table's memory for `tokens` tokens at once (a sequence whose
 * final length is known), sparing the reallocations of growing block by
 * block. Host memory only: no block is taken. */
void kv_seq_reserve(const kv_mgr *kv, kv_seq *s, uint64_t tokens);

/* Longest cached prefix of a sequence with `num_tokens` known tokens: returns
 * the number of cached tokens (a multiple of block_tokens, at most
 * num_tokens - 1 so at least one token is left to compute). Does not pin.
 * Always 0 when prefix caching is off. */
uint32_t kv_match_prefix(kv_mgr *kv, const kv_content *c, uint32_t num_tokens);
/* kv_match_prefix without counting a lookup (a scheduler's look at its queue: SGLang's lpm order). */
uint32_t kv_peek_prefix(const kv_mgr *kv, const kv_content *c, uint32_t num_tokens);
/* Tokens two sequences share from their start, among their first num_tokens, whole blocks (their contents
 * compared, cached or not). */
uint32_t kv_shared_prefix(const kv_mgr *kv, const kv_content *a, const kv_content *b, uint32_t num_tokens);

/* Makes `s` hold blocks for `total_tokens` tokens. If `s` is empty and
 * `cached_tokens` > 0, first takes the matching cached blocks (the value
 * kv_match_prefix returned in the same step) with ref_cnt++. Fails (returns
 * false, changes nothing) when the free queue, after setting aside the cached
 * blocks being reused, cannot supply the new blocks. */
bool kv_allocate(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens);
/* kv_allocate that also fails unless the blocks for `fit_tokens` tokens
 * (>= total_tokens) could be supplied: vLLM's full_sequence_must_fit, which
 * checks the whole sequence and allocates only what this step computes. */
bool kv_allocate_fit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t cached_tokens, uint32_t total_tokens,
                     uint32_t fit_tokens);
/* Number of new blocks kv_allocate would need for `total_tokens` (no cached part). */
uint32_t kv_blocks_needed(const kv_mgr *kv, const kv_seq *s, uint32_t total_tokens);

/* Registers hashes of the blocks of `s` that became full now that
 * `computed_tokens` tokens have their KV written or scheduled to be (no-op
 * without caching, and for NONE content: see kv_commit_own). A hash already registered for another block (the same
 * content computed concurrently) keeps that mapping; this block stays uncached. */
void kv_commit(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens);

/* kv_commit for any content, NONE included: before a request is preempted,
 * so that it finds its own blocks again when it resumes (nobody else can hit
 * them, so they need no hash until then). */
void kv_commit_own(kv_mgr *kv, kv_seq *s, const kv_content *c, uint32_t computed_tokens);

/* Releases every block of `s` (ref_cnt--; blocks reaching 0 join the free
 * queue tail-first). `s` is empty afterwards. */
void kv_seq_free(kv_mgr *kv, kv_seq *s);

/* Verifies the invariants above given every live sequence; returns 0 or
 * SIM_EINTERNAL with a description in err. O(num_blocks + table entries). */
int kv_check(const kv_mgr *kv, const kv_seq *const *seqs, size_t n_seqs, sim_err *err);

#endif
