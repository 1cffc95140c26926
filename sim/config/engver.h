/* engver.h: engine versions and the behaviour that changed between them.
 *
 * An engine file (configs/engines/<name>.json) describes one version of its
 * engine ("version"). `--engine vllm@0.11.0` asks for another: the file is
 * read, then every fact of the table below is set to its value in that
 * version. Each fact names the release that changed it and the source (file,
 * PR or release note). The file's own values must equal the table's at the
 * file's version (a test checks it), so the table is the one place these
 * facts live.
 *
 * Facts (vLLM; see engver.c for each source):
 *   async_scheduling        on from 0.14.0 (batch queue of 2, sched.h)
 *   reserve_full_isl        on from 0.19.0 (admission needs the whole prompt's blocks)
 *   gpu_memory_utilization  0.92 from 0.25.0, 0.9 before
 *   cudagraph_mode          FULL_AND_PIECEWISE from 0.11.0, PIECEWISE before
 * and the per-GPU scheduler defaults (engver_batch_defaults).
 *
 * Versions are one to three dotted numbers with PEP 440's optional suffixes:
 * a pre-release (a, b, rc + a number), a post-release (.postN), a development
 * release (.devN) and a local part (+...), ordered as core/version.h says
 * ("1.3.0rc20" precedes "1.3.0", "1.2.0rc6.post1" follows "1.2.0rc6"). */
#ifndef SIM_ENGVER_H
#define SIM_ENGVER_H

#include <stdio.h>

#include "config/cfg.h"

typedef struct engver {
  char s[48]; /* the version as written; compared by core/version.h's order */
} engver;

/* Parses "0.11", "0.11.1", "1.3.0rc20", "0.8.1.post3", "1.2.0rc6.post1",
 * "0.14.1.dev1+gd68209402". False on anything else (build names such as
 * "gpt-oss-dev" included). */
bool engver_parse(const char *s, engver *out);
int engver_cmp(const engver *a, const engver *b);

/* Sets every fact of the table for e->name to its value at `version` and
 * records the version in e->version. SIM_EINPUT (naming the engine and the
 * versions it knows) for an unparsable version or one older than the oldest
 * the table knows. Engines without facts accept any parsable version. */
int engver_apply(engine_cfg *e, const char *version, sim_err *err);
/* Checks that the engine's fields equal the table's values at its own
 * version (for the tests and `servesim list`); SIM_EINPUT naming the first
 * field that differs. */
int engver_check(const engine_cfg *e, sim_err *err);

/* The scheduler defaults the engine picks on GPU g (vLLM: EngineArgs
 * get_batch_defaults for the OpenAI server): max_num_batched_tokens and
 * max_num_seqs. Engines without a GPU rule keep their file's values. */
void engver_batch_defaults(const engine_cfg *e, const gpu_cfg *g, uint32_t *max_num_batched_tokens,
                           uint32_t *max_num_seqs);

/* The CUDA-graph capture sizes of a deployment (vLLM _set_cudagraph_sizes):
 * fills sizes[] (increasing, capacity `cap`) and returns how many; 0 when the
 * engine captures none. */
uint32_t engver_graph_sizes(const engine_cfg *e, uint32_t max_num_seqs, uint32_t max_num_batched_tokens,
                            uint32_t *sizes, uint32_t cap);

/* SGLang (engver_sglang.c): its defaults by GPU memory, TP and version, from server_args.py. */
bool engver_is_sglang(const engine_cfg *e);
uint32_t engver_sglang_chunked_prefill(const engine_cfg *e, const gpu_cfg *g); /* chunked_prefill_size */
uint32_t engver_sglang_graph_max_bs(const engine_cfg *e, const gpu_cfg *g, uint32_t tp); /* cuda_graph_max_bs */
/* The capture sizes up to max_bs, increasing; returns how many. */
uint32_t engver_sglang_graph_sizes(const engine_cfg *e, uint32_t max_bs, uint32_t *sizes, uint32_t cap);
/* mem_fraction_static: (weights + KV pool) / GPU memory (prefill_tokens: chunked_prefill_size, or
 * max_prefill_tokens without chunking). */
double engver_mem_fraction_static(const engine_cfg *e, const gpu_cfg *g, uint32_t tp, uint32_t pp, uint32_t dp,
                                  uint32_t prefill_tokens);
/* schedule_conservativeness with dp attention ranks (x 0.3 when dp > 1). */
double engver_sglang_conservativeness(const engine_cfg *e, uint32_t dp);
/* Decode steps a retraction frees room for (1, or 20 before 0.5.6). */
uint32_t engver_sglang_retract_steps(const engine_cfg *e);
/* The capture sizes of a deployment on GPU g with TP tp: SGLang's rule, else engver_graph_sizes. */
uint32_t engver_graph_sizes_on(const engine_cfg *e, const gpu_cfg *g, uint32_t tp, uint32_t max_num_seqs,
                               uint32_t max_num_batched_tokens, uint32_t *sizes, uint32_t cap);

/* Prints the fact table (engine, fact, since, before, after, source), one
 * line per fact. */
void engver_print(FILE *f);

#endif
