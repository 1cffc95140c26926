/* des.c: binary heap of events keyed by (t_ns, class, push_ns, seq). O(log n) push and pop. */
#include "core/des.h"

#include <stdlib.h>

void des_init(des *d) {
  d->heap = NULL;
  d->cap = 0;
  d->n_popped = 0;
  des_reset(d);
}

void des_reset(des *d) {
  d->n = 0;
  d->now_ns = 0;
  d->next_seq = 0;
  d->from_used = false;
  d->ambiguous = false;
  d->amb_t = d->amb_push = SIM_NS_INF;
  d->amb_kinds = 0;
}

void des_deinit(des *d) {
  free(d->heap);
  d->heap = NULL;
  d->n = d->cap = 0;
}

#define LATE_OFFSET (1ull << 62)
#define FROM_BIT (1ull << 61)

/* (time, class, push time, sequence): without des_push_from the push time
 * grows with the sequence number, so this is (time, class, sequence). */
static inline bool ev_less(const des_event *a, const des_event *b) {
  if (a->t_ns != b->t_ns) return a->t_ns < b->t_ns;
  uint64_t la = a->seq & LATE_OFFSET, lb = b->seq & LATE_OFFSET;
  if (la != lb) return la < lb;
  if (a->push_ns != b->push_ns) return a->push_ns < b->push_ns;
  return a->seq < b->seq;
}

static void push_seq(des *d, sim_ns t_ns, sim_ns push_ns, uint64_t seq, uint32_t kind, uint32_t target,
                     uint64_t arg) {
  SIM_ASSERT(t_ns >= d->now_ns);
  SIM_GROW(d->heap, d->cap, d->n + 1);
  des_event ev = {t_ns, push_ns, seq, kind, target, arg};
  size_t i = d->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!ev_less(&ev, &d->heap[p])) break;
    d->heap[i] = d->heap[p];
    i = p;
  }
  d->heap[i] = ev;
}

void des_push(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(d->next_seq < FROM_BIT);
  push_seq(d, t_ns, d->now_ns, d->next_seq++, kind, target, arg);
}

void des_push_late(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(d->next_seq < FROM_BIT);
  push_seq(d, t_ns, d->now_ns, LATE_OFFSET + d->next_seq++, kind, target, arg);
}

void des_push_from(des *d, sim_ns t_ns, sim_ns push_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(d->next_seq < FROM_BIT && push_ns <= t_ns);
  d->from_used = true;
  push_seq(d, t_ns, push_ns, FROM_BIT + d->next_seq++, kind, target, arg);
}

bool des_pop(des *d, des_event *out) {
  if (d->n == 0) return false;
  *out = d->heap[0];
  des_event last = d->heap[--d->n];
  size_t i = 0, n = d->n;
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= n) break;
    size_t c = (l + 1 < n && ev_less(&d->heap[l + 1], &d->heap[l])) ? l + 1 : l;
    if (!ev_less(&d->heap[c], &last)) break;
    d->heap[i] = d->heap[c];
    i = c;
  }
  if (n) d->heap[i] = last;
  SIM_ASSERT(out->t_ns >= d->now_ns);
  if (d->from_used && !(out->seq & LATE_OFFSET)) { /* ordinary events of one (time, push time) pop together */
    unsigned kind = out->seq & FROM_BIT ? 2u : 1u;
    if (out->t_ns != d->amb_t || out->push_ns != d->amb_push) d->amb_t = out->t_ns, d->amb_push = out->push_ns, d->amb_kinds = 0;
    d->amb_kinds |= kind;
    if (d->amb_kinds == 3u) d->ambiguous = true;
  }
  d->now_ns = out->t_ns;
  d->n_popped++;
  return true;
}

sim_ns des_peek_time(const des *d) { return d->n ? d->heap[0].t_ns : SIM_NS_INF; }
