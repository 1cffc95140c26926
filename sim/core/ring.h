/* ring.h: the project's one queue: a growable ring deque of uint32 indices
 * (request numbers). The scheduler's waiting queue (push at the back, a
 * preempted request back at the front) and the client queue of requests held
 * under --max-concurrency use it. Growth doubles and keeps the order. */
#ifndef SIM_RING_H
#define SIM_RING_H

#include "core/common.h"

typedef struct idx_ring {
  uint32_t *v;
  uint32_t head, len, cap;
} idx_ring;

/* An empty ring with room for cap0 (>= 1) entries before it grows. */
void ring_init(idx_ring *r, uint32_t cap0);
void ring_free(idx_ring *r);
void ring_push_back(idx_ring *r, uint32_t x);
void ring_push_front(idx_ring *r, uint32_t x);
/* The entry i places from the front (i < len). */
static inline uint32_t ring_at(const idx_ring *r, uint32_t i) { return r->v[(r->head + i) % r->cap]; }
static inline uint32_t ring_front(const idx_ring *r) { return r->v[r->head]; }
/* Removes and returns the front (len > 0). */
uint32_t ring_pop_front(idx_ring *r);
/* Removes every entry equal to x, keeping the others' order (O(len));
 * returns how many it removed. */
uint32_t ring_remove(idx_ring *r, uint32_t x);

#endif
