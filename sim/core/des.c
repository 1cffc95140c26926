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

#define LATE_OFFSET DES_LATE_BIT
#define FROM_BIT DES_FROM_BIT

/* Puts ev at the free place i and moves it up while it precedes its parent. */
static void sift_up(des *d, size_t i, des_event ev) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!des_before(&ev, &d->heap[p])) break;
    d->heap[i] = d->heap[p];
    i = p;
  }
  d->heap[i] = ev;
}

/* Puts ev at the free place i (below n) and moves it down while a child precedes it. */
static void sift_down(des *d, size_t i, des_event ev) {
  size_t n = d->n;
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= n) break;
    size_t c = (l + 1 < n && des_before(&d->heap[l + 1], &d->heap[l])) ? l + 1 : l;
    if (!des_before(&d->heap[c], &ev)) break;
    d->heap[i] = d->heap[c];
    i = c;
  }
  d->heap[i] = ev;
}

static void push_ev(des *d, des_event ev) {
  SIM_ASSERT(ev.t_ns >= d->now_ns);
  SIM_GROW(d->heap, d->cap, d->n + 1);
  sift_up(d, d->n++, ev);
}

static void push_seq(des *d, sim_ns t_ns, sim_ns push_ns, uint64_t seq, uint32_t kind, uint32_t target,
                     uint64_t arg) {
  push_ev(d, (des_event){t_ns, push_ns, seq, kind, target, arg});
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

/* The clock and the tie watch (des.h) for the event *out just taken from the root. */
static void popped(des *d, const des_event *out) {
  SIM_ASSERT(out->t_ns >= d->now_ns);
  if (d->from_used && !(out->seq & LATE_OFFSET)) { /* ordinary events of one (time, push time) pop together */
    unsigned kind = out->seq & FROM_BIT ? 2u : 1u;
    if (out->t_ns != d->amb_t || out->push_ns != d->amb_push) d->amb_t = out->t_ns, d->amb_push = out->push_ns, d->amb_kinds = 0;
    d->amb_kinds |= kind;
    if (d->amb_kinds == 3u) d->ambiguous = true;
  }
  d->now_ns = out->t_ns;
  d->n_popped++;
}

bool des_pop(des *d, des_event *out) {
  if (d->n == 0) return false;
  *out = d->heap[0];
  if (--d->n) sift_down(d, 0, d->heap[d->n]);
  popped(d, out);
  return true;
}

bool des_remove(des *d, uint32_t kind, uint32_t target, des_event *out) {
  size_t k = d->n;
  for (size_t i = 0; i < d->n; i++)
    if (d->heap[i].kind == kind && d->heap[i].target == target && (k == d->n || des_before(&d->heap[i], &d->heap[k])))
      k = i;
  if (k == d->n) return false;
  *out = d->heap[k];
  des_event last = d->heap[--d->n];
  if (k < d->n) { /* the last event takes its place, then goes the way its key says */
    if (k > 0 && des_before(&last, &d->heap[(k - 1) / 2])) sift_up(d, k, last);
    else sift_down(d, k, last);
  }
  return true;
}

void des_put_back(des *d, const des_event *ev) { push_ev(d, *ev); }

void des_took(des *d, const des_event *ev) { popped(d, ev); }

sim_ns des_peek_time(const des *d) { return d->n ? d->heap[0].t_ns : SIM_NS_INF; }
