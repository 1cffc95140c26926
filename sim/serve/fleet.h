/* fleet.h: what a fleet run keeps while its replicas are simulated apart,
 * one after the other (cluster_apart.c, "replicas apart").
 *
 * With round-robin routing, open-loop arrivals and nothing shared between
 * replicas (no client slots, failures, data parallelism or time limit), a
 * replica's requests are known before the run (every request routed in turn,
 * minus those refused at send) and nothing another replica does changes what
 * happens to them. So each replica runs alone, its state hot in cache, and
 * the run's totals are put together afterwards, equal to the shared
 * timeline's (docs/ARCHITECTURE.md, "Fleets"):
 *  - per-request times: the same events in the same order on each replica
 *    (des_push_from gives a replica's arrivals the push time the shared
 *    timeline gives them; a tie it cannot order sends the run back to the
 *    shared timeline);
 *  - step counts and time sums: per replica already (metrics.h);
 *  - level integrals: exact integer sums over replicas;
 *  - the peak in system: recomputed from the requests' send and finish times,
 *    a level that lasts past its nanosecond (metrics.h);
 *  - time-series rows: each replica's state at every sample instant, added
 *    in replica order; after its last request, its final state.
 * Ownership: fleet_new/fleet_free; the cluster holds one. */
#ifndef SIM_FLEET_H
#define SIM_FLEET_H

#include "hw/cost.h"
#include "metrics/metrics.h"
#include "serve/request.h"

typedef struct fleet {
  uint32_t replicas;
  uint32_t ri;          /* replica simulated now (replicas when all are done) */
  bool running;         /* ri's own timeline is set up */
  bool done;            /* the rows and the peak are put together */
  uint32_t *idx;        /* requests routed to each replica, in arrival order: idx[off[r] .. off[r + 1]) */
  size_t *off;
  size_t cur;           /* ri's next request to arrive */
  size_t closed;        /* ri's requests closed */
  uint64_t finished_base; /* requests finished before ri's run */
  sim_ns end_ns;        /* the latest last event: finished replicas, refusals at send */
  uint64_t src_snap[OP_COUNT][SRC_COUNT]; /* the cost model's source counts at the start (a fallback restores them) */
  /* time series */
  sim_ns interval_ns;
  ts_row *rows;         /* summed over the replicas that sampled them */
  double *kv_sum, *kv_max;
  size_t n_rows, cap_rows;
  uint32_t *k_own;      /* per replica: rows it sampled itself */
  uint64_t *fin_pre, *fin_done, *left_tok, *left_steps; /* per replica: final state, counts since its last sample */
  double *fin_u;
} fleet;

fleet *fleet_new(uint32_t replicas, sim_ns interval_ns);
void fleet_free(fleet *f);
/* Replica f->ri's state at sample instant t (a multiple of the interval). */
void fleet_sample(fleet *f, sim_ns t, uint32_t running, uint32_t waiting, uint64_t preemptions, double kv_usage,
                  uint64_t finished, uint64_t tokens, uint64_t steps);
/* Replica r is done: its final state, and the tokens and steps after its last sample. */
void fleet_replica_done(fleet *f, uint32_t r, uint64_t preemptions, double kv_usage, uint64_t finished,
                        uint64_t tokens, uint64_t steps);
/* The rows of every sample instant before end_ns, into m's time series. */
void fleet_rows_into(fleet *f, metrics_rec *m);
/* The most requests in the system at the end of an instant (metrics.h), from
 * the requests' send and finish times; *in_system: those sent and not finished. */
uint32_t fleet_peak(const request *reqs, size_t n, uint32_t *in_system);

#endif
