/* cluster_open.c: open mode (`servesim serve`, cluster.h): the caller creates each request, makes it arrive
 * and may cancel it; closed requests' slots and prompt ids are reused. Uses the events of cluster_events.c. */
#include "serve/cluster_impl.h"

#include <stdlib.h>
#include <string.h>

void cluster_open(cluster *c, const cluster_hooks *hooks) {
  fleet_free(c->ap); /* requests come and go: the shared timeline */
  c->ap = NULL;
  c->tl = &cluster_shared_timeline;
  SIM_ASSERT(c->n_reqs == 0 && !c->open);
  c->open = true;
  c->complete = false;
  c->hooks = *hooks;
  c->cap_reqs = 1; /* a cluster built on an empty trace has one slot */
  /* a server runs for days: ITL and step times go to the histograms at once (metrics.h), bounded memory */
  c->m.itl_exact_max = 1;
  c->m.steps_exact_max = 1;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) c->reps[i].s.hash_block_tokens = c->cfg.block_tokens;
}

size_t cluster_open_requests(const cluster *c) { return c->n_reqs - c->n_free; }

uint32_t cluster_new_request(cluster *c, uint32_t prompt_tokens, uint32_t output_tokens) {
  SIM_ASSERT(c->open);
  uint32_t idx;
  if (c->n_free) {
    idx = c->free_slots[--c->n_free];
  } else {
    SIM_ASSERT(c->n_reqs < UINT32_MAX - 1);
    if (c->n_reqs == c->cap_reqs) {
      c->cap_reqs *= 2;
      c->reqs = sim_realloc(c->reqs, c->cap_reqs * sizeof *c->reqs);
    }
    idx = (uint32_t)c->n_reqs++;
  }
  request *r = &c->reqs[idx];
  memset(r, 0, sizeof *r);
  r->id = c->next_id++;
  r->prompt_tokens = prompt_tokens;
  r->output_tokens = output_tokens;
  r->num_tokens = prompt_tokens;
  r->first_sched_ns = SIM_NS_INF;
  r->queued_ns = SIM_NS_INF;
  r->replica = UINT32_MAX;
  r->prefill_worker = UINT32_MAX;
  r->state = RQ_PENDING;
  kv_seq_init(&r->kv);
  return idx;
}

/* The schedulers read the id arena through their hash_ids (it moves when it grows or is compacted). */
static void point_schedulers(cluster *c) {
  for (uint32_t i = 0; i < c->cfg.replicas; i++) c->reps[i].s.hash_ids = c->ids;
}

/* Drops the ids of closed requests once they are most of the arena: the open requests' runs are copied
 * into a fresh arena; O(ids of open requests), amortized over the requests that closed. */
static void compact_ids(cluster *c) {
  size_t live = c->n_ids - c->dead_ids, w = 0, cap = live ? live : 1;
  uint64_t *fresh = sim_malloc(cap * sizeof *fresh);
  for (size_t i = 0; i < c->n_reqs; i++) {
    request *r = &c->reqs[i];
    if (!r->n_hash) continue;
    SIM_ASSERT(w + r->n_hash <= live);
    memcpy(fresh + w, c->ids + r->hash_off, r->n_hash * sizeof *fresh);
    r->hash_off = (uint32_t)w;
    w += r->n_hash;
  }
  free(c->ids);
  c->ids = fresh;
  c->cap_ids = cap;
  c->n_ids = w;
  c->dead_ids = 0;
}

void cluster_set_prompt_ids(cluster *c, uint32_t idx, const uint64_t *ids, uint32_t n) {
  request *r = &c->reqs[idx];
  SIM_ASSERT(c->open && r->state == RQ_PENDING && r->n_hash == 0);
  if (!n) return;
  SIM_ASSERT((uint64_t)n * c->cfg.block_tokens <= r->prompt_tokens);
  if (c->dead_ids > 4096 && c->dead_ids * 2 > c->n_ids) compact_ids(c);
  SIM_GROW(c->ids, c->cap_ids, c->n_ids + n);
  SIM_ASSERT(c->n_ids + n <= UINT32_MAX);
  memcpy(c->ids + c->n_ids, ids, n * sizeof *ids);
  r->hash_off = (uint32_t)c->n_ids;
  r->n_hash = n;
  c->n_ids += n;
  point_schedulers(c);
}

void cluster_arrive(cluster *c, uint32_t idx, sim_ns now) {
  SIM_ASSERT(c->open && c->reqs[idx].state == RQ_PENDING);
  SIM_ASSERT(now >= c->m.level_t_ns && now <= des_peek_time(&c->ev));
  c->reqs[idx].arrival_ns = now;
  if (c->cfg.max_concurrency && (c->in_flight >= c->cfg.max_concurrency || c->cq.len)) {
    c->reqs[idx].state = RQ_CLIENT;
    ring_push_back(&c->cq, idx);
  } else {
    cluster__send(c, idx, now);
  }
  metrics_level(&c->m, now, c->in_flight, c->n_waiting);
}

void cluster_cancel(cluster *c, uint32_t idx, sim_ns now) {
  SIM_ASSERT(c->open);
  request *r = &c->reqs[idx];
  switch ((rq_state)r->state) {
    case RQ_PENDING: cluster__free_slot(c, idx); return;
    case RQ_CLIENT: {
      uint32_t n_removed = ring_remove(&c->cq, idx);
      SIM_ASSERT(n_removed == 1);
      cluster__free_slot(c, idx);
      break;
    }
    case RQ_FRONTEND: /* its DELIVER event is pending: the slot is freed when it comes (the timeline) */
      r->state = RQ_CANCELLED;
      cluster__release_slot(c, now);
      break;
    case RQ_WAITING:
    case RQ_RUNNING: {
      uint32_t ri = r->replica;
      replica *rep = &c->reps[ri];
      sched_abort(&rep->s, c->reqs, idx);
      r->state = RQ_CANCELLED;
      SIM_ASSERT(rep->outstanding > 0);
      rep->outstanding--;
      cluster__touch(c, ri);
      cluster__free_slot(c, idx);
      cluster__release_slot(c, now);
      /* blocks were freed: an idle replica with requests waiting for them starts a step */
      if (sched_has_work(&rep->s)) cluster__kick(c, ri, now);
      break;
    }
    default: SIM_ASSERT(!"cancel of a closed request"); return;
  }
  c->n_closed++;
  metrics_level(&c->m, now, c->in_flight, c->n_waiting);
}
