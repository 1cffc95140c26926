/* fleet.c: the totals of a fleet whose replicas ran apart (see fleet.h). */
#include "serve/fleet.h"

#include <stdlib.h>
#include <string.h>

fleet *fleet_new(uint32_t replicas, sim_ns interval_ns) {
  fleet *f = sim_calloc(1, sizeof *f);
  f->replicas = replicas;
  f->interval_ns = interval_ns;
  f->off = sim_calloc((size_t)replicas + 1, sizeof *f->off);
  f->k_own = sim_calloc(replicas, sizeof *f->k_own);
  f->fin_pre = sim_calloc(replicas, sizeof *f->fin_pre);
  f->fin_done = sim_calloc(replicas, sizeof *f->fin_done);
  f->left_tok = sim_calloc(replicas, sizeof *f->left_tok);
  f->left_steps = sim_calloc(replicas, sizeof *f->left_steps);
  f->fin_u = sim_calloc(replicas, sizeof *f->fin_u);
  return f;
}

void fleet_free(fleet *f) {
  if (!f) return;
  free(f->idx);
  free(f->off);
  free(f->rows);
  free(f->kv_sum);
  free(f->kv_max);
  free(f->k_own);
  free(f->fin_pre);
  free(f->fin_done);
  free(f->left_tok);
  free(f->left_steps);
  free(f->fin_u);
  free(f);
}

static void rows_reach(fleet *f, size_t n) {
  if (n <= f->n_rows) return;
  if (n > f->cap_rows) {
    size_t cap = f->cap_rows ? f->cap_rows : 64;
    while (cap < n) cap *= 2;
    f->rows = sim_realloc(f->rows, cap * sizeof *f->rows);
    f->kv_sum = sim_realloc(f->kv_sum, cap * sizeof *f->kv_sum);
    f->kv_max = sim_realloc(f->kv_max, cap * sizeof *f->kv_max);
    f->cap_rows = cap;
  }
  memset(f->rows + f->n_rows, 0, (n - f->n_rows) * sizeof *f->rows);
  for (size_t k = f->n_rows; k < n; k++) f->kv_sum[k] = f->kv_max[k] = 0.0;
  f->n_rows = n;
}

static void row_add(fleet *f, size_t k, uint32_t running, uint32_t waiting, uint64_t preemptions, double u,
                    uint64_t finished, uint64_t tokens, uint64_t steps) {
  ts_row *r = &f->rows[k];
  r->running += running;
  r->waiting += waiting;
  r->preemptions += preemptions;
  r->finished += finished;
  r->tokens += tokens;
  r->steps += steps;
  r->replicas_ready++; /* replicas apart never fail */
  f->kv_sum[k] += u;
  if (u > f->kv_max[k]) f->kv_max[k] = u;
}

void fleet_sample(fleet *f, sim_ns t, uint32_t running, uint32_t waiting, uint64_t preemptions, double kv_usage,
                  uint64_t finished, uint64_t tokens, uint64_t steps) {
  size_t k = (size_t)(t / f->interval_ns);
  SIM_ASSERT((sim_ns)k * f->interval_ns == t && k == f->k_own[f->ri]);
  rows_reach(f, k + 1);
  row_add(f, k, running, waiting, preemptions, kv_usage, finished, tokens, steps);
  f->k_own[f->ri] = (uint32_t)(k + 1);
}

void fleet_replica_done(fleet *f, uint32_t r, uint64_t preemptions, double kv_usage, uint64_t finished,
                        uint64_t tokens, uint64_t steps) {
  f->fin_pre[r] = preemptions;
  f->fin_u[r] = kv_usage;
  f->fin_done[r] = finished;
  f->left_tok[r] = tokens;
  f->left_steps[r] = steps;
}

void fleet_rows_into(fleet *f, metrics_rec *m) {
  if (!f->interval_ns) return;
  size_t n = f->end_ns > 0 ? (size_t)((f->end_ns - 1) / f->interval_ns) + 1 : 0; /* instants k x interval < end */
  rows_reach(f, n);
  /* a replica past its last request is idle in its final state (its KV pool empty: usage 0.0, so the
     order these are added in leaves every sum's bits as the shared timeline's) */
  for (uint32_t r = 0; r < f->replicas; r++)
    for (size_t k = f->k_own[r]; k < n; k++)
      row_add(f, k, 0, 0, f->fin_pre[r], f->fin_u[r], f->fin_done[r], k == f->k_own[r] ? f->left_tok[r] : 0,
              k == f->k_own[r] ? f->left_steps[r] : 0);
  for (size_t k = 0; k < n; k++) {
    ts_row row = f->rows[k];
    row.t_ns = (sim_ns)k * f->interval_ns;
    row.client_queue = 0;
    row.kv_usage_mean = (float)(f->kv_sum[k] / f->replicas);
    row.kv_usage_max = (float)f->kv_max[k];
    SIM_GROW(m->ts, m->cap_ts, m->n_ts + 1);
    m->ts[m->n_ts++] = row;
    m->preemptions = row.preemptions;
  }
  m->ts_tokens_acc = m->ts_steps_acc = 0;
}

uint32_t fleet_peak(const request *reqs, size_t n, uint32_t *in_system) {
  /* sends are the requests in trace order (open loop: sent when they arrive, arrivals in order); only the
     finish times need sorting */
  size_t ns = 0, nf = 0;
  for (size_t i = 0; i < n; i++) {
    rq_state s = reqs[i].state;
    if (s == RQ_PENDING || s == RQ_CLIENT || s == RQ_REJECTED) continue; /* never sent, or refused at send */
    ns++;
    nf += s == RQ_FINISHED;
  }
  uint64_t *fin = sim_malloc((nf ? nf : 1) * sizeof *fin);
  size_t b = 0;
  for (size_t i = 0; i < n; i++)
    if (reqs[i].state == RQ_FINISHED) fin[b++] = (uint64_t)reqs[i].finish_ns;
  uint64_t *tmp = sim_malloc((nf ? nf : 1) * sizeof *tmp);
  sim_radix_sort_u64(fin, tmp, NULL, NULL, 0, nf);
  free(tmp);
  uint64_t level = 0, peak = 0, last_send = 0;
  size_t i = 0, j = 0;
  for (;;) {
    while (i < n && (reqs[i].state == RQ_PENDING || reqs[i].state == RQ_CLIENT || reqs[i].state == RQ_REJECTED)) i++;
    if (i >= n && j >= nf) break;
    uint64_t ts = i < n ? (uint64_t)reqs[i].send_ns : UINT64_MAX, t = j < nf && fin[j] < ts ? fin[j] : ts;
    SIM_ASSERT(i >= n || ts >= last_send);
    /* every send and finish of instant t, then the level that lasts */
    while (i < n) {
      rq_state s = reqs[i].state;
      if (s == RQ_PENDING || s == RQ_CLIENT || s == RQ_REJECTED) {
        i++;
        continue;
      }
      if ((uint64_t)reqs[i].send_ns != t) break;
      last_send = t;
      level++, i++;
    }
    while (j < nf && fin[j] == t) level--, j++;
    if (level > peak) peak = level;
  }
  free(fin);
  *in_system = (uint32_t)(ns - nf);
  return (uint32_t)peak;
}
