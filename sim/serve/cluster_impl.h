/* cluster_impl.h: what cluster.c shares with cluster_apart.c (the replicas of
 * a fleet simulated apart, fleet.h); not for other modules. */
#ifndef SIM_CLUSTER_IMPL_H
#define SIM_CLUSTER_IMPL_H

#include "serve/cluster.h"

enum { EV_ARRIVAL = 1, EV_STEP, EV_SAMPLE, EV_FAIL, EV_KICK, EV_DELIVER, EV_GSTEP, EV_GKICK };

/* cluster.c's event handlers and request steps */
rq_reject cluster__refusal(const cluster *c, const request *r); /* why r is refused at send, REJ_NONE if not */
void cluster__close(cluster *c, uint32_t idx, sim_ns now);
void cluster__send(cluster *c, uint32_t idx, sim_ns now);
void cluster__route(cluster *c, uint32_t idx, sim_ns now);
void cluster__on_step(cluster *c, uint32_t ri, sim_ns now);
void cluster__fill_queue(cluster *c, uint32_t ri, sim_ns now);

/* cluster_apart.c: runs up to max_events events of the replicas apart; true when all are done */
bool cluster__apart_slice(cluster *c, uint64_t max_events);
/* the rows, the peak and the span of the replicas run so far (at the end, or on an interrupt) */
void cluster__apart_finish(cluster *c);

#endif
