/* des.c: binary heap of events keyed by (t_ns, seq). O(log n) push and pop. */
#include "core/des.h"

#include <stdlib.h>

void des_init(des *d) {
  d->heap = NULL;
  d->n = d->cap = 0;
  d->now_ns = 0;
  d->next_seq = 0;
  d->n_popped = 0;
}

void des_deinit(des *d) {
  free(d->heap);
  d->heap = NULL;
  d->n = d->cap = 0;
}

static inline bool ev_less(const des_event *a, const des_event *b) {
  return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

static void push_seq(des *d, sim_ns t_ns, uint64_t seq, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(t_ns >= d->now_ns);
  SIM_GROW(d->heap, d->cap, d->n + 1);
  des_event ev = {t_ns, seq, kind, target, arg};
  size_t i = d->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!ev_less(&ev, &d->heap[p])) break;
    d->heap[i] = d->heap[p];
    i = p;
  }
  d->heap[i] = ev;
}

#define LATE_OFFSET (1ull << 62)

void des_push(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(d->next_seq < LATE_OFFSET);
  push_seq(d, t_ns, d->next_seq++, kind, target, arg);
}

void des_push_late(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  push_seq(d, t_ns, LATE_OFFSET + d->next_seq++, kind, target, arg);
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
  d->now_ns = out->t_ns;
  d->n_popped++;
  return true;
}

sim_ns des_peek_time(const des *d) { return d->n ? d->heap[0].t_ns : SIM_NS_INF; }
