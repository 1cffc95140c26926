/* result.h: what a finished run hands to everything above the runner
 * (reports, SLO checks, studies, validation, what-if comparisons): one record
 * per request, the recorder's step statistics and time series, the summary,
 * the counters the engine exported, and a description of the run (the
 * scenario, the configs and resolved deployment, the memory plan, the
 * workload, the cost sources, the bottleneck verdict and the what-ifs'
 * verdicts), filled by runner_execute. Reports read this alone. The simulation itself (cluster,
 * schedulers, KV pools) is freed when the run ends; nothing above the runner
 * can reach it (runner.h holds it behind an opaque pointer, and
 * scripts/check_layers.sh refuses a serve/ include above the runner).
 * Owned by its run_ctx; read-only for everyone else. */
#ifndef SIM_RESULT_H
#define SIM_RESULT_H

#include "core/common.h"
#include "hw/cost_types.h"
#include "hw/memplan.h"
#include "metrics/metrics.h"
#include "runner/bottleneck.h"
#include "runner/scaling.h"
#include "runner/scenario.h"
#include "runner/stratum.h"
#include "runner/uncert.h"
#include "runner/whatif.h"

/* One request as it ended. Times in virtual ns; SIM_NS_INF where it never got
 * there (never scheduled, no token). */
typedef struct run_record {
  uint32_t id;            /* index in the trace */
  uint32_t replica;       /* replica (engine core) it was routed to; UINT32_MAX: none */
  uint32_t prompt_tokens, output_tokens;
  uint32_t generated;     /* output tokens emitted */
  uint32_t cached_tokens; /* prefix-cache hit tokens at its last admission */
  uint32_t preemptions;
  uint8_t outcome;        /* req_outcome */
  uint8_t reject;         /* rq_reject (REJ_NONE when finished) */
  sim_ns arrival_ns;      /* trace arrival (after the run's transforms) */
  sim_ns send_ns;         /* sent (client slot acquired): TTFT/E2EL origin */
  sim_ns queued_ns;       /* reached a scheduler's queue */
  sim_ns first_sched_ns;
  sim_ns first_token_ns;
  sim_ns finish_ns;       /* last token */
  /* --mode disagg: the prefill worker (UINT32_MAX: none), the KV transfer to the decode worker (replica) */
  uint32_t prefill_worker;
  uint64_t xfer_bytes;
  sim_ns xfer_start_ns, xfer_end_ns; /* both 0: no transfer */
} run_record;

/* The workload as it was run (its rows are gone by then). */
typedef struct run_trace_desc {
  trace_format format;
  char source[1024];      /* file path, or a description of the generator */
  size_t n;               /* requests */
  size_t n_failed_rows;   /* BurstGPT failure rows skipped */
} run_trace_desc;

typedef struct run_result {
  /* the run as it was set up (copies: the result outlives nothing it names) */
  scenario sc;
  model_cfg model;
  gpu_cfg gpu;
  engine_cfg engine;
  deploy_cfg deploy;      /* resolved */
  mem_plan plan;
  run_trace_desc tr;
  trace_stats tr_stats;
  char cost_source[1400]; /* one line: what served the step costs (runner/profsel.h) */
  stratum strat;          /* what the prediction rests on (runner/stratum.h) */
  char cost_graphs[256];  /* the CUDA-graph mode and capture sizes (cost_graph_sizes_text) */
  uint64_t src_count[OP_COUNT][SRC_COUNT]; /* how often each source served each op (cost_src_counts) */
  bool interrupted;       /* stopped by a signal before its end */
  /* verdicts on the finished run */
  bottleneck bn;          /* which limit binds (runner_bottleneck) */
  whatif_report whatif;   /* whether each what-if happened while requests arrived (whatif_check) */

  run_record *reqs;       /* in trace order */
  size_t n_reqs;
  metrics_rec m;          /* step statistics, inter-token gaps, time series */
  metrics_summary sum;    /* vLLM benchmark figures */
  uint32_t engine_cores;  /* replicas x data-parallel ranks */
  unc_figs iv;            /* prediction intervals of the headline figures (runner/intervals.h; iv.on false = none) */
  bool complete;          /* every request closed (finished or refused) */
  uint32_t in_flight;     /* requests still sent and open at the end */
  uint64_t kv_lookup_tokens, kv_hit_tokens; /* prefix-cache queries and hits of new requests at admission, over
                                               engine cores (vLLM's exported counters) */
  uint64_t preempted_lookup_tokens, preempted_hit_tokens; /* the same for re-admissions of preempted requests */
  /* speculative decoding, over engine cores (vLLM's SpecDecodingStats, v1/spec_decode/metrics.py): steps of a
     request that verified drafts, draft tokens, accepted drafts, accepted drafts per position */
  uint64_t spec_drafts, spec_draft_tokens, spec_accepted, spec_accepted_pos[SPEC_MAX_K];
  /* the what-if events as the engine applied them (times saturate at SIM_NS_INF) */
  uint32_t n_failures;
  sim_ns failure_at_ns[SCENARIO_MAX_FAILURES];
  sim_ns time_limit_ns;   /* 0: none */
  uint8_t replicas_apart; /* 0: one shared timeline, 1: replicas simulated apart, 2: apart, then a tie sent it back
                             to the shared timeline (serve/fleet.h); the results are the same */
  uint64_t events;            /* simulation events processed (each step end, arrival, delivery, sample...) */
  uint64_t closed_form_steps; /* steps done as steady decode runs (serve/sched.h sched_run_*; the results are
                                 step-by-step scheduling's) */
  uint64_t closed_form_held_steps; /* of those, steps whose runs held their step ends outside the event heap (a
                                      timeline of few events: serve/cluster_events.c decode_run); for tests */
  /* --mode disagg: the decode pool's memory plan (plan: the prefill pool's), how its KV moved (runner.c
     setup_disagg) and the transfers' totals over the requests */
  mem_plan plan_dec;
  bool xfer_nvlink;
  uint64_t xfer_count, xfer_bytes;
  uint64_t local_prefills;     /* conditional disaggregation: requests prefilled on their decode worker */
  double xfer_ms_mean, xfer_ms_max;
  run_scale scale;        /* --autoscale: the fleet's changes, GPU-hours, cost, hours (runner/scaling.h) */
  uint64_t step_table_hits, step_table_misses; /* decode-only steps the cost model's step table answered / had
                                                  to compute (hw/cost_decstep.c); speed only, on the wall-time
                                                  line */
} run_result;

/* Times of record i as the metrics layer reads them (req_times_fn; ctx: const run_result *). */
void run_result_times(const void *ctx, size_t i, req_times *out);
/* TTFT, E2EL (ms) of a finished record; TPOT (ms) when it emitted at least two tokens, else NAN. */
double run_record_ttft_ms(const run_record *q);
double run_record_e2el_ms(const run_record *q);
double run_record_tpot_ms(const run_record *q);
void run_result_free(run_result *res);

#endif
