/* profsel.c: choosing the measured profile of a deployment and the process-
 * wide profile cache (see profsel.h).
 * `auto` reads only the list of profile names (embedded and under
 * $SERVESIM_DATA_DIR) and, to rank other GPU types, their small gpu configs;
 * the one profile chosen is then loaded through the cache. */
#include "runner/profsel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "core/version.h"

/* ---- the cache ----------------------------------------------------------------------- */

typedef struct cache_entry {
  char *path; /* the key (owned) */
  prof *p;    /* loaded profile (owned) */
} cache_entry;

static uv_once_t cache_once = UV_ONCE_INIT;
static uv_mutex_t cache_mu;
static cache_entry *cache;
static size_t cache_n, cache_cap;

static void cache_init(void) { SIM_ASSERT(uv_mutex_init(&cache_mu) == 0); }

int profsel_cache_get(const char *path, const prof **out, sim_err *err) {
  uv_once(&cache_once, cache_init);
  uv_mutex_lock(&cache_mu);
  int rc = SIM_OK;
  *out = NULL;
  for (size_t i = 0; i < cache_n && !*out; i++)
    if (!strcmp(cache[i].path, path)) *out = cache[i].p;
  if (!*out) { /* loading under the lock: a profile is parsed once even when threads race for it */
    prof *p = NULL;
    rc = prof_load(&p, path, err);
    if (!rc) {
      SIM_GROW(cache, cache_cap, cache_n + 1);
      cache[cache_n].path = sim_strdup(path);
      cache[cache_n++].p = p;
      *out = p;
    }
  }
  uv_mutex_unlock(&cache_mu);
  return rc;
}

void profsel_cache_clear(void) {
  uv_once(&cache_once, cache_init);
  uv_mutex_lock(&cache_mu);
  for (size_t i = 0; i < cache_n; i++) {
    free(cache[i].path);
    prof_free(cache[i].p);
  }
  free(cache);
  cache = NULL;
  cache_n = cache_cap = 0;
  uv_mutex_unlock(&cache_mu);
}

/* ---- the source line ----------------------------------------------------------------- */

/* "h100-sxm_vllm-0.14.0" from ".../configs/profiles/h100-sxm_vllm-0.14.0.json". */
static void stem(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t len = strlen(b);
  if (len > 5 && !strcmp(b + len - 5, ".json")) len -= 5;
  snprintf(out, n, "%.*s", (int)len, b);
}

static int attach(prof_sel *s, const prof *p, const char *path, const gpu_cfg *gpu, sim_err *err) {
  char name[256];
  stem(path, name, sizeof name);
  const char *origin = prof_origin(p);
  if (!strcmp(prof_gpu_name(p), gpu->name)) {
    s->own = p;
    snprintf(s->own_path, sizeof s->own_path, "%s", path);
    if (origin[0])
      snprintf(s->source, sizeof s->source,
               "measured kernel tables %s (%s); roofline from the %s datasheet where they have no data", name, origin,
               gpu->name);
    else
      snprintf(s->source, sizeof s->source,
               "measured profile %s (this GPU type); roofline from the %s datasheet where it has no data", path,
               gpu->name);
    return SIM_OK;
  }
  int rc = cfg_gpu_load(&s->other_gpu, prof_gpu_name(p), err);
  if (rc) return sim_err_prefix(err, "%s: measured on GPU '%s'", path, prof_gpu_name(p));
  s->other = p;
  if (gpu->mig_parent[0] && !strcmp(s->other_gpu.name, gpu->mig_parent)) {
    if (snprintf(s->source, sizeof s->source,
             "measured kernel tables %s (%s) of the whole %s, scaled to the MIG slice %s by its shares (%u/7 of the "
             "tensor-core peaks for compute-bound kernels, %u/8 of the HBM bandwidth for memory-bound ones); "
             "roofline where they have no data",
             name, origin[0] ? origin : path, s->other_gpu.name, gpu->name, gpu->mig_compute_slices,
             gpu->mig_memory_slices) >= (int)sizeof s->source)
      s->source[sizeof s->source - 2] = '~'; /* a long path was cut: the description only */
    return SIM_OK;
  }
  if (origin[0])
    snprintf(s->source, sizeof s->source,
             "measured kernel tables %s (%s) of %s, scaled to %s by the datasheet ratios; roofline where they have "
             "no data",
             name, origin, s->other_gpu.name, gpu->name);
  else
    snprintf(s->source, sizeof s->source,
             "measured profile %s of %s, scaled to %s by the datasheet ratios; roofline where it has no data", path,
             s->other_gpu.name, gpu->name);
  return SIM_OK;
}

static int load(prof_sel *s, const char *name, const gpu_cfg *gpu, sim_err *err) {
  char path[1024];
  const prof *pr = NULL;
  int rc = cfg_find(CFG_PROFILE, name, path, sizeof path, err);
  if (!rc) rc = profsel_cache_get(path, &pr, err);
  if (rc) return rc;
  return attach(s, pr, path, gpu, err);
}

/* ---- auto: by file name --------------------------------------------------------------- */

typedef struct cand {
  char name[128];   /* profile name (file stem) */
  char gpu[64];     /* <gpu> */
  char version[64]; /* <version> */
} cand;

/* "<gpu>_<engine>-<version>" for this engine; false for other names. */
static bool parse_name(const char *name, const char *engine, cand *c) {
  size_t nl = strlen(name);
  if (nl > 4 && !strcmp(name + nl - 4, ".moe")) return false; /* a fused-MoE companion, not a profile to pick */
  const char *us = strchr(name, '_');
  size_t el = strlen(engine);
  if (!us || us == name || (size_t)(us - name) >= sizeof c->gpu || strlen(name) >= sizeof c->name) return false;
  if (strncmp(us + 1, engine, el) || us[1 + el] != '-' || !version_valid(us + 2 + el)) return false;
  if (strlen(us + 2 + el) >= sizeof c->version) return false;
  snprintf(c->name, sizeof c->name, "%s", name);
  snprintf(c->gpu, sizeof c->gpu, "%.*s", (int)(us - name), name);
  snprintf(c->version, sizeof c->version, "%s", us + 2 + el);
  return true;
}

/* Among c[0..n) of GPU type `gpu`, the version rule of profsel.h; NULL if none. */
static const cand *pick_version(const cand *c, int n, const char *gpu, const char *want) {
  const cand *best_le = NULL, *oldest = NULL, *newest = NULL;
  for (int i = 0; i < n; i++) {
    if (strcmp(c[i].gpu, gpu)) continue;
    if (!oldest || version_cmp(c[i].version, oldest->version) < 0) oldest = &c[i];
    if (!newest || version_cmp(c[i].version, newest->version) > 0) newest = &c[i];
    if (want[0] && version_cmp(c[i].version, want) <= 0 && (!best_le || version_cmp(c[i].version, best_le->version) > 0))
      best_le = &c[i];
  }
  if (!want[0]) return newest;
  return best_le ? best_le : oldest;
}

/* The other GPU type with the nearest datasheet HBM bandwidth. */
static const char *nearest_gpu(const cand *c, int n, const gpu_cfg *gpu) {
  const char *best = NULL;
  double best_d = INFINITY;
  for (int i = 0; i < n; i++) {
    if (!strcmp(c[i].gpu, gpu->name)) continue;
    bool seen = false;
    for (int k = 0; k < i && !seen; k++) seen = !strcmp(c[k].gpu, c[i].gpu);
    gpu_cfg g;
    sim_err ignore;
    if (seen || cfg_gpu_load(&g, c[i].gpu, &ignore)) continue;
    double d = fabs(log(g.hbm_Bps / gpu->hbm_Bps));
    if (d < best_d || (d == best_d && strcmp(c[i].gpu, best) < 0)) best_d = d, best = c[i].gpu;
  }
  return best;
}

static int choose_auto(prof_sel *s, const gpu_cfg *gpu, const engine_cfg *engine, sim_err *err) {
  enum { NAMES_BYTES = 16384 }; /* the comma-separated profile names */
  char *buf = sim_malloc(NAMES_BYTES);
  cfg_list(CFG_PROFILE, buf, NAMES_BYTES);
  cand *c = NULL;
  size_t n = 0, cap = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    cand x;
    if (!parse_name(tok, engine->name, &x)) continue;
    SIM_GROW(c, cap, n + 1);
    c[n++] = x;
  }
  free(buf);
  const cand *pick = pick_version(c, (int)n, gpu->name, engine->version);
  if (!pick && gpu->mig_parent[0]) pick = pick_version(c, (int)n, gpu->mig_parent, engine->version); /* a MIG slice:
                                                                                           its whole GPU's tables */
  if (!pick) {
    const char *other = nearest_gpu(c, (int)n, gpu);
    if (other) pick = pick_version(c, (int)n, other, engine->version);
  }
  int rc = pick ? load(s, pick->name, gpu, err) : SIM_OK;
  if (!rc && pick && !strcmp(pick->gpu, gpu->name)) {
    /* the other versions of this GPU and engine, nearest to the chosen one first (the version order's
       neighbours: the chosen version's rank in the sorted list, by distance) */
    const cand *same[64];
    int ns = 0, at = -1;
    for (size_t i = 0; i < n && ns < 64; i++)
      if (!strcmp(c[i].gpu, gpu->name)) same[ns++] = &c[i];
    for (int i = 1; i < ns; i++)
      for (int k = i; k > 0 && version_cmp(same[k - 1]->version, same[k]->version) > 0; k--) {
        const cand *t = same[k];
        same[k] = same[k - 1], same[k - 1] = t;
      }
    for (int i = 0; i < ns; i++)
      if (same[i] == pick) at = i;
    for (int d = 1; d < ns && s->n_alt < PROFSEL_MAX_ALT; d++)
      for (int sgn = 1; sgn >= -1; sgn -= 2) {
        int k = at + sgn * d;
        if (k >= 0 && k < ns && s->n_alt < PROFSEL_MAX_ALT)
          snprintf(s->alt_names[s->n_alt++], sizeof s->alt_names[0], "%s", same[k]->name);
      }
  }
  free(c);
  return rc;
}

int profsel_choose(prof_sel *s, const char *spec, const gpu_cfg *gpu, const engine_cfg *engine, sim_err *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->source, sizeof s->source,
           "roofline from the %s datasheet with the %s engine's efficiency factors (no measured profile)", gpu->name,
           engine->name);
  if (!spec[0] || !strcmp(spec, "none")) return SIM_OK;
  if (strcmp(spec, "auto") != 0) return load(s, spec, gpu, err);
  return choose_auto(s, gpu, engine, err);
}

/* Where the chosen profile has no attention tables for the model's head layout (vLLM 0.14.0's hold head size
 * 128 only; gpt-oss has 64), the nearest other version's of the same GPU and engine that has them serves the
 * attention calls, and the source says so. */
static void attach_attention_alternate(prof_sel *s, cost_model *c) {
  cost_info ci = cost_info_of(c);
  cost_set_attention_alternate(c, NULL);
  if (!s->own || ci.shard->mla || cost_attention_covered(c, s->own)) return;
  for (int i = 0; i < s->n_alt; i++) {
    char path[1200];
    sim_err ignore = {0, ""};
    const prof *p = NULL;
    if (cfg_find(CFG_PROFILE, s->alt_names[i], path, sizeof path, &ignore) != SIM_OK ||
        profsel_cache_get(path, &p, &ignore) != SIM_OK || !cost_attention_covered(c, p))
      continue;
    cost_set_attention_alternate(c, p);
    static const char anote[] = "; attention tables ";
    if (!strstr(s->source, anote)) {
      char st[160], own[160];
      stem(path, st, sizeof st);
      stem(s->own_path, own, sizeof own);
      size_t k = strlen(s->source);
      snprintf(s->source + k, sizeof s->source - k, "%s%s (%s has none for %u query / %u KV heads of %u)", anote, st,
               own, ci.shard->q_heads, ci.shard->kv_heads, ci.shard->head_dim);
    }
    return;
  }
}

/* The fused-MoE companion (<profile without .json>.moe.json) of the own profile (i < 0) or of alternate i. */
static bool companion_path(const prof_sel *s, int i, char *cpath, size_t n) {
  char path[1200];
  sim_err ignore = {0, ""};
  if (i >= 0 && cfg_find(CFG_PROFILE, s->alt_names[i], path, sizeof path, &ignore) != SIM_OK) return false;
  const char *base = i < 0 ? s->own_path : path;
  size_t len = strlen(base);
  if (len > 5 && !strcmp(base + len - 5, ".json")) len -= 5;
  snprintf(cpath, n, "%.*s.moe.json", (int)len, base);
  return true;
}

/* Gated DeltaNet kernels: the first companion, own then the other versions nearest first, holding the
 * deployment's per-GPU shape (cost_set_gdn_tables); the source names it, else says the roofline serves. */
static void attach_gdn(prof_sel *s, cost_model *c) {
  cost_info ci = cost_info_of(c);
  cost_set_gdn_tables(c, NULL);
  if (!ci.model->lin_layers || ci.model->mamba || ci.model->kda) return;
  char st[160] = "";
  for (int i = -1; i < s->n_alt && s->own && !st[0]; i++) {
    char cpath[1200];
    sim_err ignore = {0, ""};
    const prof *p = NULL;
    if (companion_path(s, i, cpath, sizeof cpath) && profsel_cache_get(cpath, &p, &ignore) == SIM_OK &&
        cost_set_gdn_tables(c, p))
      stem(cpath, st, sizeof st);
  }
  static const char gnote[] = "; Gated DeltaNet kernels ";
  if (strstr(s->source, gnote)) return;
  size_t k = strlen(s->source);
  if (st[0])
    snprintf(s->source + k, sizeof s->source - k, "%s%s (gdn_perf)", gnote, st);
  else
    snprintf(s->source + k, sizeof s->source - k,
             "%sfrom the roofline (no gdn_perf table of this GPU and engine has %u key / %u value heads per GPU)",
             gnote, ci.shard->lin_k_heads, ci.shard->lin_v_heads);
}

void profsel_attach(prof_sel *s, cost_model *c) {
  cost_set_profiles(c, s->own, s->other, s->other ? &s->other_gpu : NULL);
  cost_info ci = cost_info_of(c);
  attach_attention_alternate(s, c);
  attach_gdn(s, c);
  /* the companions (fused-MoE, MLA module and sliding-window attention tables): own first, then the other
     versions' */
  if ((ci.model->experts || ci.model->sliding_layers) && s->own) {
    const prof *alt[PROFSEL_MAX_ALT + 1], *win[PROFSEL_MAX_ALT + 2];
    char used[PROFSEL_MAX_ALT + 1][160], wused[PROFSEL_MAX_ALT + 2][160];
    int n = 0, nw = 0;
    if (ci.model->sliding_layers && prof_window_tables(s->own, ci.model->sliding_window) > 0) {
      stem(s->own_path, wused[nw], sizeof wused[nw]); /* a profile imported as one file holds them itself */
      win[nw++] = s->own;
    }
    bool mla_done = false;
    for (int i = -1; i < s->n_alt; i++) {
      char cpath[1200];
      sim_err ignore = {0, ""};
      const prof *p = NULL;
      if (!companion_path(s, i, cpath, sizeof cpath)) continue;
      /* MLA modules from the chosen version's companion; a sparse-attention model's (dsa_* tables, newer than
         most versions) from the first companion that has them */
      if ((i < 0 || (ci.model->dsa_topk && !mla_done)) && profsel_cache_get(cpath, &p, &ignore) == SIM_OK &&
          cost_set_mla_modules(c, p)) {
        const char *lnote =
            ci.model->dsa_topk ? "; DeepSeek sparse attention modules (dsa_*) " : "; MLA attention modules ";
        char st[160];
        mla_done = true;
        stem(cpath, st, sizeof st);
        size_t k = strlen(s->source);
        if (!strstr(s->source, lnote))
          snprintf(s->source + k, sizeof s->source - k, "%s%s", lnote, st);
      }
      if (profsel_cache_get(cpath, &p, &ignore) == SIM_OK && prof_moe_tables(p) > 0) {
        stem(cpath, used[n], sizeof used[n]);
        alt[n++] = p;
      }
      if (ci.model->sliding_layers && profsel_cache_get(cpath, &p, &ignore) == SIM_OK &&
          prof_window_tables(p, ci.model->sliding_window) > 0) {
        stem(cpath, wused[nw], sizeof wused[nw]);
        win[nw++] = p;
      }
    }
    cost_set_moe_alternates(c, alt, n);
    cost_set_window_tables(c, win, nw);
    static const char wnote[] = "; sliding-window attention tables ";
    if (nw && !strstr(s->source, wnote)) {
      size_t k = strlen(s->source);
      k += (size_t)snprintf(s->source + k, sizeof s->source - k, "%s(window %u) ", wnote, ci.model->sliding_window);
      for (int i = 0; i < nw && k < sizeof s->source; i++)
        k += (size_t)snprintf(s->source + k, sizeof s->source - k, "%s%s", i ? ", then " : "", wused[i]);
    }
    static const char mnote[] = "; fused-MoE tables ";
    if (n && !strstr(s->source, mnote)) {
      size_t k = strlen(s->source);
      k += (size_t)snprintf(s->source + k, sizeof s->source - k, "%s", mnote);
      for (int i = 0; i < n && k < sizeof s->source; i++)
        k += (size_t)snprintf(s->source + k, sizeof s->source - k, "%s%s", i ? ", then " : "", used[i]);
    }
  }
  /* the all-reduce source, once however often the selection is attached (plan's layouts attach it again) */
  if (ci.deploy->tp > 1 && (s->own || s->other) && !strstr(s->source, "; all-reduces from ")) {
    size_t n = strlen(s->source);
    ar_check chk;
    if (ci.deploy->allreduce == AR_LINK)
      snprintf(s->source + n, sizeof s->source - n,
               "; all-reduces from the %s file's link bandwidth and latency (--allreduce link), not the measured "
               "table",
               ci.gpu->name);
    else if (!ci.ar_table && cost_allreduce_check(c, &chk))
      snprintf(s->source + n, sizeof s->source - n,
               "; all-reduces from the %s file's link: the measured table reaches %.1f GB/s bus bandwidth among %u "
               "GPUs, %.0f%% of the link's %.1f GB/s, a machine without peer-to-peer between them (--allreduce "
               "table uses it anyway)",
               ci.gpu->name, chk.table_busbw_Bps / 1e9, chk.gpus, 100 * chk.table_busbw_Bps / chk.link_busbw_Bps,
               chk.link_busbw_Bps / 1e9);
  }
}

void profsel_free(prof_sel *s) {
  s->own = s->other = NULL;
  s->n_alt = 0;
}
