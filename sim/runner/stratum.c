/* stratum.c: the stratum of a run (see stratum.h). */
#include "runner/stratum.h"

#include <stdio.h>
#include <string.h>

static const char *COST[SC_COUNT] = {"same", "version", "scaled", "roofline"};
static const char *LOOP[SL_COUNT] = {"closed", "batch", "open"};
static const char *ARCH[SA_COUNT] = {"dense", "moe"};

const char *strat_cost_name(strat_cost c) { return c < SC_COUNT ? COST[c] : "?"; }
const char *strat_loop_name(strat_loop l) { return l < SL_COUNT ? LOOP[l] : "?"; }
const char *strat_arch_name(strat_arch a) { return a < SA_COUNT ? ARCH[a] : "?"; }

/* The version a bundled profile names: ".../<gpu>_<engine>-<version>.json" -> "<version>", or NULL when the
 * file is not named that way. */
static const char *profile_version(const char *path, const char *engine, char *buf, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  const char *us = strchr(b, '_');
  size_t el = strlen(engine);
  if (!us || !el || strncmp(us + 1, engine, el) || us[1 + el] != '-') return NULL;
  snprintf(buf, n, "%s", us + 2 + el);
  size_t len = strlen(buf);
  if (len > 5 && !strcmp(buf + len - 5, ".json")) buf[len - 5] = 0;
  return buf;
}

strat_cost stratum_cost_of(const prof_sel *ps, const engine_cfg *e) {
  if (ps->own) {
    char v[128];
    const char *pv = profile_version(ps->own_path, e->name, v, sizeof v);
    if (!pv) return SC_SAME; /* a profile of this GPU type named otherwise: measured for this deployment */
    return e->version[0] && !strcmp(pv, e->version) ? SC_SAME : SC_VERSION;
  }
  return ps->other ? SC_SCALED : SC_ROOFLINE;
}

stratum stratum_of(const prof_sel *ps, const engine_cfg *e, const model_cfg *m, uint32_t max_concurrency,
                   const trace_stats *ts) {
  stratum s;
  s.cost = stratum_cost_of(ps, e);
  s.loop = max_concurrency > 0 ? SL_CLOSED : ts->span_s <= 0 ? SL_BATCH : SL_OPEN;
  s.arch = m->experts > 0 ? SA_MOE : SA_DENSE;
  return s;
}

void stratum_key(const stratum *s, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s/%s", strat_cost_name(s->cost), strat_loop_name(s->loop), strat_arch_name(s->arch));
}

int stratum_chain(const stratum *s, char keys[4][32]) {
  stratum_key(s, keys[0], 32);
  snprintf(keys[1], 32, "%s/%s/*", strat_cost_name(s->cost), strat_loop_name(s->loop));
  snprintf(keys[2], 32, "*/%s/*", strat_loop_name(s->loop));
  snprintf(keys[3], 32, "*/*/*");
  return 4;
}

bool stratum_parse(const char *key, stratum *out) {
  for (int c = 0; c < SC_COUNT; c++)
    for (int l = 0; l < SL_COUNT; l++)
      for (int a = 0; a < SA_COUNT; a++) {
        stratum s = {(strat_cost)c, (strat_loop)l, (strat_arch)a};
        char k[32];
        stratum_key(&s, k, sizeof k);
        if (!strcmp(k, key)) {
          *out = s;
          return true;
        }
      }
  return false;
}
