/* grid.c: sweep/capacity grids from flags and spec files, their expansion in
 * grid-index order, and per-point scenarios (see grid.h). Every value is
 * checked when it is read, so a bad spec fails before any simulation runs,
 * with a message naming the flag or the file and field. */
#include "plan/grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/jsonx.h"

typedef enum ax_kind { K_NAME = 0, K_INT, K_QUANT, K_KV, K_POS, K_BOOL } ax_kind;

static const struct {
  const char *key, *flag, *alias;
  ax_kind kind;
  double max; /* K_INT: largest value */
} AX[AX_COUNT] = {
    {"gpu", "gpu", NULL, K_NAME, 0},
    {"tensor_parallel_size", "tensor-parallel-size", "tp", K_INT, 64},
    {"pipeline_parallel_size", "pipeline-parallel-size", "pp", K_INT, CFG_MAX_PP},
    {"data_parallel_size", "data-parallel-size", "dp", K_INT, CFG_MAX_DP},
    {"enable_expert_parallel", "enable-expert-parallel", NULL, K_BOOL, 0},
    {"replicas", "replicas", NULL, K_INT, 4096},
    {"quantization", "quantization", NULL, K_QUANT, 0},
    {"kv_cache_dtype", "kv-cache-dtype", NULL, K_KV, 0},
    {"max_num_seqs", "max-num-seqs", NULL, K_INT, 1e6},
    {"max_num_batched_tokens", "max-num-batched-tokens", NULL, K_INT, 1e7},
    {"request_rate", "request-rate", NULL, K_POS, 0},
    {"max_concurrency", "max-concurrency", NULL, K_INT, 1e7},
    {"rate_scale", "rate-scale", NULL, K_POS, 0},
};

void grid_init(grid_spec *g) {
  memset(g, 0, sizeof *g);
  g->price.all = -1;
}

void grid_free(grid_spec *g) {
  free(g->configs);
  free(g->scenario_json);
  g->configs = NULL;
  g->scenario_json = NULL;
}

const char *grid_axis_key(grid_axis_id a) { return (unsigned)a < AX_COUNT ? AX[a].key : "?"; }
const char *grid_axis_flag(grid_axis_id a) { return (unsigned)a < AX_COUNT ? AX[a].flag : "?"; }
const char *grid_axis_alias(grid_axis_id a) { return (unsigned)a < AX_COUNT ? AX[a].alias : NULL; }

int grid_axis_of_flag(const char *flag) {
  for (int a = 0; a < AX_COUNT; a++)
    if (!strcmp(flag, AX[a].flag) || (AX[a].alias && !strcmp(flag, AX[a].alias))) return a;
  return -1;
}

/* Checks and normalizes one value given as text. `what` names it. */
static int check_value(grid_axis_id a, const char *text, grid_value *out, const char *what, sim_err *err) {
  memset(out, 0, sizeof *out);
  if (!text[0]) return sim_errf(err, SIM_EINPUT, "%s: empty value", what);
  if (strlen(text) >= sizeof out->s) return sim_errf(err, SIM_EINPUT, "%s: value '%.40s...' too long", what, text);
  snprintf(out->s, sizeof out->s, "%s", text);
  sim_dtype dt;
  switch (AX[a].kind) {
    case K_NAME: return 0;
    case K_INT: {
      uint64_t u;
      if (!sim_parse_u64(text, &u) || u < 1 || (double)u > AX[a].max)
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not an integer in [1, %.0f]", what, text, AX[a].max);
      out->x = (double)u;
      return 0;
    }
    case K_POS:
      if (!sim_parse_double(text, &out->x) || !(out->x > 0) || !isfinite(out->x))
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not a finite number > 0", what, text);
      return 0;
    case K_QUANT:
      if (!cfg_parse_quantization(text, DT_BF16, &dt))
        return sim_errf(err, SIM_EINPUT, "%s: unknown quantization '%s' (none, fp8, int8, int4, awq, gptq, nvfp4)",
                        what, text);
      return 0;
    case K_KV:
      if (strcmp(text, "auto") && (!dtype_parse(text, &dt) || (dt != DT_FP8 && dt != DT_BF16 && dt != DT_FP16)))
        return sim_errf(err, SIM_EINPUT, "%s: unknown KV cache dtype '%s' (auto, fp8, bf16, fp16)", what, text);
      return 0;
    case K_BOOL: /* normalized to "on" / "off" so that duplicates and labels read the same */
      if (!strcmp(text, "on") || !strcmp(text, "true") || !strcmp(text, "1")) out->x = 1;
      else if (!strcmp(text, "off") || !strcmp(text, "false") || !strcmp(text, "0")) out->x = 0;
      else return sim_errf(err, SIM_EINPUT, "%s: '%s' is not on or off (true/false, 1/0)", what, text);
      snprintf(out->s, sizeof out->s, "%s", out->x ? "on" : "off");
      return 0;
  }
  return sim_errf(err, SIM_EINTERNAL, "bad axis kind");
}

static int axis_taken(grid_spec *g, grid_axis_id a, const char *src, sim_err *err) {
  if (g->n[a])
    return sim_errf(err, SIM_EINPUT, "%s: %s is already given by %s; give each axis once", src, AX[a].key, g->src[a]);
  for (size_t i = 0; i < g->n_configs; i++)
    if (g->configs[i].set[a])
      return sim_errf(err, SIM_EINPUT, "%s: %s is also set in the configs list of %s; give it in one place", src,
                      AX[a].key, g->file);
  return 0;
}

int grid_set_axis_list(grid_spec *g, grid_axis_id a, const char *list, const char *src, sim_err *err) {
  int rc = axis_taken(g, a, src, err);
  if (rc) return rc;
  char buf[4096];
  if (strlen(list) >= sizeof buf) return sim_errf(err, SIM_EINPUT, "%s: list too long", src);
  snprintf(buf, sizeof buf, "%s", list);
  int n = 0;
  char *p = buf;
  for (;;) {
    char *c = strchr(p, ',');
    if (c) *c = 0;
    if (n >= GRID_MAX_VALUES) return sim_errf(err, SIM_EINPUT, "%s: at most %d values", src, GRID_MAX_VALUES);
    char what[256];
    snprintf(what, sizeof what, "%s (in '%s')", src, list);
    if ((rc = check_value(a, p, &g->v[a][n], what, err))) return rc;
    for (int k = 0; k < n; k++)
      if (!strcmp(g->v[a][k].s, g->v[a][n].s)) return sim_errf(err, SIM_EINPUT, "%s: value '%s' appears twice", src, p);
    n++;
    if (!c) break;
    p = c + 1;
  }
  g->n[a] = n;
  g->src[a] = src;
  return 0;
}

/* ---- spec files (config/jsonx.h: strict keys, errors with lines) ------------------ */

static int json_value_text(const cJSON *v, grid_axis_id a, char *buf, size_t n, const char *what, sim_err *err) {
  if (cJSON_IsBool(v) && AX[a].kind == K_BOOL) {
    snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "on" : "off");
    return 0;
  }
  if (cJSON_IsString(v)) {
    snprintf(buf, n, "%s", v->valuestring);
    return 0;
  }
  if (cJSON_IsNumber(v) && AX[a].kind != K_NAME && AX[a].kind != K_KV) {
    double x = v->valuedouble;
    if (AX[a].kind == K_QUANT) return sim_errf(err, SIM_EINPUT, "%s: expected a string such as \"fp8\"", what);
    snprintf(buf, n, "%.10g", x);
    return 0;
  }
  return sim_errf(err, SIM_EINPUT, "%s: expected %s", what,
                  AX[a].kind == K_INT    ? "an integer"
                  : AX[a].kind == K_POS  ? "a number"
                  : AX[a].kind == K_BOOL ? "true or false"
                                         : "a string");
}

static int axis_of_key(const char *key) {
  for (int a = 0; a < AX_COUNT; a++)
    if (!strcmp(key, AX[a].key)) return a;
  return -1;
}

/* Member `it` of the object at `where` names no axis. */
static int unknown_axis(const jx *j, const cJSON *it, const char *where) {
  char list[512] = "";
  for (int a = 0; a < AX_COUNT; a++) {
    strncat(list, AX[a].key, sizeof list - strlen(list) - 1);
    if (a + 1 < AX_COUNT) strncat(list, ", ", sizeof list - strlen(list) - 1);
  }
  return jx_fail(j, it, where, NULL, "unknown axis '%s' (known: %s)", it->string, list);
}

static int parse_grid_obj(grid_spec *g, const jx *j, const cJSON *o) {
  if (!cJSON_IsObject(o)) return jx_fail(j, o, NULL, "grid", "expected an object of axes");
  for (const cJSON *it = o->child; it; it = it->next) {
    int a = axis_of_key(it->string);
    if (a < 0) return unknown_axis(j, it, "grid");
    char path[256], what[1400];
    snprintf(path, sizeof path, "grid.%s", it->string);
    jx_where(j, it, path, what, sizeof what);
    int rc = axis_taken(g, (grid_axis_id)a, what, j->err);
    if (rc) return rc;
    int n = 0;
    const cJSON *e;
    bool arr = cJSON_IsArray(it);
    if (arr && cJSON_GetArraySize(it) == 0) return sim_errf(j->err, SIM_EINPUT, "%s: empty list", what);
    for (e = arr ? it->child : it; e; e = arr ? e->next : NULL) {
      char p2[300], w2[1500], txt[128];
      snprintf(p2, sizeof p2, "%s[%d]", path, n);
      jx_where(j, e, p2, w2, sizeof w2);
      if (n >= GRID_MAX_VALUES) return sim_errf(j->err, SIM_EINPUT, "%s: at most %d values", what, GRID_MAX_VALUES);
      if ((rc = json_value_text(e, (grid_axis_id)a, txt, sizeof txt, w2, j->err))) return rc;
      if ((rc = check_value((grid_axis_id)a, txt, &g->v[a][n], w2, j->err))) return rc;
      for (int k = 0; k < n; k++)
        if (!strcmp(g->v[a][k].s, g->v[a][n].s))
          return sim_errf(j->err, SIM_EINPUT, "%s: value '%s' appears twice", w2, txt);
      n++;
    }
    g->n[a] = n;
    g->src[a] = g->file;
  }
  return 0;
}

static int parse_configs(grid_spec *g, const jx *j, const cJSON *arr) {
  if (!cJSON_IsArray(arr)) return jx_fail(j, arr, NULL, "configs", "expected an array of objects");
  size_t n = (size_t)cJSON_GetArraySize(arr);
  if (!n) return jx_fail(j, arr, NULL, "configs", "empty list");
  if (n > GRID_MAX_POINTS) return jx_fail(j, arr, NULL, "configs", "too many (max %d)", GRID_MAX_POINTS);
  g->configs = sim_calloc(n, sizeof *g->configs);
  size_t i = 0;
  for (const cJSON *c = arr->child; c; c = c->next, i++) {
    char where[64];
    snprintf(where, sizeof where, "configs[%zu]", i);
    if (!cJSON_IsObject(c)) return jx_fail(j, c, where, NULL, "expected an object");
    for (const cJSON *it = c->child; it; it = it->next) {
      int a = axis_of_key(it->string);
      if (a < 0) return unknown_axis(j, it, where);
      char path[256], what[1400], txt[128];
      snprintf(path, sizeof path, "%s.%s", where, it->string);
      jx_where(j, it, path, what, sizeof what);
      if (g->n[a])
        return sim_errf(j->err, SIM_EINPUT, "%s: %s is also a grid axis; give it in one place", what, AX[a].key);
      int rc = json_value_text(it, (grid_axis_id)a, txt, sizeof txt, what, j->err);
      if (!rc) rc = check_value((grid_axis_id)a, txt, &g->configs[i].v[a], what, j->err);
      if (rc) return rc;
      g->configs[i].set[a] = true;
    }
  }
  g->n_configs = n;
  return 0;
}

static int parse_price_json(grid_spec *g, const jx *j, const cJSON *v) {
  if (cJSON_IsNumber(v)) {
    if (!(v->valuedouble > 0)) return jx_fail(j, v, NULL, "gpu_hour_price", "must be > 0");
    g->price.all = v->valuedouble;
    return 0;
  }
  if (!cJSON_IsObject(v))
    return jx_fail(j, v, NULL, "gpu_hour_price", "expected USD per GPU-hour or {\"gpu\": USD, ...}");
  for (const cJSON *it = v->child; it; it = it->next) {
    if (!cJSON_IsNumber(it) || !(it->valuedouble > 0))
      return jx_fail(j, it, "gpu_hour_price", it->string, "expected a number > 0");
    if (g->price.n >= PRICE_MAX || strlen(it->string) >= sizeof g->price.gpu[0])
      return jx_fail(j, it, NULL, "gpu_hour_price", "too many entries or name too long");
    snprintf(g->price.gpu[g->price.n], sizeof g->price.gpu[0], "%s", it->string);
    g->price.usd[g->price.n++] = it->valuedouble;
  }
  return 0;
}

static int parse_slo(grid_spec *g, const jx *j, const cJSON *v) {
  if (!cJSON_IsObject(v)) return jx_fail(j, v, NULL, "slo_ms", "expected an object such as {\"ttft_p99\": 2000}");
  for (const cJSON *it = v->child; it; it = it->next) {
    char path[256], what[1400];
    snprintf(path, sizeof path, "slo_ms.%s", it->string);
    jx_where(j, it, path, what, sizeof what);
    if (!cJSON_IsNumber(it)) return sim_errf(j->err, SIM_EINPUT, "%s: expected milliseconds", what);
    int rc = slo_add_kv(&g->slo, it->string, it->valuedouble, what, j->err);
    if (rc) return rc;
  }
  return 0;
}

/* The inline "scenario" object as a text of its own for scenario_parse: the
 * file's bytes of the object after as many newlines as precede it, so that
 * errors in it give the file's line numbers. Heap (grid_free). */
static char *scenario_text(const jx *j, const cJSON *v) {
  size_t b, e, nl = 0;
  bool found = jx_span(j, v, &b, &e);
  SIM_ASSERT(found);
  for (size_t i = 0; i < b; i++) nl += j->text[i] == '\n';
  char *s = sim_malloc(nl + (e - b) + 1);
  memset(s, '\n', nl);
  memcpy(s + nl, j->text + b, e - b);
  s[nl + (e - b)] = 0;
  return s;
}

static int parse_spec(grid_spec *g, const jx *j) {
  static const char *const known[] = {"description", "scenario", "grid", "configs", "slo_ms", "target_rate",
                                      "gpu_hour_price", NULL};
  const cJSON *root = j->root, *v;
  int rc = jx_keys(j, root, NULL, known, NULL);
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "scenario"))) {
    if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) < sizeof g->scenario_ref)
      snprintf(g->scenario_ref, sizeof g->scenario_ref, "%s", v->valuestring);
    else if (cJSON_IsObject(v)) g->scenario_json = scenario_text(j, v);
    else rc = jx_fail(j, v, NULL, "scenario", "expected a scenario name, a path or a scenario object");
  }
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "configs"))) rc = parse_configs(g, j, v);
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "grid"))) rc = parse_grid_obj(g, j, v);
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "slo_ms"))) rc = parse_slo(g, j, v);
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "target_rate"))) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble))
      rc = jx_fail(j, v, NULL, "target_rate", "expected req/s > 0");
    else g->target_rate = v->valuedouble;
  }
  if (!rc && (v = cJSON_GetObjectItemCaseSensitive(root, "gpu_hour_price"))) rc = parse_price_json(g, j, v);
  return rc;
}

int grid_parse(grid_spec *g, const char *json, const char *what, sim_err *err) {
  snprintf(g->file, sizeof g->file, "%s", what);
  jx j;
  int rc = jx_parse(&j, json, what, err);
  if (rc) return rc;
  rc = parse_spec(g, &j);
  jx_free(&j);
  if (!rc && !grid_size(g)) rc = sim_errf(err, SIM_EINPUT, "%s: the grid has more than %d points", what, GRID_MAX_POINTS);
  return rc;
}

int grid_load(grid_spec *g, const char *path, sim_err *err) {
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  rc = grid_parse(g, text, path, err);
  free(text);
  return rc;
}

/* ---- expansion ------------------------------------------------------------------- */

size_t grid_size(const grid_spec *g) {
  double n = g->n_configs ? (double)g->n_configs : 1;
  for (int a = 0; a < AX_COUNT; a++) n *= g->n[a] ? g->n[a] : 1;
  return n > GRID_MAX_POINTS ? 0 : (size_t)n;
}

void grid_point_at(const grid_spec *g, size_t idx, grid_point *out) {
  memset(out, 0, sizeof *out);
  for (int a = AX_COUNT - 1; a >= 0; a--) {
    if (!g->n[a]) continue;
    size_t k = idx % (size_t)g->n[a];
    idx /= (size_t)g->n[a];
    out->set[a] = true;
    out->v[a] = g->v[a][k];
  }
  if (g->n_configs) {
    SIM_ASSERT(idx < g->n_configs);
    const grid_point *c = &g->configs[idx];
    for (int a = 0; a < AX_COUNT; a++)
      if (c->set[a]) out->set[a] = true, out->v[a] = c->v[a];
  }
}

int grid_apply(const grid_point *p, scenario *sc, sim_err *err) {
  deploy_cfg *d = &sc->deploy;
  if (p->set[AX_GPU]) {
    if (strlen(p->v[AX_GPU].s) >= sizeof sc->gpu) return sim_errf(err, SIM_EINPUT, "gpu: name too long");
    snprintf(sc->gpu, sizeof sc->gpu, "%s", p->v[AX_GPU].s);
  }
  if (p->set[AX_TP]) d->tp = (uint32_t)p->v[AX_TP].x;
  if (p->set[AX_PP]) d->pp = (uint32_t)p->v[AX_PP].x;
  if (p->set[AX_DP]) d->dp = (uint32_t)p->v[AX_DP].x;
  if (p->set[AX_EP]) d->expert_parallel = p->v[AX_EP].x != 0;
  if (p->set[AX_REPLICAS]) d->replicas = (uint32_t)p->v[AX_REPLICAS].x;
  if (p->set[AX_QUANT]) {
    sim_dtype act = d->act_dtype_set ? d->act_dtype : DT_BF16;
    if (!cfg_parse_quantization(p->v[AX_QUANT].s, act, &d->weight_dtype))
      return sim_errf(err, SIM_EINPUT, "quantization: unknown method '%s'", p->v[AX_QUANT].s);
    d->weight_dtype_set = strcmp(p->v[AX_QUANT].s, "none") != 0;
  }
  if (p->set[AX_KV]) {
    if (!strcmp(p->v[AX_KV].s, "auto")) d->kv_dtype_set = false;
    else if (!dtype_parse(p->v[AX_KV].s, &d->kv_dtype)) return sim_errf(err, SIM_EINPUT, "kv_cache_dtype: unknown");
    else d->kv_dtype_set = true;
  }
  if (p->set[AX_MNS]) d->max_num_seqs = (uint32_t)p->v[AX_MNS].x;
  if (p->set[AX_MNBT]) d->max_num_batched_tokens = (uint32_t)p->v[AX_MNBT].x;
  if (p->set[AX_RATE]) {
    if (sc->trace_path[0]) sc->target_rate = p->v[AX_RATE].x;
    else sc->gen.request_rate = p->v[AX_RATE].x;
  }
  if (p->set[AX_CONC]) sc->max_concurrency = (uint32_t)p->v[AX_CONC].x;
  if (p->set[AX_RATE_SCALE]) sc->rate_scale = p->v[AX_RATE_SCALE].x;
  return 0;
}

void grid_label(const grid_point *p, char *buf, size_t n) {
  static const char *const pre[AX_COUNT] = {"", "tp", "pp", "dp", "ep:", "x", "w:", "kv:", "seqs=", "tokens=", "rate=", "conc=", "scale="};
  size_t o = 0;
  buf[0] = 0;
  for (int a = 0; a < AX_COUNT && o < n; a++)
    if (p->set[a]) o += (size_t)snprintf(buf + o, n - o, "%s%s%s", o ? " " : "", pre[a], p->v[a].s);
  if (!buf[0]) snprintf(buf, n, "base");
}

bool grid_same_deployment(const grid_point *a, const grid_point *b) {
  for (int k = 0; k < AX_COUNT; k++) {
    if (k == AX_RATE || k == AX_CONC || k == AX_RATE_SCALE) continue;
    if (a->set[k] != b->set[k]) return false;
    if (a->set[k] && strcmp(a->v[k].s, b->v[k].s)) return false;
  }
  return true;
}

/* ---- prices ---------------------------------------------------------------------- */

int price_parse(price_spec *p, const char *s, const char *what, sim_err *err) {
  double x;
  if (!strchr(s, '=')) {
    if (!sim_parse_double(s, &x) || !(x > 0) || !isfinite(x))
      return sim_errf(err, SIM_EINPUT, "%s: expected USD per GPU-hour > 0 or GPU=USD,..., got '%s'", what, s);
    p->all = x;
    return 0;
  }
  char buf[1024];
  if (strlen(s) >= sizeof buf) return sim_errf(err, SIM_EINPUT, "%s: too long", what);
  snprintf(buf, sizeof buf, "%s", s);
  for (char *tok = buf; tok;) {
    char *c = strchr(tok, ',');
    if (c) *c++ = 0;
    char *eq = strchr(tok, '=');
    if (!eq || eq == tok || !sim_parse_double(eq + 1, &x) || !(x > 0) || !isfinite(x))
      return sim_errf(err, SIM_EINPUT, "%s: expected GPU=USD (e.g. h100-sxm=2.5), got '%s'", what, tok);
    *eq = 0;
    if (p->n >= PRICE_MAX || strlen(tok) >= sizeof p->gpu[0])
      return sim_errf(err, SIM_EINPUT, "%s: too many prices or name too long", what);
    snprintf(p->gpu[p->n], sizeof p->gpu[0], "%.63s", tok);
    p->usd[p->n++] = x;
    tok = c;
  }
  return 0;
}

double price_lookup(const price_spec *p, const gpu_cfg *g) {
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->gpu[i], g->name)) return p->usd[i];
  if (p->all > 0) return p->all;
  return g->price_per_hour;
}
