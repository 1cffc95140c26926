/* trace.h: a request trace in memory, its readers and transforms.
 *
 * Formats (detected by header / first line when format is TRACE_FMT_AUTO):
 *   native    CSV `arrival_s,prompt_tokens,output_tokens[,session_id][,hash_ids]`
 *             header required; arrival in seconds (float); session_id any
 *             token (empty = none); hash_ids `|`-separated unsigned integers,
 *             one per `hash_block_tokens` prompt tokens (a `# hash_block_tokens=N`
 *             comment line before the header sets N; default 512). `#` lines
 *             are comments.
 *   azure     Azure LLM inference 2023/2024: `TIMESTAMP,ContextTokens,GeneratedTokens`,
 *             timestamps `YYYY-MM-DD HH:MM:SS.fffffff` (up to 7 fractional
 *             digits, or none), CRLF or LF, last line may lack a newline.
 *   burstgpt  BurstGPT: `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`
 *             or `Timestamp,Session ID,Elapsed time,Model,Request tokens,...`
 *             (columns found by name). Rows with 0 response tokens are
 *             failures (upstream: "failure that `Response tokens` are 0s";
 *             request is 0 too in the public slices): skipped and counted in
 *             n_failed_rows.
 *   mooncake  JSONL `{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}`,
 *             hash_block_tokens = 512.
 *
 * After loading, arrivals are relative to the first request (t=0), sorted
 * (unsorted input is an error naming the line), and every request has
 * prompt_tokens >= 1 and output_tokens >= 1 (rows with 0 output tokens are
 * errors, except BurstGPT failure rows).
 *
 * Sessions are numbered 1..n_sessions in order of first appearance (the
 * transforms renumber), so trace_write_native's `s<index>` reads back the same.
 *
 * Errors name the file, the 1-based line and the column/field.
 * Ownership: trace_init/trace_free on caller storage; the trace owns its arrays.
 * trace_load/trace_parse (and gen_trace) initialize *t themselves (previous
 * contents are not freed); on error *t is left empty and trace_free is safe. */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stdio.h>

#include "core/common.h"

typedef enum trace_format {
  TRACE_FMT_AUTO = 0,
  TRACE_FMT_NATIVE,
  TRACE_FMT_AZURE,
  TRACE_FMT_BURSTGPT,
  TRACE_FMT_MOONCAKE,
  TRACE_FMT_GENERATED /* produced by gen.h, not read from a file */
} trace_format;

typedef struct trace_req {
  sim_ns arrival_ns;      /* since the first arrival */
  uint32_t prompt_tokens; /* input tokens, >= 1 */
  uint32_t output_tokens; /* tokens to generate (max_tokens, ignore_eos), >= 1 */
  uint32_t session;       /* 0 = none, else 1-based session index */
  uint32_t hash_off;      /* first prefix-block id in trace.hash_ids */
  uint32_t n_hash;        /* number of prefix-block ids; 0 = content unknown (unique) */
} trace_req;

typedef struct trace {
  trace_req *reqs;
  size_t n, cap;
  uint64_t *hash_ids; /* prefix-block ids, shared array */
  size_t n_hash, cap_hash;
  uint32_t hash_block_tokens; /* prompt tokens covered by one hash id (512 for Mooncake) */
  uint32_t n_sessions;        /* distinct sessions seen */
  trace_format format;
  char source[1024];          /* file path, or a description of the generator */
  size_t n_failed_rows;       /* BurstGPT failure rows skipped */
  double t0_s;                /* first arrival in the file's own clock, seconds (0 if n/a) */
} trace;

void trace_init(trace *t);
void trace_free(trace *t);
/* Frees the rows and prefix ids but keeps the description (source, format,
 * n, counters): what a finished run still shows of its workload. */
/* Frees the rows alone (reqs), keeping n, the prompt-block ids and the description: a simulation
 * that copied the rows into its own requests no longer needs them. */
void trace_drop_reqs(trace *t);
void trace_free_rows(trace *t);
/* Appends one request (hash ids copied). */
void trace_push(trace *t, sim_ns arrival_ns, uint32_t prompt, uint32_t output, uint32_t session,
                const uint64_t *hash_ids, uint32_t n_hash);

int trace_load(trace *t, const char *path, trace_format fmt, sim_err *err);
/* Parses from memory; `path` names the source in messages. */
int trace_parse(trace *t, const char *text, size_t len, const char *path, trace_format fmt, sim_err *err);
const char *trace_format_name(trace_format f);
bool trace_format_parse(const char *s, trace_format *out);

/* Writes the native CSV format; lossless (arrival printed with ns precision). */
int trace_write_native(const trace *t, FILE *out, sim_err *err);

/* Transforms (all keep arrivals sorted and re-zero them at the first kept request). */
/* Keeps requests with start_s <= arrival < end_s (end_s < 0: no end). */
void trace_window(trace *t, double start_s, double end_s);
/* Compresses time: arrivals divided by factor (> 0); 2 = twice the rate. */
void trace_scale_rate(trace *t, double factor);
/* Multiplies lengths, rounding to nearest, at least 1 token. */
void trace_scale_lengths(trace *t, double prompt_factor, double output_factor);
/* Keeps the first n requests. */
void trace_truncate(trace *t, size_t n);
/* Arrivals up to duration_s: cut at it, or extended by repeating the trace,
 * copy k shifted by k x period (period = the last arrival plus the mean gap,
 * so the copies follow each other at the trace's own rate). Each copy's
 * sessions are new sessions and its prefix-block ids new ids (id mixed with
 * the copy number: within a copy equal ids stay equal, across copies they
 * differ), unless share_prefixes. Returns false (trace unchanged) when the
 * trace has no time span to repeat (every arrival at 0). */
bool trace_repeat(trace *t, double duration_s, bool share_prefixes);

typedef struct trace_stats {
  size_t n;
  double span_s;                /* last - first arrival */
  double rate_per_s;            /* n / span (0 when span is 0) */
  double prompt_mean, prompt_p50, prompt_p90, prompt_p99, prompt_max;
  double output_mean, output_p50, output_p90, output_p99, output_max;
  uint64_t prompt_total, output_total;
} trace_stats;
void trace_compute_stats(const trace *t, trace_stats *s);

#endif
