/* metrics.c: recording during a run, and vLLM-definition summaries after it. */
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *rq_reject_name(rq_reject r) {
  switch (r) {
    case REJ_NONE: return "none";
    case REJ_TOO_LONG: return "prompt_plus_output_exceeds_max_model_len";
    case REJ_KV_TOO_SMALL: return "larger_than_kv_pool";
    case REJ_NO_REPLICA: return "no_replica_left";
    case REJ_UNFINISHED: return "unfinished_at_end_of_run";
  }
  return "?";
}

void metrics_init(metrics_rec *m, sim_ns ts_interval_ns) {
  memset(m, 0, sizeof *m);
  m->ts_interval_ns = ts_interval_ns;
  m->itl_exact_max = METRICS_EXACT_ITL_RUNS;
  m->steps_exact_max = METRICS_EXACT_STEPS;
}

void metrics_deinit(metrics_rec *m) {
  free(m->itl);
  free(m->step_ms);
  free(m->ts);
  hdr_free(&m->itl_hist);
  hdr_free(&m->step_hist);
  memset(m, 0, sizeof *m);
}

/* --- log-linear histogram ------------------------------------------------------ */

static uint32_t hdr_index(uint64_t v) {
  if (v < HDR_EXACT) return (uint32_t)v;
  int e = 63 - __builtin_clzll(v); /* >= 11 */
  uint32_t sub = (uint32_t)(v >> (e - HDR_SUB_BITS)) & ((1u << HDR_SUB_BITS) - 1);
  return HDR_EXACT + (uint32_t)(e - 11) * (1u << HDR_SUB_BITS) + sub;
}

/* The value a bucket stands for: itself below HDR_EXACT, else its midpoint. */
static double hdr_value(uint32_t idx) {
  if (idx < HDR_EXACT) return (double)idx;
  uint32_t k = idx - HDR_EXACT, e = 11 + (k >> HDR_SUB_BITS), sub = k & ((1u << HDR_SUB_BITS) - 1);
  double width = ldexp(1.0, (int)e - HDR_SUB_BITS);
  return ((double)((1u << HDR_SUB_BITS) + sub) + 0.5) * width;
}

void hdr_add(hdr_hist *h, uint64_t v, uint64_t n) {
  if (!n) return;
  if (!h->count) {
    h->count = sim_calloc(HDR_BUCKETS, sizeof *h->count);
    h->min = UINT64_MAX;
  }
  h->count[hdr_index(v)] += n;
  h->total += n;
  h->sum += v * n;
  h->sum_sq += (unsigned __int128)v * v * n;
  if (v < h->min) h->min = v;
  if (v > h->max) h->max = v;
}

void hdr_free(hdr_hist *h) {
  free(h->count);
  memset(h, 0, sizeof *h);
}

/* Value at 0-based rank k of the counted values, clamped to the exact extremes. */
static double hdr_at(const hdr_hist *h, uint64_t k) {
  uint64_t c = 0;
  for (uint32_t i = 0; i < HDR_BUCKETS; i++) {
    c += h->count[i];
    if (k < c) {
      double v = hdr_value(i);
      return v < (double)h->min ? (double)h->min : v > (double)h->max ? (double)h->max : v;
    }
  }
  return (double)h->max;
}

static double hdr_percentile(const hdr_hist *h, double p) {
  double pos = p / 100.0 * (double)(h->total - 1);
  uint64_t lo = (uint64_t)floor(pos);
  double a = hdr_at(h, lo);
  if (lo + 1 >= h->total) return a;
  return a + (hdr_at(h, lo + 1) - a) * (pos - (double)lo);
}

void hdr_dist(const hdr_hist *h, double scale, dist_stats *out) {
  memset(out, 0, sizeof *out);
  if (!h->total) return;
  double n = (double)h->total, mean = (double)h->sum / n;
  /* population variance from exact sums: (sum_sq - sum^2 / n) / n */
  unsigned __int128 s = h->sum, num = h->sum_sq * h->total - s * s; /* >= 0: Cauchy-Schwarz */
  double var = (double)num / (n * n);
  out->n = h->total;
  out->mean = mean / scale;
  out->std = sqrt(var > 0 ? var : 0) / scale;
  out->median = hdr_percentile(h, 50) / scale;
  out->p90 = hdr_percentile(h, 90) / scale;
  out->p95 = hdr_percentile(h, 95) / scale;
  out->p99 = hdr_percentile(h, 99) / scale;
  out->min = (double)h->min / scale;
  out->max = (double)h->max / scale;
}

/* The run-length records grew past their limit: every gap so far, and from
 * now on, goes into the histogram. */
static size_t itl_hash(sim_ns gap, size_t cap) { return (size_t)(((uint64_t)gap * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1); }

/* The entry of gap `gap` in the table (a new one with count 0 if it is not there), at most 3/4 full: one cache
 * line per lookup. */
static itl_run *itl_entry(metrics_rec *m, sim_ns gap) {
  if (4 * (m->n_itl + 1) > 3 * m->cap_itl) { /* grow: rehash the entries */
    size_t n = m->cap_itl ? 2 * m->cap_itl : 1024;
    itl_run *t = sim_calloc_huge(n, sizeof *t);
    for (size_t i = 0; i < m->cap_itl; i++) {
      if (!m->itl[i].count) continue;
      size_t h = itl_hash(m->itl[i].gap_ns, n);
      while (t[h].count) h = (h + 1) & (n - 1);
      t[h] = m->itl[i];
    }
    free(m->itl);
    m->itl = t;
    m->cap_itl = n;
  }
  size_t h = itl_hash(gap, m->cap_itl);
  for (; m->itl[h].count; h = (h + 1) & (m->cap_itl - 1))
    if (m->itl[h].gap_ns == gap) return &m->itl[h];
  m->itl[h].gap_ns = gap;
  m->n_itl++;
  return &m->itl[h];
}

void metrics_itl_run(metrics_rec *m, itl_run run) {
  if (!m->itl_hist.count && m->itl_runs < m->itl_exact_max) {
    m->itl_runs++;
    itl_entry(m, run.gap_ns)->count += run.count;
    return;
  }
  if (!m->itl_hist.count) { /* spill: every gap so far (integer sums: the same as run by run), then this run */
    for (size_t i = 0; i < m->cap_itl; i++) hdr_add(&m->itl_hist, (uint64_t)m->itl[i].gap_ns, m->itl[i].count);
    free(m->itl);
    m->itl = NULL;
    m->n_itl = m->cap_itl = 0;
  }
  hdr_add(&m->itl_hist, run.gap_ns > 0 ? (uint64_t)run.gap_ns : 0, run.count);
}

/* llround for the non-negative values below 2^63 a step time in ns is, without the library call: the truncation
 * and the remainder are exact there (a double that large is an integer; below 2^52 the remainder subtracts exactly) */
static uint64_t round_ns(double x) {
  if (!(x >= 0 && x < 9.2e18)) return (uint64_t)llround(x);
  uint64_t t = (uint64_t)x;
  return x - (double)t >= 0.5 ? t + 1 : t;
}

static void record_step_time(metrics_rec *m, double total_ns) {
  m->n_steps++;
  if (!m->step_hist.count && m->n_step_ms < m->steps_exact_max) {
    SIM_GROW(m->step_ms, m->cap_steps, m->n_step_ms + 1);
    m->step_ms[m->n_step_ms++] = (float)(total_ns / 1e6);
    return;
  }
  if (!m->step_hist.count) { /* spill: the floats (ms) back to ns */
    for (size_t i = 0; i < m->n_step_ms; i++) hdr_add(&m->step_hist, round_ns((double)m->step_ms[i] * 1e6), 1);
    free(m->step_ms);
    m->step_ms = NULL;
    m->n_step_ms = m->cap_steps = 0;
  }
  /* as the spilled ones were kept (float ms): the histogram does not depend on which steps came first */
  double ms = (double)(float)(total_ns / 1e6);
  hdr_add(&m->step_hist, ms > 0 ? round_ns(ms * 1e6) : 0, 1);
}

void metrics_step(metrics_rec *m, step_sums *sums, const batch_desc *b, const step_cost *c) {
  record_step_time(m, c->total_ns);
  for (int i = 0; i < OP_COUNT; i++) sums->op_ns[i] += c->op_ns[i];
  for (int i = 0; i < BOUND_COUNT; i++) sums->bound_ns[i] += c->bound_ns[i];
  sums->busy_ns += c->total_ns;
  m->tokens += b->num_tokens;
  m->decode_tokens += b->num_decode + b->spec_tokens; /* a verify's draft tokens are decode tokens */
  m->prefill_tokens += b->num_tokens - b->num_decode - b->spec_tokens;
  m->batch_seqs_sum += b->num_seqs;
  if (b->num_prefill) m->steps_with_prefill++;
  if (b->num_seqs > m->max_batch_seqs) m->max_batch_seqs = b->num_seqs;
  if (b->num_tokens > m->max_batch_tokens) m->max_batch_tokens = b->num_tokens;
  m->ts_tokens_acc += b->num_tokens;
  m->ts_steps_acc++;
}

void metrics_add_sums(metrics_rec *m, step_sums *sums) {
  for (int i = 0; i < OP_COUNT; i++) m->op_ns[i] += sums->op_ns[i];
  for (int i = 0; i < BOUND_COUNT; i++) m->bound_ns[i] += sums->bound_ns[i];
  m->busy_ns += sums->busy_ns;
  memset(sums, 0, sizeof *sums);
}

void metrics_level(metrics_rec *m, sim_ns now, uint32_t in_system, uint32_t waiting) {
  SIM_ASSERT(now >= m->level_t_ns);
  if (now > m->level_t_ns) { /* the previous instant is over: its last level lasted */
    uint64_t dt = now - m->level_t_ns;
    m->area_in_system += (unsigned __int128)dt * m->level_in_system;
    m->area_waiting += (unsigned __int128)dt * m->level_waiting;
    if (m->level_in_system > m->peak_in_system) m->peak_in_system = m->level_in_system;
  }
  m->level_t_ns = now;
  m->level_in_system = in_system;
  m->level_waiting = waiting;
}

void metrics_sample(metrics_rec *m, const ts_row *row) {
  SIM_GROW(m->ts, m->cap_ts, m->n_ts + 1);
  ts_row r = *row;
  r.tokens = m->ts_tokens_acc;
  r.steps = m->ts_steps_acc;
  m->ts_tokens_acc = m->ts_steps_acc = 0;
  m->ts[m->n_ts++] = r;
}

/* Order-preserving map of a double's bits to an unsigned key (negatives too). */
static inline uint64_t dkey(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}

static inline double dval(uint64_t k) {
  uint64_t u = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static void sort_doubles(double *v, size_t n) {
  uint64_t *k = sim_malloc(n * sizeof *k), *t = sim_malloc(n * sizeof *t);
  for (size_t i = 0; i < n; i++) k[i] = dkey(v[i]);
  sim_radix_sort_u64(k, t, NULL, NULL, 0, n);
  for (size_t i = 0; i < n; i++) v[i] = dval(k[i]);
  free(k);
  free(t);
}

double metrics_percentile_sorted(const double *v, size_t n, double p) {
  if (n == 0) return 0.0;
  double pos = p / 100.0 * (double)(n - 1);
  size_t lo = (size_t)floor(pos);
  if (lo >= n - 1) return v[n - 1];
  double frac = pos - (double)lo;
  return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void metrics_dist(double *v, size_t n, dist_stats *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  if (n == 0) return;
  sort_doubles(v, n);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++) ss += (v[i] - mean) * (v[i] - mean);
  out->mean = mean;
  out->std = sqrt(ss / (double)n);
  out->median = metrics_percentile_sorted(v, n, 50);
  out->p90 = metrics_percentile_sorted(v, n, 90);
  out->p95 = metrics_percentile_sorted(v, n, 95);
  out->p99 = metrics_percentile_sorted(v, n, 99);
  out->min = v[0];
  out->max = v[n - 1];
}

/* --- ITL statistics over run-length entries, exact ------------------------- */

static void sort_runs(itl_run *r, size_t n) {
  uint64_t *k = sim_malloc(n * sizeof *k), *tk = sim_malloc(n * sizeof *tk), *c = sim_malloc(n * sizeof *c),
           *tc = sim_malloc(n * sizeof *tc);
  for (size_t i = 0; i < n; i++) k[i] = r[i].gap_ns, c[i] = r[i].count;
  sim_radix_sort_u64(k, tk, c, tc, sizeof *c, n);
  for (size_t i = 0; i < n; i++) r[i].gap_ns = k[i], r[i].count = c[i];
  free(k);
  free(tk);
  free(c);
  free(tc);
}

/* Value at 0-based rank k of the expanded sorted multiset. */
static double run_at(const itl_run *r, size_t n, uint64_t k) {
  uint64_t c = 0;
  for (size_t i = 0; i < n; i++) {
    c += r[i].count;
    if (k < c) return (double)r[i].gap_ns / 1e6;
  }
  return (double)r[n - 1].gap_ns / 1e6;
}

static double run_percentile(const itl_run *r, size_t n, uint64_t total, double p) {
  double pos = p / 100.0 * (double)(total - 1);
  uint64_t lo = (uint64_t)floor(pos);
  double a = run_at(r, n, lo);
  if (lo + 1 >= total) return a;
  double b = run_at(r, n, lo + 1);
  return a + (b - a) * (pos - (double)lo);
}

/* metrics_percentile_sorted on sorted floats. */
static double float_percentile(const float *v, size_t n, double p) {
  double pos = p / 100.0 * (double)(n - 1);
  size_t lo = (size_t)floor(pos);
  if (lo >= n - 1) return v[n - 1];
  double frac = pos - (double)lo;
  return (double)v[lo] + ((double)v[lo + 1] - (double)v[lo]) * frac;
}

/* The bits of float i of v, as a sort key (non-negative floats sort as their bits). */
static inline uint32_t fkey(const float *v, size_t i) {
  uint32_t k;
  memcpy(&k, &v[i], sizeof k);
  return k;
}

/* metrics_dist of n non-negative floats, sorted in place (three passes of 11, 11 and 10 bits over their bits,
 * one scratch array, 16 KiB of counts: 16-bit digits took 512 KiB of counts, 128 fresh pages for every run,
 * a one-request run included), every statistic computed on the values as doubles in sorted order, as
 * metrics_dist does. */
static void float_dist(float *v, size_t n, dist_stats *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  if (n == 0) return;
  enum { DIGIT = 11, BUCKETS = 1 << DIGIT };
  uint32_t *t = sim_malloc(n * sizeof *t);
  size_t cnt[BUCKETS];
  for (size_t i = 0; i < n; i++) SIM_ASSERT(v[i] >= 0.0f);
  for (size_t i = 0; i < n; i++) t[i] = fkey(v, i);
  /* t -> v, v -> t, t -> v: the result lands in v; v's bytes moved by memcpy only (they are floats) */
  char *src = (char *)t, *dst = (char *)v;
  for (int shift = 0; shift < 32; shift += DIGIT) {
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
      uint32_t k;
      memcpy(&k, src + 4 * i, 4);
      cnt[(k >> shift) & (BUCKETS - 1)]++;
    }
    size_t s = 0;
    for (size_t d = 0; d < BUCKETS; d++) {
      size_t c = cnt[d];
      cnt[d] = s;
      s += c;
    }
    for (size_t i = 0; i < n; i++) {
      uint32_t k;
      memcpy(&k, src + 4 * i, 4);
      memcpy(dst + 4 * cnt[(k >> shift) & (BUCKETS - 1)]++, &k, 4);
    }
    char *x = src;
    src = dst, dst = x;
  }
  free(t);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++) ss += ((double)v[i] - mean) * ((double)v[i] - mean);
  out->mean = mean;
  out->std = sqrt(ss / (double)n);
  out->median = float_percentile(v, n, 50);
  out->p90 = float_percentile(v, n, 90);
  out->p95 = float_percentile(v, n, 95);
  out->p99 = float_percentile(v, n, 99);
  out->min = v[0];
  out->max = v[n - 1];
}

static void itl_dist(const metrics_rec *m, dist_stats *out) {
  memset(out, 0, sizeof *out);
  if (m->itl_hist.count) {
    hdr_dist(&m->itl_hist, 1e6, out);
    return;
  }
  if (!m->n_itl) return;
  /* the distinct gaps (each once: metrics_itl_run summed their runs), sorted */
  itl_run *r = sim_malloc(m->n_itl * sizeof *r);
  size_t n = 0;
  for (size_t i = 0; i < m->cap_itl; i++)
    if (m->itl[i].count) r[n++] = m->itl[i];
  SIM_ASSERT(n == m->n_itl);
  sort_runs(r, n);
  uint64_t total = 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    total += r[i].count;
    sum += (double)r[i].count * ((double)r[i].gap_ns / 1e6);
  }
  double mean = sum / (double)total, ss = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)r[i].gap_ns / 1e6 - mean;
    ss += (double)r[i].count * d * d;
  }
  out->n = total;
  out->mean = mean;
  out->std = sqrt(ss / (double)total);
  out->median = run_percentile(r, n, total, 50);
  out->p90 = run_percentile(r, n, total, 90);
  out->p95 = run_percentile(r, n, total, 95);
  out->p99 = run_percentile(r, n, total, 99);
  out->min = (double)r[0].gap_ns / 1e6;
  out->max = (double)r[n - 1].gap_ns / 1e6;
  free(r);
}

void metrics_times_of_array(const void *ctx, size_t i, req_times *out) { *out = ((const req_times *)ctx)[i]; }

void metrics_summarize(metrics_rec *m, req_times_fn get, const void *ctx, size_t n, const slo_cfg *slo,
                       metrics_summary *out) {
  memset(out, 0, sizeof *out);
  out->total = n;
  double *ttft = sim_malloc_huge(6 * (n + 1) * sizeof *ttft); /* the six arrays in one block (huge pages) */
  double *tpot = ttft + (n + 1), *e2el = tpot + (n + 1), *queue = e2el + (n + 1), *front = queue + (n + 1);
  double *pre = front + (n + 1);
  size_t nt = 0, np = 0;
  sim_ns last_finish = 0;
  for (size_t i = 0; i < n; i++) {
    req_times rt;
    get(ctx, i, &rt);
    const req_times *r = &rt;
    if (r->outcome != REQ_FINISHED) {
      if (r->outcome == REQ_UNFINISHED) out->unfinished++;
      else out->rejected++;
      if (r->reject && r->reject < SIM_ARRAY_LEN(out->rejected_by_reason)) out->rejected_by_reason[r->reject]++;
      continue;
    }
    out->completed++;
    out->total_input_tokens += r->prompt_tokens;
    out->total_output_tokens += r->generated;
    double t_first = (double)(r->first_token_ns - r->send_ns) / 1e6;
    double t_e2e = (double)(r->finish_ns - r->send_ns) / 1e6;
    double t_pot = r->generated > 1 ? (t_e2e - t_first) / (double)(r->generated - 1) : 0.0;
    ttft[nt] = t_first;
    e2el[nt] = t_e2e;
    queue[nt] = (double)(r->first_sched_ns - r->queued_ns) / 1e6;
    front[nt] = (double)(r->queued_ns - r->send_ns) / 1e6;
    pre[nt] = (double)(r->first_token_ns - r->first_sched_ns) / 1e6;
    nt++;
    if (r->generated > 1) tpot[np++] = t_pot;
    if (r->finish_ns > last_finish) last_finish = r->finish_ns;
    if (slo) {
      bool good = true;
      if (slo->ttft_ms >= 0 && t_first > slo->ttft_ms) good = false;
      if (slo->tpot_ms >= 0 && t_pot > slo->tpot_ms) good = false;
      if (slo->e2el_ms >= 0 && t_e2e > slo->e2el_ms) good = false;
      if (good) out->good_requests++;
    }
  }
  out->duration_s = (double)last_finish / 1e9;
  double d = out->duration_s > 0 ? out->duration_s : 1.0;
  if (out->duration_s > 0) {
    out->request_throughput = (double)out->completed / d;
    out->output_throughput = (double)out->total_output_tokens / d;
    out->total_token_throughput = (double)(out->total_input_tokens + out->total_output_tokens) / d;
  }
  if (slo && (slo->ttft_ms >= 0 || slo->tpot_ms >= 0 || slo->e2el_ms >= 0)) {
    out->has_goodput = true;
    out->request_goodput = out->duration_s > 0 ? (double)out->good_requests / d : 0.0;
  }
  metrics_dist(ttft, nt, &out->ttft_ms);
  metrics_dist(tpot, np, &out->tpot_ms);
  metrics_dist(e2el, nt, &out->e2el_ms);
  metrics_dist(queue, nt, &out->queue_ms);
  metrics_dist(front, nt, &out->frontend_ms);
  metrics_dist(pre, nt, &out->prefill_ms);
  itl_dist(m, &out->itl_ms);
  free(ttft);
  double span = (double)m->level_t_ns;
  if (span > 0) {
    out->mean_in_system = (double)m->area_in_system / span;
    out->mean_waiting = (double)m->area_waiting / span;
  }
  out->peak_in_system = m->peak_in_system > m->level_in_system ? m->peak_in_system : m->level_in_system;
  out->steps = m->n_steps;
  out->itl_from_histogram = m->itl_hist.count != NULL;
  out->steps_from_histogram = m->step_hist.count != NULL;
  if (m->n_steps) {
    out->mean_batch_seqs = (double)m->batch_seqs_sum / (double)m->n_steps;
    out->mean_batch_tokens = (double)m->tokens / (double)m->n_steps;
    dist_stats st;
    if (m->step_hist.count) {
      hdr_dist(&m->step_hist, 1e6, &st);
    } else {
      float_dist(m->step_ms, m->n_step_ms, &st); /* sorts them: nothing reads their order afterwards */
    }
    out->mean_step_ms = st.mean;
    out->median_step_ms = st.median;
    out->p99_step_ms = st.p99;
  }
}
