/* metrics.h: what a run measured, and its summary with exactly the
 * definitions of vLLM's serving benchmark (`vllm bench serve`):
 *   TTFT  = first token - send time (send = client slot acquired)
 *   TPOT  = (E2EL - TTFT) / (output - 1), only for requests with output > 1
 *   ITL   = every gap between consecutive tokens of a request
 *   E2EL  = last token - send time
 *   duration = last completion - first arrival (t = 0)
 *   throughputs = completed requests, output tokens, input + output tokens of
 *   completed requests, divided by duration; goodput = requests meeting every
 *   given SLO (TTFT, TPOT with 0 for 1-token outputs, E2EL) / duration.
 *   mean, median, std (population), percentiles: numpy linear interpolation.
 *
 * ITL storage: runs of equal consecutive gaps (a decode step usually gives
 * every sequence the same gap) are summed into one entry (gap, count) per
 * distinct gap, found by hashing: memory is O(distinct gaps), not O(tokens)
 * or O(steps), the summary sorts the distinct gaps only, and the percentiles
 * stay exact (they depend on the multiset of gaps alone). The spill limit
 * still counts runs, so a run spills exactly where it did when each run was
 * an entry.
 * Step times: one float (ms) per step, exact.
 * Bounded memory (fleets, days of traffic): past METRICS_EXACT_ITL_RUNS runs
 * or METRICS_EXACT_STEPS steps, that record spills into a log-linear
 * histogram (hdr_hist: exact below 2048 ns, then 1024 buckets per octave),
 * whose percentiles are within HDR_REL_ERR of the exact ones; count, mean,
 * std, min and max stay exact (integer sums). The summary says which
 * statistics came from a histogram (itl_from_histogram, steps_from_histogram)
 * and every report names it. No run of the test suite comes near the limits.
 *
 * Ownership: metrics_init/metrics_deinit on caller storage. */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include "core/common.h"
#include "hw/cost.h"

/* What the summary needs of one request, filled by whoever simulated it
 * (the runner, from the serving layer's requests): the metrics layer does
 * not know the simulation's request type. */
typedef enum req_outcome {
  REQ_FINISHED = 0, /* every output token emitted */
  REQ_REJECTED,     /* could never run; reject says why */
  REQ_UNFINISHED,   /* still in flight when the run ended */
} req_outcome;

/* Why a request did not finish (the result's vocabulary; the serving layer
 * sets it, reports name it). */
typedef enum rq_reject {
  REJ_NONE = 0,
  REJ_TOO_LONG,      /* prompt + output > max_model_len */
  REJ_KV_TOO_SMALL,  /* needs more KV blocks than the whole pool */
  REJ_NO_REPLICA,    /* every replica had failed (what-if) */
  REJ_UNFINISHED     /* still in flight when the run was interrupted or hit its time limit */
} rq_reject;

/* The reason's name in the per-request CSV and the JSON report. */
const char *rq_reject_name(rq_reject r);

#define METRICS_MAX_REASONS 8
typedef struct req_times {
  uint32_t prompt_tokens;
  uint32_t generated;     /* output tokens emitted */
  uint8_t outcome;        /* req_outcome */
  uint8_t reject;         /* the caller's reason code (< METRICS_MAX_REASONS; 0 = none), counted in
                             rejected_by_reason when not finished */
  sim_ns send_ns;         /* TTFT/E2EL origin */
  sim_ns queued_ns;       /* reached a scheduler's queue */
  sim_ns first_sched_ns;  /* first scheduled */
  sim_ns first_token_ns;
  sim_ns finish_ns;       /* last token */
} req_times;

/* Log-linear histogram of non-negative integers (ns). */
enum {
  HDR_EXACT = 2048,  /* values below are counted exactly */
  HDR_SUB_BITS = 10, /* 1024 buckets per octave above */
  HDR_BUCKETS = HDR_EXACT + (64 - 11) * (1 << HDR_SUB_BITS),
};
#define HDR_REL_ERR (1.0 / 2048.0) /* a percentile is the midpoint of a bucket at most 1/1024 of its value wide */
typedef struct hdr_hist {
  uint64_t *count;          /* [HDR_BUCKETS] */
  uint64_t total, min, max; /* values counted; their extremes */
  unsigned __int128 sum;    /* exact sum */
  unsigned __int128 sum_sq; /* exact sum of squares */
} hdr_hist;

enum {
  METRICS_EXACT_ITL_RUNS = 1 << 22, /* runs of equal gaps (at most 64 MiB of distinct (gap, count) entries) */
  METRICS_EXACT_STEPS = 1 << 23,    /* 32 MiB of step times */
};

typedef struct itl_run {
  sim_ns gap_ns;  /* inter-token gap */
  uint64_t count; /* tokens with this gap, consecutive in emission order */
} itl_run;

/* One sample of the server-side time series (vLLM Prometheus names in the CSV). */
typedef struct ts_row {
  sim_ns t_ns;
  uint32_t running;        /* vllm:num_requests_running (all replicas) */
  uint32_t waiting;        /* vllm:num_requests_waiting (all replicas) */
  uint32_t client_queue;   /* requests held by the client (max concurrency) */
  float kv_usage_mean;     /* vllm:kv_cache_usage_perc, mean over replicas, [0,1] */
  float kv_usage_max;      /* max over replicas */
  uint64_t preemptions;    /* vllm:num_preemptions_total, cumulative */
  uint64_t finished;       /* completed requests, cumulative */
  uint64_t tokens;         /* tokens computed since the previous sample (vllm:iteration_tokens_total) */
  uint64_t steps;          /* engine steps since the previous sample */
  uint32_t replicas_ready;    /* replicas serving (not failed; under autoscaling: not off, starting or draining) */
  uint32_t replicas_starting; /* autoscaling: in their cold start */
  uint32_t replicas_draining; /* autoscaling: finishing their requests, taking no new one */
} ts_row;

typedef struct metrics_rec {
  itl_run *itl;        /* until the spill: one entry per distinct gap, its tokens summed, in an open-addressing
                          table by gap of cap_itl (a power of two) slots, count 0 = empty */
  size_t n_itl, cap_itl; /* distinct gaps; slots */
  size_t itl_runs;     /* runs handed in (metrics_itl_run): the spill limit counts these */
  hdr_hist itl_hist;  /* after the spill (itl_hist.count != NULL): every gap, the runs above included */
  float *step_ms;     /* duration of every step, ms, until the spill */
  size_t n_step_ms, cap_steps;
  hdr_hist step_hist; /* after the spill: every step's duration in ns */
  size_t n_steps;     /* steps recorded */
  size_t itl_exact_max, steps_exact_max; /* spill limits (metrics_init: METRICS_EXACT_*; tests lower them) */
  /* per-step totals; the time sums are each replica's own (step_sums, in its steps' order), added in replica
     order by metrics_add_sums when the run ends: the same bits however the replicas' steps interleave */
  double op_ns[OP_COUNT];
  double bound_ns[BOUND_COUNT];
  double busy_ns;              /* sum of step times over replicas */
  sim_ns steps_end_ns;         /* when the last step placed ends: a step in flight when the run is cut (time
                                  limit, the last replica lost) ends after the last finish, and its time is in
                                  busy_ns, so busy shares are taken over this span (runner/bottleneck.c) */
  uint64_t tokens, prefill_tokens, decode_tokens;
  uint64_t batch_seqs_sum;     /* sum over steps of sequences in the batch */
  uint64_t steps_with_prefill;
  uint32_t max_batch_seqs, max_batch_tokens;
  uint64_t preemptions;
  uint64_t finished;
  /* time integrals (for Little's law and mean queue lengths) */
  sim_ns level_t_ns;        /* time of the last level update */
  uint32_t level_in_system; /* sent and not finished */
  uint32_t level_waiting;   /* in replica waiting queues */
  unsigned __int128 area_in_system; /* integral of in-system count, request x ns (exact: order-free) */
  unsigned __int128 area_waiting;   /* integral of waiting count, request x ns */
  uint32_t peak_in_system;  /* the most requests in the system at the end of an instant (after every event of
                               that nanosecond: a level that lasts, whatever order same-time events take) */
  /* time series */
  ts_row *ts;
  size_t n_ts, cap_ts;
  sim_ns ts_interval_ns;
  uint64_t ts_tokens_acc, ts_steps_acc;
} metrics_rec;

void metrics_init(metrics_rec *m, sim_ns ts_interval_ns);
void metrics_deinit(metrics_rec *m);

/* A request emitted a token `gap` after its previous one (the serving layer
 * keeps each request's own token times). Each replica keeps its own run of
 * equal gaps (pend) and hands it to the record when a different gap comes
 * (metrics_itl_run) or the run ends (metrics_itl_flush, in replica order): the
 * record holds the same runs however the replicas' steps interleave, so
 * whether it stays exact does not depend on that order either. */
void metrics_itl_run(metrics_rec *m, itl_run run);
static inline void metrics_itl(metrics_rec *m, itl_run *pend, sim_ns gap) {
  if (pend->count && pend->gap_ns == gap) {
    pend->count++;
    return;
  }
  if (pend->count) metrics_itl_run(m, *pend);
  pend->gap_ns = gap;
  pend->count = 1;
}
/* n gaps of the same length, as n metrics_itl calls */
static inline void metrics_itl_n(metrics_rec *m, itl_run *pend, sim_ns gap, uint64_t n) {
  if (!n) return;
  if (pend->count && pend->gap_ns == gap) {
    pend->count += n;
    return;
  }
  if (pend->count) metrics_itl_run(m, *pend);
  pend->gap_ns = gap;
  pend->count = n;
}
static inline void metrics_itl_flush(metrics_rec *m, itl_run *pend) {
  if (pend->count) metrics_itl_run(m, *pend);
  pend->count = 0;
}

/* One replica's step-time sums (metrics_step adds to them, metrics_add_sums moves them into the record). */
typedef struct step_sums {
  double op_ns[OP_COUNT];
  double bound_ns[BOUND_COUNT];
  double busy_ns;
} step_sums;

/* A step was placed: its time goes to its replica's sums, its counts to the record. */
void metrics_step(metrics_rec *m, step_sums *sums, const batch_desc *b, const step_cost *c);
/* A step placed ends at end_ns (max over steps: the same whatever their order). */
static inline void metrics_step_end(metrics_rec *m, sim_ns end_ns) {
  if (end_ns > m->steps_end_ns) m->steps_end_ns = end_ns;
}
/* Adds a replica's sums into the record and zeroes them (callers go in replica order). */
void metrics_add_sums(metrics_rec *m, step_sums *sums);

/* Piecewise-constant levels: call whenever they change (or before sampling). A level
 * counts toward the peak once time moves past its instant (metrics_summarize
 * counts the last one). */
void metrics_level(metrics_rec *m, sim_ns now, uint32_t in_system, uint32_t waiting);
void metrics_sample(metrics_rec *m, const ts_row *row);

typedef struct dist_stats {
  size_t n;
  double mean, median, std, p90, p95, p99, min, max;
} dist_stats;

/* The histogram on its own (tests, and whoever needs bounded percentiles). */
void hdr_add(hdr_hist *h, uint64_t v, uint64_t n); /* n values v; allocates the buckets at the first */
void hdr_free(hdr_hist *h);
/* numpy-style statistics of the counted values, in units of 1/scale (1e6: ns -> ms). */
void hdr_dist(const hdr_hist *h, double scale, dist_stats *out);

typedef struct slo_cfg {
  double ttft_ms, tpot_ms, e2el_ms; /* < 0: not part of goodput */
} slo_cfg;

typedef struct metrics_summary {
  size_t total;             /* requests in the workload */
  size_t completed;
  size_t rejected;          /* could never run (reason per request in the CSV) */
  size_t unfinished;        /* still in flight at an interrupt / time limit */
  size_t rejected_by_reason[METRICS_MAX_REASONS]; /* by req_times.reject */
  double duration_s;
  uint64_t total_input_tokens, total_output_tokens;
  double request_throughput, output_throughput, total_token_throughput;
  bool has_goodput;
  size_t good_requests;
  double request_goodput;
  dist_stats ttft_ms, tpot_ms, itl_ms, e2el_ms;
  /* TTFT = frontend + queue + prefill, per request (docs/USAGE.md, "TTFT, term by term"):
   *   frontend_ms: sent -> reached an engine's scheduler queue (the engine's frontend latency, the router,
   *                a replica not up yet)
   *   queue_ms:    in the scheduler's queue -> first scheduled (admission: token budget, seats, KV blocks)
   *   prefill_ms:  first scheduled -> first token (the prefill's chunks and the steps they share with decodes,
   *                preemptions and re-admissions on the way, the async-scheduling lag; disaggregated: also the
   *                KV transfer and the decode worker's admission where that worker emits the first token) */
  dist_stats queue_ms, frontend_ms, prefill_ms;
  double mean_in_system, mean_waiting; /* time averages over [0, duration] */
  uint32_t peak_in_system;
  double mean_batch_seqs, mean_batch_tokens, mean_step_ms, median_step_ms, p99_step_ms;
  uint64_t steps;
  bool itl_from_histogram, steps_from_histogram; /* percentiles within HDR_REL_ERR (see above) */
  double prefix_hit_rate;   /* filled by the caller: cached / asked-for tokens at the admission of requests never
                               preempted (vLLM's vllm:prefix_cache_hits / queries) */
  double preempted_prefix_hit_rate; /* the same for re-admissions of preempted requests (vLLM's preempted_*) */
} metrics_summary;

/* Fills *out with request i's record (0 <= i < n). */
typedef void (*req_times_fn)(const void *ctx, size_t i, req_times *out);
/* The req_times_fn of a plain array (ctx: const req_times *). */
void metrics_times_of_array(const void *ctx, size_t i, req_times *out);
/* Computes the summary from the n requests' records (read one at a time
 * through get: no copy of a million-request run) and the recorder (the
 * replicas' pending inter-token runs flushed first). */
void metrics_summarize(metrics_rec *m, req_times_fn get, const void *ctx, size_t n, const slo_cfg *slo,
                       metrics_summary *out);
/* numpy-style statistics of an array (sorted in place). */
void metrics_dist(double *v, size_t n, dist_stats *out);
/* Linear-interpolated percentile (0..100) of a sorted array. */
double metrics_percentile_sorted(const double *v, size_t n, double p);

#endif
