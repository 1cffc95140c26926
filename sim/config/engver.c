/* engver.c: engine versions and the behaviour that changed between them
 * (see engver.h). */
#include "config/engver.h"

#include "core/version.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads digits at *p (at most 6), advancing it; false when there are none or too many. */
static bool digits(const char **p) {
  const char *s = *p;
  while (isdigit((unsigned char)**p)) (*p)++;
  return *p > s && *p - s <= 6;
}

/* The suffix tag at *p ("rc", "post", ...) followed by its number, optionally after one of `seps`. */
static bool tagged(const char **p, const char *seps, const char *tag) {
  const char *s = *p;
  if (*s && strchr(seps, *s)) s++;
  size_t n = strlen(tag);
  if (strncmp(s, tag, n)) return false;
  s += n;
  if (!digits(&s)) return false;
  *p = s;
  return true;
}

bool engver_parse(const char *s, engver *out) {
  memset(out, 0, sizeof *out);
  if (!s || strlen(s) >= sizeof out->s) return false;
  const char *p = s;
  for (int i = 0; i < 3; i++) {
    if (!digits(&p)) return false;
    if (*p != '.' || !isdigit((unsigned char)p[1])) break;
    p++;
  }
  if (!tagged(&p, "", "rc") && !tagged(&p, "", "a")) tagged(&p, "", "b");
  tagged(&p, ".-", "post");
  tagged(&p, ".", "dev");
  if (*p == '+') { /* a local part: letters, digits and dots */
    p++;
    if (!isalnum((unsigned char)*p)) return false;
    while (isalnum((unsigned char)*p) || *p == '.') p++;
  }
  if (*p) return false;
  snprintf(out->s, sizeof out->s, "%s", s);
  return true;
}

int engver_cmp(const engver *a, const engver *b) { return version_cmp(a->s, b->s); }

/* ---- the facts -------------------------------------------------------------------- */

typedef enum fact_key { F_ASYNC = 0, F_RESERVE_FULL_ISL, F_GPU_MEM_UTIL, F_GRAPH_MODE } fact_key;

typedef struct fact {
  const char *engine;
  fact_key key;
  const char *since;     /* first version with `after` */
  double before, after;  /* bools as 0/1, graph_mode as its enum value */
  const char *source;
} fact;

static const fact FACTS[] = {
    {"vllm", F_GRAPH_MODE, "0.11.0", GRAPH_PIECEWISE, GRAPH_FULL_AND_PIECEWISE,
     "vllm/config/compilation.py: cudagraph_mode defaults to FULL_AND_PIECEWISE since v0.11.0 (full graphs for "
     "uniform decode batches, piecewise graphs with eager attention for mixed ones); PIECEWISE before"},
    {"vllm", F_ASYNC, "0.14.0", 0, 1,
     "vLLM v0.14.0 release: async scheduling (scheduler_config.async_scheduling, EngineCore batch queue of 2) on by "
     "default; before, opt-in with --async-scheduling (PR #19970)"},
    {"vllm", F_RESERVE_FULL_ISL, "0.19.0", 0, 1,
     "PR #37307 (2026-03, first in the v0.19 releases): scheduler_reserve_full_isl = True, a waiting request is "
     "admitted only when its whole sequence fits in the free KV blocks (allocate_slots full_sequence_must_fit)"},
    {"vllm", F_GPU_MEM_UTIL, "0.25.0", 0.9, 0.92,
     "vllm/config/cache.py at v0.25.0: gpu_memory_utilization default 0.92; 0.9 in the docs through v0.10.2 "
     "(the release in between that changed it is not pinned here: servesim assumes 0.9 before 0.25.0)"},
    {"sglang", F_GRAPH_MODE, "0.5.14", GRAPH_DECODE_ONLY, GRAPH_FULL_AND_PIECEWISE,
     "SGLang model_executor/cuda_graph_config.py at the v0.5.14 cherry-picks (49e384ce9): CudaGraphConfig prefill "
     "= TC_PIECEWISE, decode = FULL; through v0.5.9 (1efc33c64) server_args enable_piecewise_cuda_graph False, "
     "decode-only graphs (docs/SGLANG.md 1.1; the release in between that switched it is not pinned)"},
};

static const char *const FACT_NAMES[] = {"async_scheduling", "scheduler_reserve_full_isl", "gpu_memory_utilization",
                                         "cudagraph_mode"};

static double fact_get(const engine_cfg *e, fact_key k) {
  switch (k) {
    case F_ASYNC: return e->async_scheduling;
    case F_RESERVE_FULL_ISL: return e->reserve_full_isl;
    case F_GPU_MEM_UTIL: return e->gpu_memory_utilization;
    case F_GRAPH_MODE: return e->graph_mode;
  }
  return 0;
}

static void fact_set(engine_cfg *e, fact_key k, double v) {
  switch (k) {
    case F_ASYNC: e->async_scheduling = v != 0; break;
    case F_RESERVE_FULL_ISL: e->reserve_full_isl = v != 0; break;
    case F_GPU_MEM_UTIL: e->gpu_memory_utilization = v; break;
    case F_GRAPH_MODE: e->graph_mode = (graph_mode)(int)v; break;
  }
}

static double fact_value(const fact *f, const engver *v) {
  engver since;
  bool ok = engver_parse(f->since, &since);
  SIM_ASSERT(ok);
  return engver_cmp(v, &since) >= 0 ? f->after : f->before;
}

/* The oldest version servesim describes per engine (older ones are refused:
 * facts the table does not know would apply silently). */
static const struct {
  const char *engine, *oldest;
} OLDEST[] = {{"vllm", "0.8.0"}, {"sglang", "0.5.0"}};

static void known_versions(const char *engine, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(FACTS) && used + 1 < n; i++)
    if (!strcmp(FACTS[i].engine, engine))
      used += (size_t)snprintf(buf + used, n - used, "%s%s %s", used ? ", " : "", FACT_NAMES[FACTS[i].key],
                               FACTS[i].since);
}

int engver_apply(engine_cfg *e, const char *version, sim_err *err) {
  engver v;
  if (!engver_parse(version, &v))
    return sim_errf(err, SIM_EINPUT, "engine %s@%s: expected a version like 0.11.0, 1.3.0rc20 or 0.8.1.post3", e->name, version);
  for (size_t i = 0; i < SIM_ARRAY_LEN(OLDEST); i++) {
    engver old;
    engver_parse(OLDEST[i].oldest, &old);
    if (!strcmp(OLDEST[i].engine, e->name) && engver_cmp(&v, &old) < 0) {
      char known[512];
      known_versions(e->name, known, sizeof known);
      return sim_errf(err, SIM_EINPUT,
                      "engine %s@%s: servesim describes %s from %s on (version facts: %s; configs/README.md, Engine versions)",
                      e->name, version, e->name, OLDEST[i].oldest, known);
    }
  }
  for (size_t i = 0; i < SIM_ARRAY_LEN(FACTS); i++)
    if (!strcmp(FACTS[i].engine, e->name)) fact_set(e, FACTS[i].key, fact_value(&FACTS[i], &v));
  snprintf(e->version, sizeof e->version, "%s", version);
  return SIM_OK;
}

int engver_check(const engine_cfg *e, sim_err *err) {
  if (!e->version[0]) return SIM_OK;
  engver v;
  if (!engver_parse(e->version, &v))
    return sim_errf(err, SIM_EINPUT, "engine %s: version: expected a version like 0.11.0, got \"%s\"", e->name,
                    e->version);
  for (size_t i = 0; i < SIM_ARRAY_LEN(FACTS); i++) {
    if (strcmp(FACTS[i].engine, e->name)) continue;
    double want = fact_value(&FACTS[i], &v), have = fact_get(e, FACTS[i].key);
    if (want != have)
      return sim_errf(err, SIM_EINPUT, "engine %s %s: %s is %g but the version facts say %g (%s)", e->name, e->version,
                      FACT_NAMES[FACTS[i].key], have, want, FACTS[i].source);
  }
  return SIM_OK;
}

void engver_print(FILE *f) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(FACTS); i++) {
    const fact *x = &FACTS[i];
    bool mode = x->key == F_GRAPH_MODE;
    char b[32], a[32];
    if (mode) {
      snprintf(b, sizeof b, "%s", graph_mode_name((graph_mode)(int)x->before));
      snprintf(a, sizeof a, "%s", graph_mode_name((graph_mode)(int)x->after));
    } else {
      snprintf(b, sizeof b, "%g", x->before);
      snprintf(a, sizeof a, "%g", x->after);
    }
    fprintf(f, "%-7s %-27s from %-7s %s -> %s: %s\n", x->engine, FACT_NAMES[x->key], x->since, b, a, x->source);
  }
}

/* ---- per-GPU defaults and graph sizes ------------------------------------------------ */

#define GIB (1024.0 * 1024.0 * 1024.0)

/* vLLM EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py), OpenAI API
 * server: GPUs with >= 70 GiB whose name does not contain "a100" get
 * max_num_batched_tokens 8192 and max_num_seqs 1024; the others (A100 after
 * PR #17885, and every GPU under 70 GiB, e.g. L40S) 2048 and 256; from v0.28.0
 * GPUs with >= 160 GiB (B200/B300) get 16384 tokens. */
void engver_batch_defaults(const engine_cfg *e, const gpu_cfg *g, uint32_t *max_num_batched_tokens,
                           uint32_t *max_num_seqs) {
  *max_num_batched_tokens = e->max_num_batched_tokens;
  *max_num_seqs = e->max_num_seqs;
  if (engver_is_sglang(e)) *max_num_batched_tokens = engver_sglang_chunked_prefill(e, g); /* chunked_prefill_size */
  if (strcmp(e->name, "vllm")) return;
  char low[192];
  size_t i = 0;
  for (const char *s = g->full_name; *s && i + 1 < sizeof low; s++) low[i++] = (char)tolower((unsigned char)*s);
  low[i] = 0;
  bool a100 = strstr(low, "a100") != NULL || strstr(g->name, "a100") != NULL;
  if (g->mem_bytes < 70 * GIB || a100) {
    *max_num_batched_tokens = 2048;
    *max_num_seqs = 256;
    return;
  }
  *max_num_batched_tokens = 8192;
  *max_num_seqs = 1024;
  engver v, v28;
  engver_parse("0.28.0", &v28);
  if (g->mem_bytes >= 160 * GIB && e->version[0] && engver_parse(e->version, &v) && engver_cmp(&v, &v28) >= 0)
    *max_num_batched_tokens = 16384;
}

/* vLLM VllmConfig._set_cudagraph_sizes (v0.11.0 on): [1, 2, 4] + range(8, 256,
 * 8) + range(256, max + 1, 16), max = min(2 x max_num_seqs, 512), then no size
 * above max_num_batched_tokens. Before v0.11 (and for engines without that
 * rule): [1, 2, 4] + range(8, max + 1, 8) with max = cuda_graph_max_batch. */
uint32_t engver_graph_sizes(const engine_cfg *e, uint32_t max_num_seqs, uint32_t max_num_batched_tokens,
                            uint32_t *sizes, uint32_t cap) {
  if (e->graph_mode == GRAPH_NONE || e->cuda_graph_max_batch == 0) return 0;
  bool v11 = e->graph_mode == GRAPH_FULL_AND_PIECEWISE;
  uint32_t max = e->cuda_graph_max_batch;
  if (v11 && 2 * max_num_seqs < max) max = 2 * max_num_seqs;
  if (max_num_batched_tokens && max_num_batched_tokens < max) max = max_num_batched_tokens;
  uint32_t n = 0;
  for (uint32_t s = 1; s <= 4 && s <= max && n < cap; s *= 2) sizes[n++] = s;
  uint32_t fine_end = v11 ? 256 : UINT32_MAX; /* vLLM >= 0.11: steps of 16 from 256 on */
  for (uint32_t s = 8; s <= max && s < fine_end && n < cap; s += 8) sizes[n++] = s;
  for (uint32_t s = 256; v11 && s <= max && n < cap; s += 16) sizes[n++] = s;
  return n;
}

uint32_t engver_graph_sizes_on(const engine_cfg *e, const gpu_cfg *g, uint32_t tp, uint32_t max_num_seqs,
                               uint32_t max_num_batched_tokens, uint32_t *sizes, uint32_t cap) {
  if (!engver_is_sglang(e)) return engver_graph_sizes(e, max_num_seqs, max_num_batched_tokens, sizes, cap);
  if (e->graph_mode == GRAPH_NONE || e->cuda_graph_max_batch == 0) return 0;
  return engver_sglang_graph_sizes(e, engver_sglang_graph_max_bs(e, g, tp), sizes, cap);
}
