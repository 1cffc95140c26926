/* bottleneck.c: which limit binds a finished run, and the evidence (bottleneck.h). */
#include "runner/bottleneck.h"

#include "runner/result.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

const char *limit_name(limit_kind k) {
  switch (k) {
    case LIMIT_NONE: return "none (light load)";
    case LIMIT_KV_CAPACITY: return "memory capacity (KV cache)";
    case LIMIT_HBM: return "HBM bandwidth";
    case LIMIT_COMPUTE: return "compute (tensor cores)";
    case LIMIT_INTERCONNECT: return "interconnect (all-reduce)";
    case LIMIT_CPU: return "engine CPU overhead";
    case LIMIT_QUEUEING: return "queueing (replicas saturated)";
  }
  return "?";
}

void runner_bottleneck(const run_result *r, bottleneck *b) {
  memset(b, 0, sizeof *b);
  const metrics_rec *m = &r->m;
  const metrics_summary *s = &r->sum;
  static const limit_kind of_bound[BOUND_COUNT] = {LIMIT_COMPUTE, LIMIT_HBM, LIMIT_INTERCONNECT, LIMIT_CPU};
  double busy = m->busy_ns;
  int top = 0;
  for (int i = 0; i < BOUND_COUNT; i++) {
    b->share[i] = busy > 0 ? m->bound_ns[i] / busy : 0.0;
    if (b->share[i] > b->share[top]) top = i;
  }
  b->step_bound = busy > 0 ? of_bound[top] : LIMIT_NONE;
  /* engine cores (replicas x DP ranks) x the time steps ran: to the last finish, or to the end of a step still
     in flight when the run was cut (time limit, the last replica lost), whose whole time busy_ns holds */
  double span = fmax(s->duration_s * 1e9, (double)m->steps_end_ns) * (double)r->engine_cores;
  if (r->scale.on) span = r->scale.serving_replica_s * 1e9; /* autoscaled: the replicas serving, not the slots */
  b->utilization = span > 0 ? busy / span : 0.0;
  b->queue_share = s->ttft_ms.mean > 0 ? s->queue_ms.mean / s->ttft_ms.mean : 0.0;
  size_t full = 0;
  for (size_t i = 0; i < m->n_ts; i++) {
    if (m->ts[i].kv_usage_max > b->kv_peak) b->kv_peak = m->ts[i].kv_usage_max;
    if (m->ts[i].kv_usage_max >= 0.95f) full++;
  }
  b->kv_full_time = m->n_ts ? (double)full / (double)m->n_ts : 0.0;
  b->preemptions = m->preemptions;

  bool kv_full = b->preemptions > 0 || (b->kv_full_time > 0.05 && s->mean_waiting > 0.5);
  /* past capacity: more requests wait than run and waiting is most of TTFT. Then the KV cache is full because
     the load is more than the replicas serve, not because a replica's memory is the limit: more KV would
     only lengthen its batch, replicas take the load */
  bool overload = s->mean_waiting >= 1.0 && s->mean_waiting > s->mean_batch_seqs && b->queue_share > 0.5;
  if (overload) {
    b->primary = LIMIT_QUEUEING;
    int k = snprintf(b->explain, sizeof b->explain,
                     "The offered load is past what the replicas serve: %.1f requests waiting on average against %.1f "
                     "running, %.0f ms mean queueing delay (%.0f%% of TTFT); add replicas or lower the rate. Steps "
                     "are bound by %s.",
                     s->mean_waiting, s->mean_batch_seqs, s->queue_ms.mean, 100 * b->queue_share,
                     limit_name(b->step_bound));
    if (kv_full && k > 0 && (size_t)k < sizeof b->explain)
      snprintf(b->explain + k, sizeof b->explain - (size_t)k,
               " The KV cache is full as well (peak usage %.0f%%, %llu preemptions): more KV per replica would "
               "lengthen its batch, not take the load.",
               100 * b->kv_peak, (unsigned long long)b->preemptions);
  } else if (kv_full) {
    b->primary = LIMIT_KV_CAPACITY;
    snprintf(b->explain, sizeof b->explain,
             "The KV cache fills up (peak usage %.0f%%, %llu preemptions): memory capacity limits the batch; "
             "more GPUs per replica, FP8 KV cache or shorter contexts would relieve it.",
             100 * b->kv_peak, (unsigned long long)b->preemptions);
  } else if (s->mean_waiting >= 1.0 && s->queue_ms.mean > 3.0 * s->median_step_ms) {
    /* requests wait several steps for a seat: the offered load is at or past what the replicas serve */
    b->primary = LIMIT_QUEUEING;
    snprintf(b->explain, sizeof b->explain,
             "Requests wait for admission: %.1f waiting on average, %.0f ms mean queueing delay (%.0f%% of TTFT, "
             "%.0f steps): the offered load is at or past capacity; add replicas or lower the rate. Steps are "
             "bound by %s.",
             s->mean_waiting, s->queue_ms.mean, 100 * b->queue_share,
             s->median_step_ms > 0 ? s->queue_ms.mean / s->median_step_ms : 0.0, limit_name(b->step_bound));
  } else if (s->mean_batch_seqs < 2.0 && s->queue_ms.mean <= 3.0 * s->median_step_ms) {
    b->primary = LIMIT_NONE;
    snprintf(b->explain, sizeof b->explain,
             "Light load: %.1f sequences per step on average and no queue to speak of; latency is the unloaded "
             "step time, bound by %s.",
             s->mean_batch_seqs, limit_name(b->step_bound));
  } else {
    b->primary = b->step_bound;
    snprintf(b->explain, sizeof b->explain,
             "Step time is %.0f%% bound by %s; a step was running %.0f%% of the time; waiting for admission is "
             "%.0f%% of TTFT (about one step: requests join at step boundaries).",
             100 * b->share[top], limit_name(b->step_bound), 100 * b->utilization, 100 * b->queue_share);
  }
}
