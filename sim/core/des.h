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
/* Time of the earliest pending event, or SIM_NS_INF if none. */
sim_ns des_peek_time(const des *d);
/* The earliest pending event (not popped), or NULL if none. */
static inline const des_event *des_peek(const des *d) { return d->n ? &d->heap[0] : NULL; }
static inline sim_ns des_now(const des *d) { return d->now_ns; }

#endif
