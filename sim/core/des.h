/* des.h: discrete-event core: a virtual clock and a min-heap of events ordered
 * by (time, sequence number).
 *
 * Invariants:
 *  - des_now() never decreases; an event is never scheduled before now.
 *  - events at equal time pop in the order they were pushed (the time of the
 *    push, then the sequence number, break ties), so runs are deterministic;
 *    "late" events pop after all ordinary events of their time.
 *  - des_push_from pushes an event as if it had been pushed at an earlier or
 *    later virtual time (a replica simulated apart from the others, whose
 *    arrivals the whole fleet's timeline would push: cluster.c); where such an
 *    event ties an ordinarily pushed one in time, class and push time, their
 *    order is unknown and `ambiguous` is set.
 *  - events are stored by value in one growable array: no allocation per
 *    event (the array doubles only when the heap outgrows it).
 * Ownership: des_init/des_deinit on caller-owned storage. */
#ifndef SIM_DES_H
#define SIM_DES_H

#include "core/common.h"

/* des_event.seq's flags: a late event (des_push_late), one pushed with des_push_from */
#define DES_LATE_BIT (1ull << 62)
#define DES_FROM_BIT (1ull << 61)

typedef struct des_event {
  sim_ns t_ns;     /* when it fires, virtual ns */
  sim_ns push_ns;  /* virtual time of the push (tie-breaker) */
  uint64_t seq;    /* push order, tie-breaker; bit 62: late, bit 61: pushed with des_push_from */
  uint32_t kind;   /* caller-defined event kind */
  uint32_t target; /* caller-defined (e.g. replica index) */
  uint64_t arg;    /* caller-defined payload (e.g. request index) */
} des_event;

typedef struct des {
  des_event *heap; /* binary min-heap by (t_ns, seq) */
  size_t n, cap;   /* events held, capacity */
  sim_ns now_ns;   /* virtual clock: time of the last popped event */
  uint64_t next_seq;
  uint64_t n_popped; /* events processed so far */
  bool from_used;     /* des_push_from was called: pops watch for ties (below); the shared timeline does not pay */
  bool ambiguous;     /* des_push_from: an order the heap could not know (above) */
  sim_ns amb_t, amb_push; /* the last ordinary event popped: its time and push time, */
  unsigned amb_kinds;     /* and which pushes (1 ordinary, 2 des_push_from) had that key */
} des;

void des_init(des *d);
void des_deinit(des *d);
/* Empties the heap and restarts the clock at 0 (keeps its memory). */
void des_reset(des *d);
/* Schedules an event at absolute time t_ns (>= now). O(log n). */
void des_push(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg);
/* Like des_push, but the event pops after every ordinary event of the same
 * time, even ones pushed later (its sequence number is offset by 2^62).
 * Used to act once all simultaneous arrivals have been seen. */
void des_push_late(des *d, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg);
/* des_push with the push time given (push_ns <= t_ns; ordinary class). */
void des_push_from(des *d, sim_ns t_ns, sim_ns push_ns, uint32_t kind, uint32_t target, uint64_t arg);
/* Pops the earliest event into *ev and advances the clock. False when empty. */
bool des_pop(des *d, des_event *ev);
/* Removes the earliest pending event of this kind and target into *out; false if there is none. O(n). */
bool des_remove(des *d, uint32_t kind, uint32_t target, des_event *out);
/* Writes into *ev the event des_push would push now (its push time and sequence number taken), without pushing it: a caller
 * holding some events outside the heap for a while (cluster.c, decode runs) puts it back with des_put_back, or
 * accounts for its pop with des_took, in key order with the heap's (des_before). */
static inline void des_stamp(des *d, des_event *ev, sim_ns t_ns, uint32_t kind, uint32_t target, uint64_t arg) {
  SIM_ASSERT(d->next_seq < DES_FROM_BIT && t_ns >= d->now_ns);
  /* field by field into place: a whole event returned and copied stalled on its own stores */
  ev->t_ns = t_ns, ev->push_ns = d->now_ns, ev->seq = d->next_seq++;
  ev->kind = kind, ev->target = target, ev->arg = arg;
}
/* Pushes an event with the keys it already has (from des_pop, des_remove or des_stamp). */
void des_put_back(des *d, const des_event *ev);
/* The clock and the tie watch of a pop, for an event held outside the heap that precedes every event in it. */
void des_took(des *d, const des_event *ev);
/* Time of the earliest pending event, or SIM_NS_INF if none. */
sim_ns des_peek_time(const des *d);
/* Whether a pops before b: (time, class, push time, sequence); without des_push_from the push time grows with the
 * sequence number, so this is (time, class, sequence). */
static inline bool des_before(const des_event *a, const des_event *b) {
  if (a->t_ns != b->t_ns) return a->t_ns < b->t_ns;
  uint64_t la = a->seq & DES_LATE_BIT, lb = b->seq & DES_LATE_BIT;
  if (la != lb) return la < lb;
  if (a->push_ns != b->push_ns) return a->push_ns < b->push_ns;
  return a->seq < b->seq;
}
/* The earliest pending event (not popped), or NULL if none. */
static inline const des_event *des_peek(const des *d) { return d->n ? &d->heap[0] : NULL; }
static inline sim_ns des_now(const des *d) { return d->now_ns; }

#endif
