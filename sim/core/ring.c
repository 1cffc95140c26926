/* ring.c: the growable ring deque of indices (ring.h). */
#include "core/ring.h"

#include <stdlib.h>
#include <string.h>

void ring_init(idx_ring *r, uint32_t cap0) {
  memset(r, 0, sizeof *r);
  r->cap = cap0 ? cap0 : 1;
  r->v = sim_malloc((size_t)r->cap * sizeof *r->v);
}

void ring_free(idx_ring *r) {
  free(r->v);
  memset(r, 0, sizeof *r);
}

static void grow(idx_ring *r) {
  if (r->len < r->cap) return;
  SIM_ASSERT(r->cap <= UINT32_MAX / 2);
  uint32_t nc = r->cap * 2;
  uint32_t *w = sim_malloc((size_t)nc * sizeof *w);
  for (uint32_t i = 0; i < r->len; i++) w[i] = ring_at(r, i);
  free(r->v);
  r->v = w;
  r->head = 0;
  r->cap = nc;
}

void ring_push_back(idx_ring *r, uint32_t x) {
  grow(r);
  r->v[(r->head + r->len) % r->cap] = x;
  r->len++;
}

void ring_push_front(idx_ring *r, uint32_t x) {
  grow(r);
  r->head = (r->head + r->cap - 1) % r->cap;
  r->v[r->head] = x;
  r->len++;
}

uint32_t ring_pop_front(idx_ring *r) {
  SIM_ASSERT(r->len > 0);
  uint32_t x = r->v[r->head];
  r->head = (r->head + 1) % r->cap;
  r->len--;
  return x;
}

uint32_t ring_remove(idx_ring *r, uint32_t x) {
  uint32_t w = 0;
  for (uint32_t i = 0; i < r->len; i++) {
    uint32_t v = ring_at(r, i);
    if (v != x) r->v[(r->head + w++) % r->cap] = v;
  }
  uint32_t removed = r->len - w;
  r->len = w;
  return removed;
}
