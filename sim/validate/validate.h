/* validate.h: servesim against published measurements of real engines.
 *
 * A validation point is one published measurement (a closed-loop benchmark at
 * a fixed concurrency, an offline max-throughput run, a static batch, a load
 * stage of an open-loop inference-perf run, or a user's `vllm bench serve
 * --save-result` run) with everything needed to reproduce it in servesim:
 * model, GPU, engine, TP, precision and workload shape. Readers (vdata.c for
 * the tables and user files, vopen.c for inference-perf result directories,
 * vdir.c for the data directory) turn each source into points (vset.c holds
 * them); vrun.c reproduces each point faithfully as the scenario vscenario.c
 * builds (vstage.c the open-loop stages) and records the prediction;
 * vstats.c computes the errors and the summaries, vreport.c (text) and
 * vreport_json.c (JSON, CSV) write them; fit.c fits the engine profiles' global parameters on a documented training
 * subset (never the open-loop stages).
 *
 * Workload shapes (vpoint.shape), reproduced exactly:
 *   VSHAPE_CLOSED   `concurrency` clients, num_prompts = 10 x concurrency (the
 *                   AIConfigurator guide), all queued at t=0, a client slot
 *                   frees when its request finishes and the next request is
 *                   sent at once; TTFT counts from slot acquisition; prefix
 *                   caching off (random prompts, cache reuse disabled); ISL
 *                   fixed, OSL spread by +-s around its value, s the
 *                   closed-loop output spread of the point's engine
 *                   (vclosed_spread; fitted with the engine parameters,
 *                   docs/ACCURACY.md says why).
 *   VSHAPE_OFFLINE  num_prompts requests all at t=0, no client limit
 *                   (trtllm-bench throughput).
 *   VSHAPE_STATIC   one batch of `concurrency` identical requests at t=0,
 *                   max_num_seqs = batch, max_num_batched_tokens = batch x isl
 *                   so the whole batch is prefilled in one step, then decoded
 *                   together (TensorRT-LLM gptSessionBenchmark).
 *   VSHAPE_OPEN     a user's run: num_prompts, request_rate (gamma gaps with
 *                   `burstiness`), optional max_concurrency, per-request
 *                   lengths when the result JSON lists them.
 *   VSHAPE_STAGED   one load stage of an open-loop inference-perf run
 *                   (vopen.c reads it, vstage.c reproduces it): the run's
 *                   shared_prefix prompts (workload/shprefix.h) under its
 *                   `constant` stages, stage after stage in one simulated
 *                   server (its prefix cache stays warm; a stage starts once
 *                   the previous one's requests have all ended, as
 *                   inference-perf does), with prefix caching on; the point's
 *                   metrics are over the requests sent in its stage that were
 *                   answered within the client timeout (inference-perf's
 *                   successes), for measured and predicted alike.
 *
 * Metrics (vmetric), compared as the source defines them:
 *   VM_TTFT  mean TTFT, ms (static batch: the batch's first-token latency)
 *   VM_TPOT  mean TPOT, ms (static batch: token-to-token latency)
 *   VM_TPUT  output tokens/s of the whole deployment. Closed-loop sources
 *            publish only TTFT and TPOT: there it is derived, for measured and
 *            predicted alike, as concurrency x osl / (TTFT + (osl - 1) TPOT)
 *            (a closed loop without think time completes C / E2EL req/s).
 *   VM_TTFT_P99  p99 TTFT, ms (open-loop stages)
 *   VM_E2E   mean end-to-end latency, send to last token, ms (open-loop
 *            stages). Their TPOT is not compared: inference-perf's
 *            time_per_output_token averages over the stream's lines, not the
 *            tokens (SOURCES.md), so TTFT and E2E carry the decode speed.
 *   VM_TTFT_MED  median TTFT, ms (open-loop stages): the mean's body without
 *            its tail (a few requests of seconds lift a stage's mean by more
 *            than the rest of it differs; docs/ACCURACY.md)
 * Error of a metric: 100 x (predicted - measured) / measured.
 *
 * A point the simulator cannot represent keeps its measured values and gets a
 * `skip` reason (listed, never dropped). A point servesim should represent
 * but whose run fails (e.g. the memory plan refuses a deployment that ran)
 * gets a `fail` reason and counts against the model.
 *
 * Saturation cliff: a closed-loop point is "on the cliff" when its TTFT
 * exceeds VAL_CLIFF_FACTOR x the TTFT of the point with the next lower
 * concurrency of the same series (GPU, engine, TP, isl, osl), or when that
 * point already is on it; measured and predicted are each classified on
 * their own values. This is the jump the KV pool causes when it fills and
 * requests queue for it (TTFT of tens of seconds at TP1/TP2 with long
 * sequences), told apart from the gradual growth of prefill queueing. The
 * lowest concurrency of each series is not classified.
 *
 * Kept up (open-loop stages): a stage kept up when the server answered at
 * least VAL_KEPT_UP_RATE of the offered rate (successes per second over the
 * stage's span, inference-perf's requests_per_sec) AND its p99 TTFT stayed
 * within VAL_KEPT_UP_TTFT_FRAC of the stage's duration (a queue that grows
 * through the stage makes the late requests wait a fraction of the stage: an
 * overload of x% ends the stage with TTFTs of about x% of its duration);
 * measured and predicted are each classified on their own values
 * (vstage_kept_up). On the published runs the two tests agree: every stage
 * either served >= 99.2% of its rate with p99 TTFT <= 0.5 s, or served
 * <= 81% with p99 TTFT of minutes (served < 100% even when the server kept
 * up: the span ends with the last request's latency).
 *
 * Ownership: vset_init/vset_free on caller storage; the set owns its points
 * and every array they point to. Thread safety: vrun_point on distinct points
 * may run concurrently (each run builds its own configs and engine). */
#ifndef SIM_VALIDATE_H
#define SIM_VALIDATE_H

#include <stdio.h>

#include "config/cfg.h"
#include "core/common.h"
#include "core/jsonw.h"
#include "runner/scenario.h"
#include "workload/trace.h"

#define VAL_CLIFF_FACTOR 5.0
#define VAL_CLOSED_PROMPTS_PER_CLIENT 10
#define VAL_KEPT_UP_RATE 0.95
#define VAL_KEPT_UP_TTFT_FRAC 0.01
/* The open-loop runs' server memory setting (SOURCES.md, openloop/). */
#define VSTAGE_GPU_MEMORY_UTILIZATION 0.9

typedef enum vsource {
  VSRC_AIC = 0,      /* aic_silicon_llama31_70b.csv */
  VSRC_TRT_OVERVIEW, /* trtllm_v0.14_perf_overview_llama31_70b.csv */
  VSRC_STATIC_BATCH, /* trtllm090_static_batch_llama2_70b.csv */
  VSRC_MLPERF,       /* published_facts.json, kind mlperf_result */
  VSRC_USER,         /* --measurements FILE */
  VSRC_INFPERF,      /* inference-perf result directories (openloop/), one point per load stage */
  VSRC_COUNT
} vsource;

typedef enum vshape { VSHAPE_CLOSED = 0, VSHAPE_OFFLINE, VSHAPE_STATIC, VSHAPE_OPEN, VSHAPE_STAGED, VSHAPE_COUNT } vshape;

/* VM_BASE_COUNT: the metrics of the closed-loop, offline, static and user
 * points (the CSV's first metric columns); the open-loop stages' follow. */
typedef enum vmetric { VM_TTFT = 0, VM_TPOT, VM_TPUT, VM_TTFT_MED, VM_TTFT_P99, VM_E2E, VM_COUNT } vmetric;
#define VM_BASE_COUNT 3

#define VSTAGE_MAX 16

/* One inference-perf run as read (vopen.c) and rebuilt (vstage.c). */
typedef struct vopen_run {
  char dir[512];                 /* the result directory */
  char name[96];                 /* its base name (in the points' ids) */
  char model_label[128];         /* server.model_name */
  uint32_t n_groups, prompts_per_group;           /* data.shared_prefix: num_groups, num_prompts_per_group */
  uint32_t system_prompt_tokens, question_tokens; /* data.shared_prefix: nominal lengths, tokens */
  uint32_t output_tokens;        /* data.shared_prefix.output_len: max_tokens with ignore_eos */
  double meas_input_tokens;      /* mean prompt tokens per answered request (stage files), NAN if none */
  uint32_t prompt_tokens;        /* rebuilt prompt: the measured mean (else nominal), tokens */
  uint32_t shared_tokens;        /* rebuilt system prompt: nominal x prompt_tokens / nominal prompt, tokens */
  uint32_t n_stages;
  double rate_per_s[VSTAGE_MAX]; /* load.stages[k].rate, requests/s */
  double duration_s[VSTAGE_MAX]; /* load.stages[k].duration, s */
  double interval_s;             /* load.interval: pause between stages, s */
  double timeout_s;              /* client timeout per request, s (load.request_timeout, else aiohttp's 300) */
  uint32_t max_model_len, max_num_batched_tokens, max_num_seqs; /* exp-config.yaml (server args) */
  char profile_note[512];        /* what profile.yaml asked for and config.yaml did not run ("" = none) */
} vopen_run;

/* One stage's outcome by inference-perf's definitions, measured (its stage
 * file) or predicted (vstage.c). */
typedef struct vstage_out {
  uint64_t sent;           /* requests sent in the stage */
  uint64_t ok;             /* answered in full within the client timeout */
  double served_rate;      /* ok / (last end - first send) over the stage's requests, req/s */
  double mean_input_tokens;/* mean prompt tokens of the answered requests (NAN if none) */
  bool kept_up;            /* vstage_kept_up */
} vstage_out;

typedef struct vstaged {
  vopen_run run;           /* the run the stage belongs to (each stage point holds a copy) */
  uint32_t stage;          /* this point's stage, 0-based */
  vstage_out meas, pred;
  double start_s[VSTAGE_MAX]; /* predicted: stage starts on the stages' clock, s (0..stage) */
  uint64_t first_req;      /* predicted: index of the stage's first request in the rebuilt trace */
} vstaged;

typedef struct vpoint {
  char id[128];            /* unique readable id, e.g. "aic/h200/trtllm/tp4/1024x1024/c64" */
  char where[320];         /* "file:line" of the row it came from */
  vsource src;
  vshape shape;
  /* what to simulate: servesim config names ("" when unmapped: then skip is set) */
  char model[512];         /* a config name, or the path of a --models config.json */
  char gpu[64], engine[32];
  char engine_version[32]; /* the engine version that was measured ("" = the engine file's) */
  char kernel_version[32]; /* the bundled kernel tables to use ("<gpu>_<engine>-<this>"), "" = --profile auto's choice */
  char group[96];          /* series key "gpu/engine/tpN/islxosl": cliffs and baselines */
  uint32_t tp, pp;         /* tensor and pipeline parallel sizes */
  uint32_t dp;             /* attention data-parallel ranks (vLLM --data-parallel-size); 0 or 1 = none */
  bool ep;                 /* expert parallelism over the TP ranks (vLLM --enable-expert-parallel) */
  uint32_t moe_ep;         /* hybrid MoE TP x EP: EP groups of the MoE layers (--moe-expert-parallel-size); 0 = none */
  sim_dtype act_dtype, weight_dtype, kv_dtype;
  /* disaggregated serving (--mode disagg): the pools; tp is the decode pool's then */
  bool disagg;
  uint32_t p_workers, p_tp, p_dp, p_seqs, d_workers, d_tp, d_dp, d_seqs;
  uint32_t isl, osl;       /* tokens (fixed lengths; user points: means) */
  uint32_t concurrency;    /* CLOSED: client slots; STATIC: batch size; OPEN: max_concurrency (0 = none) */
  uint64_t num_prompts;    /* requests in the run */
  double request_rate;     /* OPEN: requests/s (INFINITY = all at t=0) */
  double burstiness;       /* OPEN: gamma shape of the gaps */
  scenario *user_sc;       /* OPEN: the user's deployment (owned by the set), else NULL */
  uint32_t *in_lens, *out_lens; /* OPEN: per-request lengths from the result JSON (owned), or NULL */
  size_t n_lens;
  vstaged *staged;         /* STAGED: the run and the stage (owned), else NULL */
  /* published values: NAN = not published for this point */
  double meas[VM_COUNT];
  bool tput_derived;       /* VM_TPUT derived from TTFT and TPOT (closed loop) */
  bool train;              /* in the fitting subset (fit.c, documented there) */
  bool moe;                /* the model is a mixture of experts (never in the fitting subset) */
  char skip[256];          /* non-empty: cannot be represented; the reason */
  char note[400];          /* how the row was read where it needed a rule ("; "-separated; the method shows it) */
  /* results of vrun_point */
  bool ran;
  char fail[512];          /* non-empty: the run failed; the reason */
  double pred[VM_COUNT];   /* NAN when not predicted */
  double pred_kv_tokens;   /* KV pool of one replica, tokens */
  double pred_queue_ms;    /* mean send -> first scheduled */
  uint64_t pred_preemptions;
  uint64_t pred_completed;      /* requests that finished */
  uint32_t pred_peak_in_system; /* most requests sent and not finished at once */
  double pred_ttft_min_ms, pred_ttft_max_ms;
  char stratum[32];        /* what the prediction rests on, "<cost>/<loop>/<arch>" (runner/stratum.h; "" = not run) */
  double wall_s;           /* wall time of the run */
} vpoint;

/* Labels of the sources -> servesim configs (vresolve.c). */
typedef struct vresolve vresolve;
/* Every model, GPU and engine config servesim knows (bundled and under
 * $SERVESIM_DATA_DIR), with their names and aliases. */
vresolve *vres_new(void);
void vres_free(vresolve *r);
/* Adds the config.json files of dir, each named after its Hugging Face id
 * ("/" written "--"); *n_added (may be NULL) gets how many. */
int vres_add_models_dir(vresolve *r, const char *dir, size_t *n_added, sim_err *err);
/* The model to run for a label (a config name, or a --models file's path),
 * or NULL: then why (may be NULL) holds the reason when the label is a
 * known model servesim cannot read (e.g. MLA attention), else "". */
const char *vres_model(const vresolve *r, const char *label, char *why, size_t n);
/* vres_model, also resolving a label known by another organization or with a quantization suffix (see
 * vresolve.c); note (may be NULL) then says how, else is ""; *base_of_quantized (may be NULL): the label was
 * resolved to the architecture of the checkpoint it quantizes. */
const char *vres_model_note(const vresolve *r, const char *label, char *why, size_t n, char *note, size_t nn,
                            bool *base_of_quantized);
const char *vres_gpu(const vresolve *r, const char *label);    /* GPU config name or NULL */
const char *vres_engine(const vresolve *r, const char *label); /* engine config name or NULL */

typedef struct vset {
  vpoint *pts;
  size_t n, cap;
  vresolve *res;           /* label resolution (vset_resolver creates it on first use) */
  char notes[16][384];     /* source files found / not found, one line each */
  int n_notes;
} vset;

void vset_init(vset *s);
void vset_free(vset *s);
/* Appends a blank point (meas/pred NAN, dtypes bf16) and returns it. */
vpoint *vset_add(vset *s);
/* Frees what a point owns (user scenario, lengths, stage); the point stays. */
void vpoint_release(vpoint *p);
/* Appends a note line (printf-style; dropped when the 16 slots are full). */
void vset_note(vset *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The set's resolver (created with the bundled configs on first use). */
vresolve *vset_resolver(vset *s);

/* ---- parsers (vdata.c, vdata_aic.c; files reach them through vdata_load_path) ----
 * Each appends the points of one text. A malformed row is SIM_EINPUT with
 * "FILE:LINE: FIELD: problem". Cells a table leaves empty are not points.
 * The user format (docs/ACCURACY.md):
 *   {"name": str (optional),
 *    "scenario": {servesim scenario keys: model, gpu, engine, deployment{...},
 *                 optionally workload{random_input_len, random_output_len,
 *                 random_range_ratio} when the result has no per-request lengths},
 *    "result": {the `vllm bench serve --save-result` JSON}}
 * or a JSON array of such objects.
 * `what` names the source in messages. */
int vdata_parse_aic(vset *s, const char *text, const char *what, sim_err *err);
int vdata_parse_trt_overview(vset *s, const char *text, const char *what, sim_err *err);
int vdata_parse_static_batch(vset *s, const char *text, const char *what, sim_err *err);
int vdata_parse_mlperf(vset *s, const char *text, const char *what, sim_err *err);
int vdata_parse_user(vset *s, const char *text, const char *what, sim_err *err);
/* Reads a measurement file or a directory by content, whatever the names:
 * a file must be one of the formats above (else SIM_EINPUT naming them); a
 * directory is scanned (name order, VDATA_SCAN_DEPTH levels) for .csv and
 * .json files in those formats (others are ignored) and inference-perf
 * result directories; error when it holds none. Notes say what was read. */
int vdata_load_path(vset *s, const char *path, sim_err *err);
/* vdata_load_path on a directory that must exist. */
int vdata_load_dir(vset *s, const char *dir, sim_err *err);
/* The default --models directory: $SERVESIM_SHARED_DIR/models, else
 * ../shared/models; returns 1 with it in out when one exists, else 0. */
int vdata_find_models_dir(char *out, size_t n);

/* ---- inference-perf result directories (vopen.c) --------------------------
 * A result directory is recognized by its content: at least one
 * stage_<K>_lifecycle_metrics.json beside config.yaml or profile.yaml.
 * Reading it needs config.yaml (inference-perf's expanded config: what ran),
 * exp-config.yaml (the server's arguments) and a stage file per configured
 * stage; profile.yaml (the config as requested) is only compared. Bad input is
 * SIM_EINPUT with "FILE:LINE: field: problem". A run servesim cannot rebuild
 * (another data generator, load type or API; a model it has no config for)
 * still gives its points, skipped with the reason. */
bool vopen_is_result_dir(const char *dir);
/* Appends one point per load stage of the run in dir. */
int vdata_read_infperf(vset *s, const char *dir, sim_err *err);
/* Every result directory at most max_depth levels below root (root itself
 * included), in name order; *n_runs (may be NULL) gets how many. */
int vdata_scan_infperf(vset *s, const char *root, int max_depth, size_t *n_runs, sim_err *err);
/* Resolves the data directory: explicit (may be NULL), else
 * $SERVESIM_SHARED_DIR/validation, else ../shared/validation from the cwd. */
int vdata_find_dir(const char *explicit_dir, char *out, size_t n, sim_err *err);

/* ---- reproduction (vscenario.c, vrun.c) ------------------------------------- */

/* Global parameters the fit may change (fit.c); NAN = keep the engine file's
 * value (or, for the spread, the fitted default of vclosed_spread). One set
 * per engine name. All but the last are engine_cfg fields; the last describes
 * the closed-loop measurements of that engine, not the engine. */
typedef enum vparam {
  VP_STEP_OVERHEAD_US = 0,
  VP_PER_SEQ_OVERHEAD_US,
  VP_LAUNCH_OVERHEAD_US,
  VP_GEMM_COMPUTE_EFF,
  VP_GEMM_MEMORY_EFF,
  VP_ATTN_PREFILL_EFF,
  VP_ATTN_DECODE_EFF,
  VP_ELEMENTWISE_EFF,
  VP_ALLREDUCE_BW_EFF,
  VP_ALLREDUCE_LATENCY_US,
  VP_RUNTIME_OVERHEAD_MIB,
  VP_FRONTEND_LATENCY_US,
  VP_CLOSED_OUTPUT_SPREAD, /* closed-loop points of this engine: output lengths osl x U[1-s, 1+s] */
  VP_STREAM_PER_SEQ_US,    /* the output path's CPU time per streamed sequence per step (engine stream_per_seq_us) */
  VP_COUNT
} vparam;

typedef struct vengine_override {
  char engine[32];         /* engine name it applies to ("" = unused slot) */
  double v[VP_COUNT];
} vengine_override;

/* How the points are run: engine parameter overrides (fit, --param) and the
 * closed-loop output spread. */
typedef struct voverrides {
  vengine_override e[4];
  int n;
  /* Closed-loop points only: output lengths uniform in [osl (1 - s), osl (1 + s)]
   * (vLLM's range-ratio draw; mean osl). Published closed-loop TTFTs lie below
   * what any schedule of identical-length clients allows (docs/ACCURACY.md):
   * the clients desynchronize, which only a spread in request lengths does in
   * a deterministic simulation. NAN = per engine (vclosed_spread); a value
   * (--output-spread) applies to every engine; 0 = strictly fixed lengths. */
  double closed_output_spread;
  /* --allreduce: every point's all-reduce source (ar_source), when
   * allreduce_set; else each point's default (auto). */
  ar_source allreduce;
  bool allreduce_set;
  /* --moe-routing: every mixture-of-experts point's expert load (which of the kernel database's routings its
   * fused-MoE tables are read at), when moe_routing_set; else the default (balanced). */
  moe_routing moe_routing;
  bool moe_routing_set;
  /* --set KEY=VALUE: deployment settings (config/settings.h, by scenario key) applied to every point after the
   * source's own facts, in order; checked when parsed (voverride_set_add). */
  struct {
    char key[48];
    char value[64];
  } set[16];
  int n_set;
} voverrides;

/* Adds one --set KEY=VALUE (the settings table's scenario key or flag name): an unknown key, a value the
 * setting refuses or a seventeenth one is an input error. */
int voverride_set_add(voverrides *ov, const char *item, sim_err *err);
/* Applies the --set settings to *d (checked by voverride_set_add, so they apply). */
void voverride_set_apply(const voverrides *ov, deploy_cfg *d);

/* The closed-loop output spread s of the points of `engine`: the global
 * override if set, else the engine's --param/fit value, else the fitted
 * default (vscenario.c; 0 for engines without one). */
double vclosed_spread(const voverrides *ov, const char *engine);

const char *vparam_name(vparam p);
/* Applies the overrides for e->name to *e (NULL = none). */
void vparam_apply(const voverrides *ov, engine_cfg *e);
double vparam_get(const engine_cfg *e, vparam p);

/* Builds the scenario that reproduces p (not for skipped points; vscenario.c). */
void vpoint_scenario(const vpoint *p, const voverrides *ov, scenario *sc);
/* Runs one point (vrun.c): fills pred (or fail). Returns SIM_OK even when the point's
 * run fails for a modelled reason (fail is set); SIM_EINTERNAL only for bugs. */
int vrun_point(vpoint *p, const voverrides *ov, sim_err *err);

/* ---- open-loop stages (vstage.c) -------------------------------------------- */

/* The kept-up rule (header comment): served >= VAL_KEPT_UP_RATE x offered and
 * p99 TTFT <= VAL_KEPT_UP_TTFT_FRAC x duration; false when either is unknown. */
bool vstage_kept_up(double served_rate, double offered_rate, double ttft_p99_ms, double duration_s);
/* Reproduces a STAGED point (vrun_point calls it): simulates its run's stages
 * 0..stage and fills pred, pred metrics and the stage starts (or fail). */
void vstage_run_point(vpoint *p, const voverrides *ov);
/* The rebuilt workload of a STAGED point that ran (stages 0..stage, placed
 * where the simulation placed them): the trace `servesim run --trace` replays
 * to redo it. Initializes *out. */
int vstage_trace(const vpoint *p, trace *out, sim_err *err);
/* How the point is reproduced, in words, for the reports; trace_path (may be
 * NULL) names the file --save-traces wrote. */
void vstage_method(const vpoint *p, const char *trace_path, char *buf, size_t n);
/* How any point is reproduced, in words and as the servesim run command that
 * redoes it (what no flag expresses is named); stages: vstage_method. */
void vpoint_method(const vpoint *p, const voverrides *ov, char *buf, size_t n);
/* Runs every point that is not skipped (and, if only_train, in the training
 * set; if engine is non-NULL, only points of that engine), in parallel on
 * libuv's thread pool. */
int vrun_all(vset *s, const voverrides *ov, bool only_train, const char *engine, sim_err *err);

/* ---- errors and summaries (vstats.c) ---------------------------------------- */

typedef struct verr_stats {
  size_t n;                /* points with both values */
  double median_abs, mean_abs, median_signed; /* percent */
  double worst_abs;        /* percent */
  const vpoint *worst;     /* the point of the worst error (borrowed) */
} verr_stats;

/* Signed percent error of metric m of p; NAN when either value is missing. */
double verr_pct(const vpoint *p, vmetric m);
/* Statistics of |error| over the points accepted by filter (NULL = all). */
typedef bool (*vfilter)(const vpoint *p, const void *arg);
void verr_summarize(const vset *s, vmetric m, vfilter f, const void *arg, verr_stats *out);

typedef struct vcliff {
  size_t tp, tn, fp, fn;   /* predicted vs measured: on the cliff / not */
  size_t unclassified;     /* baselines and points without both TTFTs */
} vcliff;
/* Classifies closed-loop points (see the header comment). side[i] for point i:
 * bit0 measured on the cliff, bit1 predicted on the cliff, bit2 classified. */
void vcliff_count(const vset *s, vfilter f, const void *arg, vcliff *out, uint8_t *side);

/* Kept up vs overloaded over the STAGED points (header comment). */
typedef struct vkept {
  size_t both_up;      /* measured kept up, predicted kept up */
  size_t both_over;    /* measured overloaded, predicted overloaded */
  size_t false_over;   /* measured kept up, predicted overloaded (a false alarm) */
  size_t missed_over;  /* measured overloaded, predicted kept up (a missed overload) */
  size_t unclassified; /* stage points without a prediction (skipped, failed) */
} vkept;
void vkept_count(const vset *s, vkept *out);

/* ---- names and formatting (vnames.c) ----------------------------------------- */

/* snprintf that may truncate on purpose (ids, notes, reasons): always
 * NUL-terminates. */
void vfmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const char *vsource_name(vsource s);
const char *vshape_name(vshape s);
const char *vmetric_name(vmetric m);

typedef enum vgroup_by { VG_SOURCE = 0, VG_GPU, VG_ENGINE, VG_TP, VG_SHAPE, VG_MODEL, VG_VERSION, VG_LOOP, VG_SPLIT, VG_STRATUM, VG_COUNT } vgroup_by;
/* VG_SPLIT: "training dense", "held_out dense", "held_out moe", ...: whether the fit saw the point, and
 * whether its model is a mixture of experts. VG_STRATUM: vpoint.stratum. */
/* "closed", "open" (user runs and inference-perf stages), "offline", "static". */
const char *vloop_name(vshape s);
const char *vgroup_name(vgroup_by g);
bool vgroup_parse(const char *s, vgroup_by *out);

/* ---- the reports (vreport.c: text; vreport_json.c: JSON, CSV; vcover.c) ------- */

typedef struct vreport_opts {
  bool table;              /* per-point table */
  bool groups[VG_COUNT];   /* per-group summaries to print */
  bool show_skipped;
  size_t min_points;       /* summaries of fewer points are flagged as too few to judge (0 = off) */
  const voverrides *ov;    /* how the points were run (the methods name it), or NULL */
  double wall_s;           /* total wall time of the runs */
  const char *title;       /* e.g. the parameter set used */
  const struct vcal *cal;  /* --calibration: the leave-one-model-out coverage (validate/vresid.h), or NULL */
} vreport_opts;

void vreport_text(const vset *s, const vreport_opts *o, FILE *f);
/* Coverage (vcover.c): rows predicted, failed and skipped, and the skip reasons by count (a reason's own
 * figures written N), most first: a text block, a "coverage" JSON member, and the three counts. */
void vcover_text(const vset *s, FILE *f);
void vcover_json(const vset *s, jw *j);
void vcover_counts(const vset *s, size_t *predicted, size_t *failed, size_t *skipped);
int vreport_json(const vset *s, const vreport_opts *o, FILE *f, sim_err *err);
int vreport_csv(const vset *s, const voverrides *ov, FILE *f, sim_err *err);

/* Filters used by the summaries (vstats.c). */
bool vfilter_closed(const vpoint *p, const void *arg);
bool vfilter_shape(const vpoint *p, const void *arg);   /* arg: const vshape * */
bool vfilter_train(const vpoint *p, const void *arg);   /* arg: const bool * (true = training set) */
/* Held out: not in the training set and not an open-loop stage (the stages
 * have their own summaries: their metrics and regime differ). */
bool vfilter_held_out(const vpoint *p, const void *arg);
bool vfilter_staged(const vpoint *p, const void *arg);  /* the open-loop stages */

/* The metrics each kind of point is summarized on (vstats.c): the base points, the open-loop stages, all. */
extern const vmetric vmetrics_base[3];
extern const vmetric vmetrics_stage[4];
extern const vmetric vmetrics_all[6];

/* Groups (--group): a point's key in group g (vgroup_name), e.g. "tp4" or "h100"; the distinct keys of g among
 * the points that ran, in first-seen order (at most max); and the filter of one key. */
void vgroup_key(const vpoint *p, vgroup_by g, char *buf, size_t n);
int vgroup_keys(const vset *s, vgroup_by g, char keys[][96], int max);
typedef struct vgroup_sel {
  vgroup_by g;
  const char *key;
  bool staged; /* the open-loop stages of the group (else everything else) */
} vgroup_sel;
bool vfilter_group(const vpoint *p, const void *arg); /* arg: const vgroup_sel * */

/* ---- fitting (fit.c) ---------------------------------------------------------- */

typedef struct vfit_opts {
  int max_rounds;          /* coordinate-search rounds (halvings of the step) */
  bool verbose;            /* progress lines on stderr */
  FILE *log;               /* progress output (NULL = none) */
} vfit_opts;

/* Marks the training subset (documented in fit.c and docs/ACCURACY.md). */
void vfit_mark_training(vset *s);
/* Objective of one engine on its training points: mean over TTFT and TPOT of
 * the mean squared log error. Runs them. */
double vfit_objective(vset *s, const voverrides *ov, const char *engine, sim_err *err);
/* Fits the parameters of `engine` (coordinate search in log space, from the
 * engine file's values); writes the result into *ov. */
int vfit_engine(vset *s, voverrides *ov, const char *engine, const vfit_opts *o, sim_err *err);

#endif
