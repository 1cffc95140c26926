/* cluster_events.c: what the cluster's events do, whichever timeline runs them (cluster_impl.h): a request's
 * way (arrival, client slot, send, frontend delivery, routing, close), a replica's steps (scheduled, placed on
 * its pipeline, ended; runs of steady decode steps in closed form; lockstep DP groups), a lost replica and a
 * time-series sample. The lowest part of the cluster: it calls no function of cluster.c or of a timeline. */
#include "serve/cluster_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Replica ri's state may have changed (requests routed, scheduled,
 * finished, preempted or drained; blocks taken or freed): the router's view
 * of it and the waiting total follow, before anything else reads them. */
void cluster__touch(cluster *c, uint32_t ri) {
  replica *rep = &c->reps[ri];
  uint32_t w = sched_num_waiting(&rep->s);
  c->n_waiting = c->n_waiting - rep->waiting_seen + w;
  rep->waiting_seen = w;
  router_view v = {rep->failed || rep->state != REP_READY, rep->outstanding, c->cfg.router == ROUTE_LEAST_KV ? kv_usage(rep->s.kv) : 0.0};
  uint32_t at;
  router *rt = cluster__router_of(c, ri, &at);
  router_update(rt, at, v);
}

void cluster__replica_off(cluster *c, uint32_t ri, sim_ns now) {
  replica *rep = &c->reps[ri];
  SIM_ASSERT(rep->state != REP_OFF && rep->outstanding == 0);
  c->so.held_replica_s += (double)(now - rep->held_since) / 1e9;
  if (rep->state == REP_DRAINING) c->so.serving_replica_s += (double)(now - rep->ready_since) / 1e9;
  rep->state = REP_OFF;
  cluster__touch(c, ri);
}

/* A draining replica that holds nothing more is off. */
static void drained(cluster *c, uint32_t ri, sim_ns now) {
  if (c->reps[ri].state == REP_DRAINING && c->reps[ri].outstanding == 0) cluster__replica_off(c, ri, now);
}

void cluster__free_slot(cluster *c, uint32_t idx) {
  c->dead_ids += c->reqs[idx].n_hash; /* its prompt ids: garbage until the next compaction */
  c->reqs[idx].n_hash = 0;
  SIM_GROW(c->free_slots, c->cap_free, c->n_free + 1);
  c->free_slots[c->n_free++] = idx;
}

/* Request idx is done with (finished or rejected). In open mode its caller
 * hears of it, then the slot is free (the call sites touch it no more). */
void cluster__close(cluster *c, uint32_t idx, sim_ns now) {
  if (c->ap && c->ap->running) c->ap->closed++;
  if (c->open) {
    c->n_closed++;
    if (c->hooks.closed) c->hooks.closed(c->hooks.ctx, idx, now);
    cluster__free_slot(c, idx);
    return;
  }
  SIM_ASSERT(c->n_closed < c->n_reqs);
  c->n_closed++;
  if (c->n_closed == c->n_reqs) c->complete = true;
}

/* Places a step just scheduled on the replica's pipeline: it enters stage 0
 * when its host work is done and the stage is free, each later stage when
 * the activations arrive and that stage is free (a batch queue of pp steps
 * keeps up to one batch in each stage); without pipeline parallelism this is
 * one stage: the step starts when its host work is done and the previous
 * step ended. Its STEP event fires when the last stage ends (steps end in
 * the order they were scheduled). */
static void place(cluster *c, uint32_t ri, sched_step *st) {
  replica *rep = &c->reps[ri];
  uint32_t pp = cost_pp(cluster__cost(c, ri));
  sim_ns t = st->ready_ns, end = t;
  for (uint32_t k = 0; k < pp; k++) {
    sim_ns start = t > rep->stage_free[k] ? t : rep->stage_free[k];
    if (k == 0) st->start_ns = start;
    double ns = ceil(st->cost.stage_ns[k]);
    end = start + (ns < 1.0 ? 1 : (sim_ns)ns);
    rep->stage_free[k] = end;
    if (k + 1 < pp) t = end + (sim_ns)ceil(st->cost.send_ns[k]);
  }
  rep->steps++;
  rep->busy_ns += st->cost.gpu_ns;
  metrics_step(&c->m, &rep->sums, &st->bd, &st->cost);
  metrics_step_end(&c->m, end);
  if (c->run_held) { /* decode_run: its step ends wait in order outside the heap */
    SIM_ASSERT(c->run_len < 4);
    des_stamp(&c->ev, &c->run_q[(c->run_head + c->run_len++) & 3], end, EV_STEP, ri, 0);
  } else {
    des_push(&c->ev, end, EV_STEP, ri, 0);
  }
}

/* Schedules one step of replica ri at `now` if its batch queue has room and
 * it has work; NULL if nothing can be scheduled. A head request that needs
 * more blocks than the whole pool while nothing runs (the memory plan
 * normally rules this out) is rejected rather than left waiting forever. */
static sched_step *schedule_one(cluster *c, uint32_t ri, sim_ns now) {
  replica *rep = &c->reps[ri];
  while (!sched_queue_full(&rep->s) && sched_has_work(&rep->s)) {
    sched_step *st = sched_schedule(&rep->s, c->reqs, now);
    if (st) {
      if (st->n_items > c->done_cap) {
        c->done_cap = st->n_items * 2;
        c->done_buf = sim_realloc(c->done_buf, c->done_cap * sizeof *c->done_buf);
      }
      return st;
    }
    if (rep->s.n_running || !rep->s.waiting.len || rep->s.q_len) return NULL;
    uint32_t idx = sched_pop_head(&rep->s);
    c->reqs[idx].state = RQ_REJECTED;
    c->reqs[idx].reject = REJ_KV_TOO_SMALL;
    SIM_ASSERT(rep->outstanding > 0);
    rep->outstanding--;
    cluster__touch(c, ri);
    drained(c, ri, now);
    cluster__close(c, idx, now);
    cluster__release_slot(c, now);
    if (rep->s.q_len) return NULL; /* release_slot may have started this replica */
  }
  return NULL;
}

/* Schedules steps at `now` until the replica's batch queue is full or nothing
 * more can be scheduled (sched.h), and places each on the pipeline. The host
 * prepares one step after the other: a step's host work starts at `now` or
 * when the previous queued step's ends. */
static void start_step(cluster *c, uint32_t ri, sched_step *st, sim_ns now) {
  replica *rep = &c->reps[ri];
  cost_step(cluster__cost(c, ri), &st->bd, &st->cost);
  sim_ns host_from = now;
  if (rep->s.q_len > 1) {
    sim_ns prev = sched_queued(&rep->s, rep->s.q_len - 2)->ready_ns;
    if (prev > host_from) host_from = prev;
  }
  double cpu = ceil(st->cost.cpu_ns);
  st->ready_ns = host_from + (cpu > 0 ? (sim_ns)cpu : 0);
  place(c, ri, st);
}

static void fill_queue_steps(cluster *c, uint32_t ri, sim_ns now) {
  sched_step *st;
  while ((st = schedule_one(c, ri, now))) start_step(c, ri, st, now);
}

/* Lockstep DP group g (cluster_cfg.dp_lockstep): while its batch queue has
 * room, every rank with work schedules a step at `now` and they form one
 * group step. The ranks agree on their execution as vLLM's
 * coordinate_batch_across_dp does (v1/worker/dp_utils.py): the CUDA-graph
 * mode is the least any rank's batch allows, and with a graph mode every rank
 * (idle ones too) pads to the largest rank's graph size, so each MoE layer
 * takes dp x that many tokens; without one (a rank beyond the capture sizes)
 * all run eagerly, unpadded, and the MoE layers take the ranks' own tokens
 * (moe_peer_tokens: the others'). The ranks' hosts prepare their steps in
 * parallel (the group's host work ends with the slowest), the group step
 * starts when that is done and the previous group step ended, and it lasts as
 * long as its slowest rank's step: the others wait in the MoE dispatch
 * (cost_step_wait). Ranks without work run vLLM's dummy forward to join the
 * collectives; it is never the slowest (a real step has at least its token)
 * and is not costed. */
void cluster__fill_group(cluster *c, uint32_t g, sim_ns now) {
  dp_group *G = &c->grp[g];
  uint32_t n = cluster__group_size(c, g), r0 = cluster__group_first(c, g), depth = c->reps[r0].s.depth;
  cost_model *cost = cluster__cost(c, r0);
  SIM_ASSERT(depth <= 2);
  while (G->q_len < depth) {
    sched_step *sts[64];
    uint64_t mask = 0, tokens = 0;
    for (uint32_t k = 0; k < n; k++) {
      sts[k] = c->reps[r0 + k].failed ? NULL : schedule_one(c, r0 + k, now);
      if (sts[k]) mask |= 1ull << k, tokens += sts[k]->bd.num_tokens;
    }
    if (!mask) break;
    int mode = 2;
    uint32_t pad = 0;
    for (uint32_t k = 0; k < n; k++) {
      if (!sts[k]) continue;
      int m = cost_graph_mode(cost, &sts[k]->bd);
      uint32_t gs = cost_graph_size(cost, sts[k]->bd.num_tokens);
      if (m < mode) mode = m;
      if (gs > pad) pad = gs;
    }
    double gpu = 0, cpu = 0;
    for (uint32_t k = 0; k < n; k++) {
      if (!sts[k]) continue;
      sts[k]->bd.dp_mode = (uint8_t)(mode + 1);
      sts[k]->bd.dp_pad = mode ? pad : 0;
      sts[k]->bd.moe_peer_tokens = mode ? pad * (n - 1) : (uint32_t)(tokens - sts[k]->bd.num_tokens);
      cost_step(cost, &sts[k]->bd, &sts[k]->cost);
      gpu = fmax(gpu, sts[k]->cost.gpu_ns);
      cpu = fmax(cpu, ceil(sts[k]->cost.cpu_ns));
    }
    sim_ns ready = (G->q_len && G->last_ready > now ? G->last_ready : now) + (sim_ns)cpu;
    sim_ns start = ready > G->free_ns ? ready : G->free_ns;
    double ns = ceil(gpu);
    sim_ns end = start + (ns < 1.0 ? 1 : (sim_ns)ns);
    for (uint32_t k = 0; k < n; k++) {
      sched_step *st = sts[k];
      if (!st) continue;
      cost_step_wait(cost, &st->cost, gpu - st->cost.gpu_ns);
      st->ready_ns = ready;
      st->start_ns = start;
      c->reps[r0 + k].steps++;
      c->reps[r0 + k].busy_ns += st->cost.gpu_ns;
      metrics_step(&c->m, &c->reps[r0 + k].sums, &st->bd, &st->cost);
      metrics_step_end(&c->m, end);
    }
    G->mask[G->q_len++] = mask;
    G->last_ready = ready;
    G->free_ns = end;
    des_push(&c->ev, end, EV_GSTEP, g, mask);
  }
  for (uint32_t k = 0; k < n; k++) cluster__touch(c, r0 + k);
}

/* The kick that starts an idle replica (or its lockstep group) once every
 * arrival of this instant is queued. */
void cluster__kick(cluster *c, uint32_t ri, sim_ns now) {
  uint32_t g = cluster__group_of(c, ri);
  if (g != UINT32_MAX) {
    dp_group *G = &c->grp[g];
    if (!G->q_len && !G->kick_pending) {
      G->kick_pending = true;
      des_push_late(&c->ev, now, EV_GKICK, g, 0);
    }
    return;
  }
  replica *rep = &c->reps[ri];
  if (!rep->s.q_len && !rep->kick_pending) {
    rep->kick_pending = true;
    des_push_late(&c->ev, now, EV_KICK, ri, 0);
  }
}

void cluster__fill_queue(cluster *c, uint32_t ri, sim_ns now) {
  if (c->reps[ri].failed) return;
  fill_queue_steps(c, ri, now);
  cluster__touch(c, ri);
}

void cluster__route(cluster *c, uint32_t idx, sim_ns now) {
  if (c->cfg.disagg.on && c->cfg.disagg.max_local_prefill && !(c->ap && c->ap->running) &&
      cluster__prefill_local(c, idx, now))
    return;
  uint32_t ri = c->ap && c->ap->running ? c->ap->ri : router_pick(&c->rt);
  request *r = &c->reqs[idx];
  if (ri == UINT32_MAX) {
    r->state = RQ_REJECTED;
    r->reject = REJ_NO_REPLICA;
    SIM_ASSERT(c->in_flight > 0);
    c->in_flight--;
    cluster__close(c, idx, now);
    return;
  }
  r->replica = ri;
  if (r->queued_ns == SIM_NS_INF) r->queued_ns = now;
  if (c->cfg.disagg.on) { /* a prefill worker: one token (max_tokens=1), then its KV goes to a decode worker */
    r->prefill_worker = ri;
    r->disagg_output = r->output_tokens;
    r->output_tokens = 1;
  }
  replica *rep = &c->reps[ri];
  rep->outstanding++;
  sched_add(&rep->s, c->reqs, idx);
  cluster__touch(c, ri);
  /* An idle replica starts its next step once every arrival of this instant
   * is queued (a burst at t=0 forms one batch, as requests that reach a real
   * engine together do), not with the first of them alone. A busy one takes
   * new requests when a step returns (vLLM's engine core blocks on the
   * oldest batch when it cannot schedule another). */
  cluster__kick(c, ri, now);
}

/* Why request r is refused at send (REJ_NONE: it is not). */
rq_reject cluster__refusal(const cluster *c, const request *r) {
  uint64_t total = (uint64_t)r->prompt_tokens + r->output_tokens;
  if (total > c->cfg.max_model_len) return REJ_TOO_LONG;
  uint64_t blocks = (total + c->cfg.block_tokens - 1) / c->cfg.block_tokens;
  if (c->cfg.disagg.on) /* the prefill worker holds the prompt, the decode worker the whole sequence */
    return (r->prompt_tokens + c->cfg.block_tokens - 1) / c->cfg.block_tokens > c->cfg.kv_blocks ||
                   blocks > c->cfg.disagg.decode_kv_blocks
               ? REJ_KV_TOO_SMALL
               : REJ_NONE;
  if (blocks > c->cfg.kv_blocks) return REJ_KV_TOO_SMALL;
  return REJ_NONE;
}

void cluster__send(cluster *c, uint32_t idx, sim_ns now) {
  request *r = &c->reqs[idx];
  r->send_ns = now;
  c->in_flight++;
  c->pl_sent++;
  c->pl_isl_sum += r->prompt_tokens;
  rq_reject why = cluster__refusal(c, r);
  if (why != REJ_NONE) {
    r->state = RQ_REJECTED;
    r->reject = why;
    SIM_ASSERT(c->in_flight > 0);
    c->in_flight--;
    cluster__close(c, idx, now);
    return;
  }
  if (c->cfg.frontend_latency_ns) { /* the engine's frontend first: the router sees it later */
    r->state = RQ_FRONTEND;
    des_push(&c->ev, now + c->cfg.frontend_latency_ns, EV_DELIVER, 0, idx);
    return;
  }
  cluster__route(c, idx, now);
}

/* Sends client-held requests while slots are free (a send rejected at once
 * frees its slot again, so the loop goes on). */
void cluster__fill_slots(cluster *c, sim_ns now) {
  while (c->cq.len && (c->cfg.max_concurrency == 0 || c->in_flight < c->cfg.max_concurrency)) {
    uint32_t idx = ring_pop_front(&c->cq);
    cluster__send(c, idx, now);
  }
}

/* Request idx finished on engine core ri: the core holds one fewer, the client hears of it, its slot is free. */
void cluster__finished(cluster *c, uint32_t ri, uint32_t idx, sim_ns now) {
  replica *rep = &c->reps[ri];
  SIM_ASSERT(rep->outstanding > 0);
  rep->outstanding--;
  cluster__touch(c, ri);
  drained(c, ri, now);
  c->m.finished++;
  c->pl_done++;
  c->pl_osl_sum += c->reqs[idx].generated;
  cluster__close(c, idx, now);
  cluster__release_slot(c, now);
}

void cluster__release_slot(cluster *c, sim_ns now) {
  SIM_ASSERT(c->in_flight > 0);
  c->in_flight--;
  cluster__fill_slots(c, now);
}

void cluster__on_arrival(cluster *c, uint32_t idx, sim_ns now) {
  c->next_arrival = idx + 1;
  if (c->next_arrival < c->n_reqs)
    des_push(&c->ev, c->reqs[c->next_arrival].arrival_ns, EV_ARRIVAL, 0, c->next_arrival);
  request *r = &c->reqs[idx];
  if (c->cfg.max_concurrency && (c->in_flight >= c->cfg.max_concurrency || c->cq.len)) {
    r->state = RQ_CLIENT;
    ring_push_back(&c->cq, idx);
    return;
  }
  cluster__send(c, idx, now);
}

/* A decode run holds its step ends outside the heap only where finding its queued one there is cheap. */
enum { RUN_HELD_MAX_EVENTS = 16 };

/* Is replica ri's oldest step's end the timeline's next event, within the slice? */
static bool step_is_next(const cluster *c, uint32_t ri) {
  const des_event *top = des_peek(&c->ev);
  return top && top->kind == EV_STEP && top->target == ri && top->t_ns <= c->slice_until &&
         !(c->cfg.time_limit_ns && top->t_ns > c->cfg.time_limit_ns) && !c->ev.ambiguous;
}

/* A run of steady decode steps in closed form (sched.h): while the replica's
 * next step end is the next event of the whole timeline (so nothing else can
 * happen first: no arrival, sample, failure or other replica's step) and the
 * scheduler says the state stays steady, each step end is popped and the next
 * step costed and placed as on_step would, without the per-request work.
 * The levels (in system, waiting) do not change in between; the next event's
 * metrics_level covers the run. */
static void decode_run(cluster *c, uint32_t ri) {
  replica *rep = &c->reps[ri];
  if (c->cfg.step_by_step || rep->failed || cluster__group_of(c, ri) != UINT32_MAX || cost_pp(cluster__cost(c, ri)) > 1 || c->hooks.tokens || !step_is_next(c, ri))
    return;
  sched_run run;
  if (!sched_run_begin(&rep->s, c->reqs, &run)) return;
  des_event ev;
  if (c->ev.n > RUN_HELD_MAX_EVENTS) { /* many events (a shared timeline): each step end through the heap */
    while (step_is_next(c, ri) && sched_run_can(&rep->s, c->reqs, &run)) {
      des_pop(&c->ev, &ev);
      start_step(c, ri, sched_run_next(&rep->s, c->reqs, &run, ev.t_ns, &c->m), ev.t_ns);
    }
  } else if (sched_run_can(&rep->s, c->reqs, &run)) {
    /* Few events (a replica apart): the replica's step ends leave the heap while the run lasts. Nothing else is
     * pushed meanwhile, so the earliest other event stays the same, and a step end is the timeline's next event
     * (step_is_next) when it precedes that one; they go back to the heap with their keys at the end. */
    des_pop(&c->ev, &ev);
    c->run_head = c->run_len = 0;
    if (des_remove(&c->ev, EV_STEP, ri, &c->run_q[0])) c->run_len = 1; /* the step queued after it */
    c->run_held = true;
    const des_event *other = des_peek(&c->ev);
    sim_ns until = c->slice_until;
    if (c->cfg.time_limit_ns && c->cfg.time_limit_ns < until) until = c->cfg.time_limit_ns;
    for (;;) {
      start_step(c, ri, sched_run_next(&rep->s, c->reqs, &run, ev.t_ns, &c->m), ev.t_ns);
      const des_event *next = &c->run_q[c->run_head];
      if ((other && !des_before(next, other)) || next->t_ns > until || c->ev.ambiguous ||
          !sched_run_can(&rep->s, c->reqs, &run))
        break;
      ev = *next;
      c->run_head = (c->run_head + 1) & 3;
      c->run_len--;
      des_took(&c->ev, &ev);
    }
    c->run_held = false;
    c->run_steps_held += run.n;
    for (uint32_t k = 0; k < c->run_len; k++) des_put_back(&c->ev, &c->run_q[(c->run_head + k) & 3]);
  }
  sched_run_end(&rep->s, c->reqs, &run);
  c->run_steps += run.n;
  cluster__touch(c, ri);
}

/* ttft_p90 autoscaling: the step's first tokens join the window's samples (cluster_scale.c reads them). */
static void first_tokens(cluster *c, const sched_step *st, sim_ns now) {
  for (uint32_t k = 0; k < st->n_items; k++) {
    const request *r = &c->reqs[st->items[k].req];
    if (!st->items[k].samples || r->first_token_ns != now || r->generated == 0) continue;
    if (c->tt_n == c->tt_cap) { /* compact what the window has left behind; grow unless that freed half */
      if (c->tt_head) {
        memmove(c->tt_t, c->tt_t + c->tt_head, (c->tt_n - c->tt_head) * sizeof *c->tt_t);
        memmove(c->tt_v, c->tt_v + c->tt_head, (c->tt_n - c->tt_head) * sizeof *c->tt_v);
        c->tt_n -= c->tt_head;
        c->tt_head = 0;
      }
      if (c->tt_cap == 0 || c->tt_n * 2 > c->tt_cap) {
        c->tt_cap = c->tt_cap ? 2 * c->tt_cap : 1024;
        c->tt_t = sim_realloc(c->tt_t, c->tt_cap * sizeof *c->tt_t);
        c->tt_v = sim_realloc(c->tt_v, c->tt_cap * sizeof *c->tt_v);
      }
    }
    c->tt_t[c->tt_n] = now;
    c->tt_v[c->tt_n++] = (double)(now - r->send_ns) / 1e9;
  }
}

void cluster__on_step(cluster *c, uint32_t ri, sim_ns now) {
  replica *rep = &c->reps[ri];
  if (rep->failed) return;
  const sched_step *st = sched_queued(&rep->s, 0);
  uint32_t n = sched_complete(&rep->s, c->reqs, now, &c->m, c->done_buf);
  if (cluster__is_prefill(c, ri)) { /* not finished: on to a decode worker, before the next step takes blocks */
    cluster__prefill_done(c, ri, c->done_buf, n, now);
    n = 0;
  }
  cluster__touch(c, ri);
  if (c->hooks.tokens) /* open mode: the step's storage stays intact until the next schedule (below) */
    for (uint32_t k = 0; k < st->n_items; k++)
      if (st->items[k].samples) c->hooks.tokens(c->hooks.ctx, st->items[k].req, now);
  if (c->cfg.scale.on && c->cfg.scale.policy.metric == AS_TTFT_P90) first_tokens(c, st, now);
  /* The engine schedules the next step(s) at once (batch queue, sched.h).
   * The requests that finished go back to their clients afterwards (HTTP
   * response, the client's next request, tokenization: milliseconds), so a
   * closed-loop client's next request cannot join the step scheduled now: it
   * waits for a later one (when the replica idles, it starts one at once). */
  cluster__fill_queue(c, ri, now);
  for (uint32_t k = 0; k < n; k++) cluster__finished(c, ri, c->done_buf[k], now);
  if (!rep->s.q_len) cluster__fill_queue(c, ri, now); /* it idles: the new requests need not wait for a step */
  decode_run(c, ri);
}

/* A lockstep group step ended: every rank in it completes its step, the
 * group schedules its next one, then the finished requests go back to their
 * clients (on_step's order). */
void cluster__on_gstep(cluster *c, uint32_t g, uint64_t mask, sim_ns now) {
  dp_group *G = &c->grp[g];
  uint32_t n = cluster__group_size(c, g), r0 = cluster__group_first(c, g), cnt[64];
  SIM_ASSERT(G->q_len && G->mask[0] == mask);
  G->mask[0] = G->mask[1];
  G->q_len--;
  size_t items = 0, nd = 0;
  for (uint32_t k = 0; k < n; k++)
    if (mask >> k & 1) items += sched_queued(&c->reps[r0 + k].s, 0)->n_items;
  if (items > c->done_cap) {
    c->done_cap = items * 2;
    c->done_buf = sim_realloc(c->done_buf, c->done_cap * sizeof *c->done_buf);
  }
  for (uint32_t k = 0; k < n; k++) {
    cnt[k] = 0;
    if (!(mask >> k & 1)) continue;
    replica *rep = &c->reps[r0 + k];
    const sched_step *st = sched_queued(&rep->s, 0);
    cnt[k] = sched_complete(&rep->s, c->reqs, now, &c->m, c->done_buf + nd);
    if (cluster__is_prefill(c, r0 + k)) { /* on to a decode worker, before the group's next step takes blocks */
      cluster__prefill_done(c, r0 + k, c->done_buf + nd, cnt[k], now);
      cnt[k] = 0;
    }
    nd += cnt[k];
    cluster__touch(c, r0 + k);
    if (c->hooks.tokens)
      for (uint32_t j = 0; j < st->n_items; j++)
        if (st->items[j].samples) c->hooks.tokens(c->hooks.ctx, st->items[j].req, now);
  }
  cluster__fill_group(c, g, now);
  nd = 0;
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t j = 0; j < cnt[k]; j++) cluster__finished(c, r0 + k, c->done_buf[nd++], now);
  if (!G->q_len) cluster__fill_group(c, g, now);
}

void cluster__on_fail(cluster *c, uint32_t ri, sim_ns now) {
  replica *rep = &c->reps[ri];
  if (rep->failed) return;
  rep->failed = true;
  size_t cap = (size_t)rep->s.n_running + rep->s.waiting.len + 1;
  c->drain_buf = sim_realloc(c->drain_buf, cap * sizeof *c->drain_buf);
  uint32_t n = sched_drain(&rep->s, c->reqs, c->drain_buf);
  rep->outstanding = 0;
  cluster__touch(c, ri);
  /* the clients retry at once on the surviving replicas; TTFT keeps its origin */
  for (uint32_t k = 0; k < n; k++) cluster__route(c, c->drain_buf[k], now);
  /* re-routes rejected for want of a replica freed their client slots */
  cluster__fill_slots(c, now);
}

void cluster__on_sample(cluster *c, sim_ns now) {
  ts_row row;
  memset(&row, 0, sizeof row);
  row.t_ns = now;
  double kv_sum = 0, kv_max = 0;
  uint32_t alive = 0;
  for (uint32_t i = 0; i < c->cfg.replicas; i++) {
    const replica *rep = &c->reps[i];
    row.running += sched_num_running(&rep->s);
    row.waiting += sched_num_waiting(&rep->s);
    row.preemptions += rep->s.preemptions;
    if (rep->state == REP_STARTING) row.replicas_starting++;
    if (rep->state == REP_DRAINING) row.replicas_draining++;
    if (rep->failed || rep->state == REP_OFF || rep->state == REP_STARTING) continue;
    if (rep->state == REP_READY) row.replicas_ready++;
    double u = kv_usage(rep->s.kv);
    kv_sum += u;
    if (u > kv_max) kv_max = u;
    alive++;
  }
  row.client_queue = c->cq.len;
  row.kv_usage_mean = (float)(alive ? kv_sum / alive : 0.0);
  row.kv_usage_max = (float)kv_max;
  row.finished = c->m.finished;
  metrics_sample(&c->m, &row);
  c->m.preemptions = row.preemptions;
  if (!c->complete) des_push_late(&c->ev, now + c->cfg.sample_interval_ns, EV_SAMPLE, 0, 0);
}
