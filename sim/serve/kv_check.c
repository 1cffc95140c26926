/* kv_check.c: kv_check, the KV manager's consistency check (kv.h): every invariant of kv.h and kv.c verified
 * against the live block tables. Reads the manager's state through kv_impl.h; used by tests and debug runs. */
#include "serve/kv_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_fail(sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check_fail(sim_err *err, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sim_errf(err, SIM_EINTERNAL, "kv_check: %s", msg);
}

/* The tables: every entry a block handed out and not free, none twice in one table; ref counts match the entries
 * (a private block's, unkept, is 1 by construction: it must be in its own table only); tails private; a block
 * without a record (never hashed) only anonymous or in a private tail. Marks the private blocks in priv. */
static int check_tables(const kv_mgr *kv, const kv_seq *const *seqs, size_t n_seqs, uint32_t *refs, size_t *stamp,
                        const uint8_t *anon, uint8_t *priv, sim_err *err) {
  uint32_t nt = kv->n_touched;
  for (size_t q = 0; q < n_seqs; q++) {
    const kv_seq *s = seqs[q];
    if (s->n_blocks > s->cap || s->n_hashed > s->n_blocks)
      return check_fail(err, "seq %zu: n_blocks %u, n_hashed %u, cap %u inconsistent", q, s->n_blocks, s->n_hashed,
                        s->cap);
    for (uint32_t i = 0; i < s->n_blocks; i++) {
      uint32_t b = s->blocks[i];
      if (b >= nt) return check_fail(err, "seq %zu entry %u: block %u was never handed out (%u were)", q, i, b, nt);
      if (anon[b]) return check_fail(err, "seq %zu entry %u: block %u is free (on the anonymous stack)", q, i, b);
      if (stamp[b] == q + 1) return check_fail(err, "seq %zu entry %u: block %u appears twice in one table", q, i, b);
      stamp[b] = q + 1;
      refs[b]++;
      if (i >= s->n_hashed) priv[b] = 1;
    }
  }
  for (uint32_t b = 0; b < nt; b++) {
    if (anon[b] || priv[b]) {
      if (rec_kept(kv, b))
        return check_fail(err, "block %u: %s, yet it has a record", b, anon[b] ? "anonymous" : "in a private tail");
      continue;
    }
    if (!rec_kept(kv, b)) /* never hashed: it can only be anonymous or in a private tail */
      return check_fail(err, "block %u: no record (ref_cnt implied by its place), yet neither on the anonymous stack nor "
                        "in a private tail (%u table entries)", b, refs[b]);
    const kv_block *x = rec(kv, b);
    if (x->ref_cnt != refs[b])
      return check_fail(err, "block %u: ref_cnt %u but %u table entries", b, x->ref_cnt, refs[b]);
    if (!x->hash && !refs[b]) return check_fail(err, "block %u: a record without a hash or a holder", b);
  }
  /* tails of tables (index >= n_hashed) are private and unhashed; chain state matches */
  for (size_t q = 0; q < n_seqs; q++) {
    const kv_seq *s = seqs[q];
    for (uint32_t i = s->n_hashed; i < s->n_blocks; i++) {
      if (rec_hash(kv, s->blocks[i]) != 0 || refs[s->blocks[i]] != 1)
        return check_fail(err, "seq %zu entry %u (beyond n_hashed): block %u is hashed or shared", q, i, s->blocks[i]);
    }
    if (s->n_hashed > 0) {
      uint64_t h = rec_hash(kv, s->blocks[s->n_hashed - 1]);
      if (h != 0 && h != s->last_hash)
        return check_fail(err, "seq %zu: last_hash differs from the hash of block %u (entry %u)", q,
                          s->blocks[s->n_hashed - 1], s->n_hashed - 1);
    }
  }
  return SIM_OK;
}

/* The queue: well linked; nodes are cached free blocks or non-empty runs, no
 * two runs side by side; every free block is in it exactly once (cached
 * blocks as nodes, anonymous ones counted in runs and listed on the stack). */
static int check_queue(const kv_mgr *kv, uint8_t *seen, const uint8_t *anon, const uint8_t *priv, sim_err *err) {
  uint32_t nb = kv->num_blocks, nt = kv->n_touched, sentinel = nb, prev = sentinel;
  uint64_t len = 0, cached = 0, n_run = 0;
  kv_mgr *m = (kv_mgr *)kv; /* lnk() reads only */
  for (uint32_t x = kv->sent.next; x != sentinel; prev = x, x = lnk(m, x)->next) {
    if (x < nb) { /* a record slot */
      if (x >= kv->blk_used) return check_fail(err, "free queue: node %u is no record slot in use", x);
      uint32_t b = kv->blk[x].id;
      if (b >= nt) return check_fail(err, "free queue: block %u was never handed out", b);
      if (!rec_kept(kv, b) || kv->rec_of[b] != x)
        return check_fail(err, "free queue: slot %u names block %u, whose record it is not", x, b);
      if (priv[b] || rec(kv, b)->ref_cnt || !rec(kv, b)->hash)
        return check_fail(err, "free queue: block %u (position %" PRIu64 ") has ref_cnt %u, hash %s", b, len,
                          rec(kv, b)->ref_cnt, rec(kv, b)->hash ? "set" : "none");
      if (seen[b]) return check_fail(err, "free queue: block %u twice", b);
      seen[b] = 1;
      cached++;
    } else {
      if (x - nb - 1 >= kv->run_used) return check_fail(err, "free queue: node %u is no run", x);
      uint32_t c = kv->run[x - nb - 1].count;
      if (c == 0) return check_fail(err, "free queue: empty run at position %" PRIu64, len);
      if (is_run(kv, prev)) return check_fail(err, "free queue: two runs side by side at position %" PRIu64, len);
      n_run += c;
    }
    if (lnk(m, x)->prev != prev) return check_fail(err, "free queue: node %u has prev %u, expected %u", x, lnk(m, x)->prev, prev);
    if (++len > (uint64_t)nb + kv->run_used) return check_fail(err, "free queue: cycle");
  }
  if (kv->sent.prev != prev) return check_fail(err, "free queue: tail is %u but the last node reached is %u", kv->sent.prev, prev);
  if (n_run != (uint64_t)kv->n_anon + (nb - nt))
    return check_fail(err, "free queue: runs count %" PRIu64 " blocks, but %u are on the stack and %u never used", n_run,
                      kv->n_anon, nb - nt);
  if (cached + n_run != kv->num_free)
    return check_fail(err, "free queue: %" PRIu64 " cached + %" PRIu64 " anonymous, num_free %u", cached, n_run,
                      kv->num_free);
  for (uint32_t i = 0; i < kv->n_anon; i++) {
    uint32_t b = kv->anon[i];
    if (seen[b] || rec_kept(kv, b))
      return check_fail(err, "anonymous stack entry %u: block %u is also a queue node or carries a hash", i, b);
  }
  for (uint32_t b = 0; b < nt; b++)
    if (!anon[b] && !priv[b] && rec_kept(kv, b) && (rec(kv, b)->ref_cnt == 0) != (seen[b] != 0))
      return check_fail(err, "block %u: ref_cnt %u but %s the free queue", b, rec(kv, b)->ref_cnt,
                        seen[b] ? "in" : "not in");
  return SIM_OK;
}

/* The hash table and the block hashes are a bijection; every entry reachable. */
static int check_hashes(const kv_mgr *kv, sim_err *err) {
  uint32_t mask = kv->ht_cap - 1, n_entries = 0, n_hashed_blocks = 0;
  for (uint32_t i = 0; i < kv->ht_cap; i++) {
    uint64_t key = kv->ht_key[i];
    if (!key) continue;
    n_entries++;
    uint32_t b = kv->ht_val[i];
    if (b >= kv->n_touched || rec_hash(kv, b) != key)
      return check_fail(err, "hash table slot %u: maps to block %u which does not carry hash %016" PRIx64, i, b, key);
    for (uint32_t j = ht_home(kv, key); j != i; j = (j + 1) & mask)
      if (!kv->ht_key[j])
        return check_fail(err, "hash table slot %u: unreachable from home %u (empty slot %u)", i, ht_home(kv, key), j);
  }
  for (uint32_t b = 0; b < kv->n_touched; b++) n_hashed_blocks += rec_hash(kv, b) != 0;
  if (n_entries != n_hashed_blocks || n_entries != kv->ht_n)
    return check_fail(err, "hash table: %u entries (count %u) but %u blocks carry a hash", n_entries, kv->ht_n,
                      n_hashed_blocks);
  if (2ull * kv->ht_n > kv->ht_cap && kv->ht_n) return check_fail(err, "hash table: %u entries in %u slots", kv->ht_n, kv->ht_cap);
  if (!kv->caching && n_entries) return check_fail(err, "hash table: %u entries with prefix caching off", n_entries);
  return SIM_OK;
}

/* The records: each block that has one in its own slot, among those ever used; the unused slots listed once. */
static int check_records(const kv_mgr *kv, sim_err *err) {
  uint8_t *used = sim_calloc(kv->blk_used ? kv->blk_used : 1, 1);
  uint32_t n = 0, n_unused = 0;
  int rc = SIM_OK;
  for (uint32_t b = 0; b < kv->n_touched && rc == SIM_OK; b++) {
    if (!rec_kept(kv, b)) continue;
    uint32_t slot = kv->rec_of[b];
    if (slot >= kv->blk_used || used[slot] || kv->blk[slot].id != b)
      rc = check_fail(err, "block %u: record slot %u out of range (%u), shared or naming another block", b, slot,
                      kv->blk_used);
    else used[slot] = 1, n++;
  }
  for (uint32_t slot = kv->rec_free; slot != UINT32_MAX && rc == SIM_OK; slot = kv->blk[slot].l.next) {
    if (slot >= kv->blk_used || used[slot]) rc = check_fail(err, "unused record slot %u in use or listed twice", slot);
    else used[slot] = 1, n_unused++;
  }
  if (rc == SIM_OK && (n != kv->n_rec || n + n_unused != kv->blk_used))
    rc = check_fail(err, "records: %u kept (count %u), %u unused, %u slots", n, kv->n_rec, n_unused, kv->blk_used);
  free(used);
  return rc;
}

int kv_check(const kv_mgr *kv, const kv_seq *const *seqs, size_t n_seqs, sim_err *err) {
  size_t nt = kv->n_touched ? kv->n_touched : 1;
  uint32_t *refs = sim_calloc(nt, sizeof *refs);
  size_t *stamp = sim_calloc(nt, sizeof *stamp); /* last sequence (1-based) seen holding a block */
  uint8_t *seen = sim_calloc(nt, 1), *anon = sim_calloc(nt, 1), *priv = sim_calloc(nt, 1);
  int rc = SIM_OK;
  for (uint32_t i = 0; i < kv->n_anon && rc == SIM_OK; i++) {
    uint32_t b = kv->anon[i];
    if (b >= kv->n_touched || anon[b])
      rc = check_fail(err, "anonymous stack entry %u: block %u is out of range or listed twice", i, b);
    else anon[b] = 1;
  }
  if (rc == SIM_OK) rc = check_tables(kv, seqs, n_seqs, refs, stamp, anon, priv, err);
  if (rc == SIM_OK) rc = check_queue(kv, seen, anon, priv, err);
  if (rc == SIM_OK) rc = check_hashes(kv, err);
  if (rc == SIM_OK) rc = check_records(kv, err);
  free(refs);
  free(stamp);
  free(seen);
  free(anon);
  free(priv);
  return rc;
}
