/* sched_impl.h: what sched.c shares with its SGLang variant (sched_sglang.c);
 * not for other modules. */
#ifndef SIM_SCHED_IMPL_H
#define SIM_SCHED_IMPL_H

#include "serve/sched.h"

void sched__item_push(sched_step *st, uint32_t idx, uint32_t tokens, bool samples);
/* Returns a request's blocks to the pool and frees its table's memory. */
void sched__release(sched *s, request *r);
/* What request r's tokens are, for prefix hashing (kv.h). */
kv_content sched__content_of(const sched *s, const request *r);
/* Whether request r's tokens can be shared (prefix ids or a session; else sched__content_of says KV_CONTENT_NONE
 * and kv_commit registers nothing). */
static inline bool sched__shares(const request *r) { return r->n_hash || r->session; }
/* A step computes n tokens of request idx (counted at scheduling time, sched.h). */
void sched__account(sched *s, sched_step *st, request *reqs, uint32_t idx, uint32_t n);

/* SGLang (ADMIT_TOKEN_RATIO): the ratio's initial state, and one step into st (nothing added when nothing
 * can run). */
void sched__sglang_init(sched *s);
void sched__sglang(sched *s, sched_step *st, request *reqs, sim_ns now);

#endif
