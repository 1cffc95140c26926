/* trace_rows.c: the in-memory trace's storage (init, push, free) and the
 * names of trace formats: what the readers (trace_read.c), the transforms and
 * the writer (trace.c) all build on. Invariants: trace.c's header comment. */
#include <stdlib.h>
#include <string.h>

#include "workload/trace.h"

void trace_init(trace *t) {
  memset(t, 0, sizeof *t);
  t->hash_block_tokens = 512;
  t->format = TRACE_FMT_AUTO;
}

void trace_free(trace *t) {
  free(t->reqs);
  free(t->hash_ids);
  t->reqs = NULL;
  t->hash_ids = NULL;
  t->n = t->cap = t->n_hash = t->cap_hash = 0;
}

void trace_drop_reqs(trace *t) {
  free(t->reqs);
  t->reqs = NULL;
  t->cap = 0;
}

void trace_free_rows(trace *t) {
  size_t n = t->n;
  trace_free(t);
  t->n = n;
}

void trace_push(trace *t, sim_ns arrival_ns, uint32_t prompt, uint32_t output, uint32_t session,
                const uint64_t *hash_ids, uint32_t n_hash) {
  SIM_ASSERT(t->n_hash + n_hash <= UINT32_MAX);
  SIM_GROW(t->reqs, t->cap, t->n + 1);
  if (n_hash) {
    SIM_GROW(t->hash_ids, t->cap_hash, t->n_hash + n_hash);
    memcpy(t->hash_ids + t->n_hash, hash_ids, n_hash * sizeof *hash_ids);
  }
  t->reqs[t->n++] = (trace_req){arrival_ns, prompt, output, session, (uint32_t)t->n_hash, n_hash};
  t->n_hash += n_hash;
  if (session > t->n_sessions) t->n_sessions = session;
}

static const char *const fmt_names[] = {"auto", "native", "azure", "burstgpt", "mooncake", "generated"};

const char *trace_format_name(trace_format f) {
  return (unsigned)f < SIM_ARRAY_LEN(fmt_names) ? fmt_names[f] : "unknown";
}

bool trace_format_parse(const char *s, trace_format *out) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(fmt_names); i++)
    if (s && strcmp(s, fmt_names[i]) == 0) {
      *out = (trace_format)i;
      return true;
    }
  return false;
}
