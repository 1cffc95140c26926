/* cluster_apart.c: the timeline of replicas apart (cluster_impl.h): a fleet's replicas simulated one after the
 * other where nothing couples them (fleet.h). Uses the events of cluster_events.c; a tie it cannot order is
 * handed back (TL_FALL_BACK) for cluster.c to start the run again on the shared timeline. */
#include <stdlib.h>
#include <string.h>

#include "serve/cluster_impl.h"

/* Routes the trace as round robin would (requests refused at send take no
 * turn: closed here, at their arrival), and snapshots the cost model's
 * source counts for a fallback. */
static void apart_plan(cluster *c) {
  fleet *f = c->ap;
  uint32_t R = c->cfg.replicas;
  cost_src_counts(c->cost, f->src_snap);
  des_reset(&c->ev);
  size_t k = 0;
  for (size_t i = 0; i < c->n_reqs; i++) {
    request *r = &c->reqs[i];
    rq_reject why = cluster__refusal(c, r);
    if (why == REJ_NONE) {
      f->off[k++ % R + 1]++;
      continue;
    }
    r->send_ns = r->arrival_ns;
    r->state = RQ_REJECTED;
    r->reject = why;
    cluster__close(c, (uint32_t)i, r->arrival_ns);
    if (r->arrival_ns > f->end_ns) f->end_ns = r->arrival_ns;
  }
  for (uint32_t q = 0; q < R; q++) f->off[q + 1] += f->off[q];
  f->idx = sim_malloc((k ? k : 1) * sizeof *f->idx);
  size_t *fill = sim_malloc((size_t)R * sizeof *fill);
  memcpy(fill, f->off, (size_t)R * sizeof *fill);
  k = 0;
  for (size_t i = 0; i < c->n_reqs; i++)
    if (c->reqs[i].state != RQ_REJECTED) f->idx[fill[k++ % R]++] = (uint32_t)i;
  free(fill);
}

/* Pushes replica ri's next arrival as the shared timeline would have: when the
 * trace's previous request arrived. */
static void apart_push_arrival(cluster *c) {
  fleet *f = c->ap;
  if (f->cur >= f->off[f->ri + 1]) return;
  uint32_t j = f->idx[f->cur];
  sim_ns t = c->reqs[j].arrival_ns, from = j ? c->reqs[j - 1].arrival_ns : 0;
  des_push_from(&c->ev, t, from, EV_ARRIVAL, 0, j);
  /* the replica's request after it, a replica count of records further on: asked for now, in cache when its turn
     comes (without this, its two records were the two cache misses of every arrival) */
  if (f->cur + 1 < f->off[f->ri + 1]) {
    const request *next = &c->reqs[f->idx[f->cur + 1]];
    __builtin_prefetch(next);
    __builtin_prefetch(next - 1);
  }
}

static void apart_begin(cluster *c) {
  fleet *f = c->ap;
  des_reset(&c->ev);
  c->m.level_t_ns = 0;
  c->m.level_in_system = c->m.level_waiting = 0;
  c->m.ts_tokens_acc = c->m.ts_steps_acc = 0;
  f->cur = f->off[f->ri];
  f->closed = 0;
  f->finished_base = c->m.finished;
  f->running = true;
  apart_push_arrival(c);
  if (c->cfg.sample_interval_ns) des_push_late(&c->ev, 0, EV_SAMPLE, 0, 0);
}

static void apart_end(cluster *c, sim_ns t) {
  fleet *f = c->ap;
  const replica *rep = &c->reps[f->ri];
  fleet_replica_done(f, f->ri, rep->s.preemptions, kv_usage(rep->s.kv), c->m.finished - f->finished_base,
                     c->m.ts_tokens_acc, c->m.ts_steps_acc);
  if (t > f->end_ns) f->end_ns = t;
  f->running = false;
  f->ri++;
}

static void apart_finish(cluster *c) {
  fleet *f = c->ap;
  if (f->done) return;
  if (f->running) apart_end(c, c->ev.now_ns); /* interrupted */
  fleet_rows_into(f, &c->m);
  uint32_t in_system;
  c->m.peak_in_system = fleet_peak(c->reqs, c->n_reqs, &in_system);
  c->m.level_in_system = in_system;
  c->m.level_waiting = 0;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) c->m.level_waiting += sched_num_waiting(&c->reps[i].s);
  c->m.level_t_ns = f->end_ns;
  f->done = true;
  c->apart_outcome = 1;
}

static tl_status apart_slice(cluster *c, uint64_t max_events, sim_ns until_ns) {
  (void)until_ns; /* run only unpaced: a paced run keeps the shared timeline */
  fleet *f = c->ap;
  if (f->done) return TL_DONE;
  if (!f->idx) apart_plan(c);
  des_event ev;
  for (uint64_t k = 0; k < max_events; k++) {
    if (!f->running) {
      if (f->ri == f->replicas) {
        apart_finish(c);
        return TL_DONE;
      }
      if (f->off[f->ri] == f->off[f->ri + 1]) { /* no requests: idle throughout */
        fleet_replica_done(f, f->ri, 0, kv_usage(c->reps[f->ri].s.kv), 0, 0, 0);
        f->ri++;
        continue;
      }
      apart_begin(c);
    }
    bool popped = des_pop(&c->ev, &ev);
    SIM_ASSERT(popped); /* a replica with requests open has events */
    switch (ev.kind) {
      case EV_ARRIVAL:
        f->cur++;
        apart_push_arrival(c);
        cluster__send(c, (uint32_t)ev.arg, ev.t_ns);
        break;
      case EV_STEP: cluster__on_step(c, ev.target, ev.t_ns); break;
      case EV_DELIVER: cluster__route(c, (uint32_t)ev.arg, ev.t_ns); break;
      case EV_KICK:
        c->reps[ev.target].kick_pending = false;
        cluster__fill_queue(c, ev.target, ev.t_ns);
        break;
      case EV_SAMPLE: {
        const replica *rep = &c->reps[f->ri];
        fleet_sample(f, ev.t_ns, sched_num_running(&rep->s), sched_num_waiting(&rep->s), rep->s.preemptions,
                     kv_usage(rep->s.kv), c->m.finished - f->finished_base, c->m.ts_tokens_acc, c->m.ts_steps_acc);
        c->m.ts_tokens_acc = c->m.ts_steps_acc = 0;
        des_push_late(&c->ev, ev.t_ns + c->cfg.sample_interval_ns, EV_SAMPLE, 0, 0);
        break;
      }
      default: SIM_ASSERT(!"unexpected event with the replicas apart");
    }
    metrics_level(&c->m, ev.t_ns, c->in_flight, c->n_waiting);
    if (c->ev.ambiguous) {
      return TL_FALL_BACK;
    }
    if (f->closed == f->off[f->ri + 1] - f->off[f->ri]) apart_end(c, ev.t_ns);
  }
  return TL_RUNNING;
}

const cluster_timeline cluster_apart_timeline = {"apart", apart_slice, apart_finish};
