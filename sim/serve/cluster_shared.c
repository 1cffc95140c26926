/* cluster_shared.c: the shared timeline (cluster_impl.h): every replica's events on one heap, in the heap's
 * order; what each event does is cluster_events.c's. */
#include "serve/cluster_impl.h"

static tl_status shared_slice(cluster *c, uint64_t max_events, sim_ns until_ns) {
  des_event ev;
  for (uint64_t k = 0; k < max_events; k++) {
    if (c->complete || c->stopped) return TL_DONE;
    sim_ns t = des_peek_time(&c->ev);
    if (t == SIM_NS_INF) return TL_DONE;
    if (c->cfg.time_limit_ns && t > c->cfg.time_limit_ns) {
      c->stopped = true;
      return TL_DONE;
    }
    if (t > until_ns) return TL_RUNNING;
    des_pop(&c->ev, &ev);
    switch (ev.kind) {
      case EV_ARRIVAL: cluster__on_arrival(c, (uint32_t)ev.arg, ev.t_ns); break;
      case EV_STEP: cluster__on_step(c, ev.target, ev.t_ns); break;
      case EV_SAMPLE: cluster__on_sample(c, ev.t_ns); break;
      case EV_FAIL: cluster__on_fail(c, ev.target, ev.t_ns); break;
      case EV_DELIVER:
        if (c->reqs[ev.arg].state == RQ_CANCELLED) { /* open mode: its client left while it was in the frontend */
          cluster__free_slot(c, (uint32_t)ev.arg);
          break;
        }
        cluster__route(c, (uint32_t)ev.arg, ev.t_ns);
        cluster__fill_slots(c, ev.t_ns); /* a delivery rejected for want of a replica freed its slot */
        break;
      case EV_KICK:
        c->reps[ev.target].kick_pending = false;
        cluster__fill_queue(c, ev.target, ev.t_ns);
        break;
      case EV_SCALE: cluster__on_scale(c, ev.t_ns); break;
      case EV_READY: cluster__on_ready(c, ev.target, ev.arg, ev.t_ns); break;
      case EV_XFER: cluster__on_xfer(c, ev.target, (uint32_t)ev.arg, ev.t_ns); break;
      case EV_GSTEP: cluster__on_gstep(c, ev.target, ev.arg, ev.t_ns); break;
      case EV_GKICK:
        c->grp[ev.target].kick_pending = false;
        cluster__fill_group(c, ev.target, ev.t_ns);
        break;
      default: SIM_ASSERT(!"unknown event");
    }
    metrics_level(&c->m, ev.t_ns, c->in_flight, c->n_waiting);
  }
  return c->complete || c->stopped ? TL_DONE : TL_RUNNING;
}

static void shared_finish(cluster *c) { (void)c; } /* its totals were kept as it ran */

const cluster_timeline cluster_shared_timeline = {"shared", shared_slice, shared_finish};
