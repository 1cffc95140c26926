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

#include "config/settings.h"

/* The axes that are not deployment settings. */
typedef enum ax_kind { K_NAME = 0, K_INT, K_POS } ax_kind;
static const struct {
  grid_axis_id id;
  const char *key, *flag, *label;
  ax_kind kind;
  double max; /* K_INT: largest value */
} OTHER[] = {
    {AX_GPU, "gpu", "gpu", "", K_NAME, 0},
    {AX_ENGINE, "engine", "engine", "", K_NAME, 0},
    {AX_RATE, "request_rate", "request-rate", "rate=", K_POS, 0},
    {AX_CONC, "max_concurrency", "max-concurrency", "conc=", K_INT, 1e7},
    {AX_RATE_SCALE, "rate_scale", "rate-scale", "scale=", K_POS, 0},
};

/* The setting of axis a, or NULL (not a setting axis, or one the table does not let a sweep vary). */
static const setting *axis_setting(int a) {
  if (a < AX_SET0 || a >= AX_SET0 + GRID_MAX_SETTINGS) return NULL;
  const setting *s = settings_at((size_t)(a - AX_SET0));
  return s && (s->use & SET_SWEEP) ? s : NULL;
}

static int other_index(int a) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(OTHER); i++)
    if ((int)OTHER[i].id == a) return (int)i;
  return -1;
}

void grid_init(grid_spec *g) {
  SIM_ASSERT(settings_count() <= GRID_MAX_SETTINGS);
  memset(g, 0, sizeof *g);
  g->price.all = -1;
}

void grid_free(grid_spec *g) {
  free(g->configs);
  free(g->scenario_json);
  g->configs = NULL;
  g->scenario_json = NULL;
}

const char *grid_axis_key(grid_axis_id a) {
  const setting *s = axis_setting(a);
  int o = other_index(a);
  return s ? s->key : o >= 0 ? OTHER[o].key : "?";
}
const char *grid_axis_flag(grid_axis_id a) {
  const setting *s = axis_setting(a);
  int o = other_index(a);
  return s ? s->flag : o >= 0 ? OTHER[o].flag : "?";
}
const char *grid_axis_alias(grid_axis_id a) {
  const setting *s = axis_setting(a);
  return s ? s->alias : NULL;
}

static bool axis_exists(int a) { return axis_setting(a) || other_index(a) >= 0; }

int grid_axis_of_flag(const char *flag) {
  for (int a = 0; a < AX_COUNT; a++) {
    if (!axis_exists(a)) continue;
    const char *al = grid_axis_alias((grid_axis_id)a);
    if (!strcmp(flag, grid_axis_flag((grid_axis_id)a)) || (al && !strcmp(flag, al))) return a;
  }
  return -1;
}

int grid_axis_of_key(const char *key) {
  for (int a = 0; a < AX_COUNT; a++)
    if (axis_exists(a) && !strcmp(key, grid_axis_key((grid_axis_id)a))) return a;
  return -1;
}

/* Checks and normalizes one value given as text. `what` names it. Settings are checked by their table
 * (config/settings.c) on a scratch deployment; switches read the same whatever the spelling ("on"/"off"). */
static int check_value(grid_axis_id a, const char *text, grid_value *out, const char *what, sim_err *err) {
  memset(out, 0, sizeof *out);
  if (!text[0]) return sim_errf(err, SIM_EINPUT, "%s: empty value", what);
  if (strlen(text) >= sizeof out->s) return sim_errf(err, SIM_EINPUT, "%s: value '%.40s...' too long", what, text);
  snprintf(out->s, sizeof out->s, "%s", text);
  const setting *st = axis_setting(a);
  if (st) {
    deploy_cfg d;
    deploy_init(&d);
    int rc = setting_set_text(st, &d, text, what, err);
    if (rc) return rc;
    if (st->kind == SK_U32 || st->kind == SK_F64) (void)sim_parse_double(text, &out->x);
    if (st->kind == SK_BOOL || st->kind == SK_TRI) {
      setting_text(st, &d, out->s, sizeof out->s);
      out->x = !strcmp(out->s, "on");
    }
    return 0;
  }
  int o = other_index(a);
  if (o < 0) return sim_errf(err, SIM_EINTERNAL, "bad axis %d", (int)a);
  switch (OTHER[o].kind) {
    case K_NAME: return 0;
    case K_INT: {
      uint64_t u;
      if (!sim_parse_u64(text, &u) || u < 1 || (double)u > OTHER[o].max)
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not an integer in [1, %.0f]", what, text, OTHER[o].max);
      out->x = (double)u;
      return 0;
    }
    case K_POS:
      if (!sim_parse_double(text, &out->x) || !(out->x > 0) || !isfinite(out->x))
        return sim_errf(err, SIM_EINPUT, "%s: '%s' is not a finite number > 0", what, text);
      return 0;
  }
  return sim_errf(err, SIM_EINTERNAL, "bad axis kind");
}

static int axis_taken(grid_spec *g, grid_axis_id a, const char *src, sim_err *err) {
  if (g->n[a])
    return sim_errf(err, SIM_EINPUT, "%s: %s is already given by %s; give each axis once", src, grid_axis_key(a), g->src[a]);
  for (size_t i = 0; i < g->n_configs; i++)
    if (g->configs[i].set[a])
      return sim_errf(err, SIM_EINPUT, "%s: %s is also set in the configs list of %s; give it in one place", src,
                      grid_axis_key(a), g->file);
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
  const setting *st = axis_setting(a);
  int o = other_index(a);
  bool sw = st && (st->kind == SK_BOOL || st->kind == SK_TRI);
  bool numeric = st ? st->kind == SK_U32 || st->kind == SK_F64 : OTHER[o].kind != K_NAME;
  if (cJSON_IsBool(v) && sw) {
    snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "on" : "off");
    return 0;
  }
  if (cJSON_IsString(v)) {
    snprintf(buf, n, "%s", v->valuestring);
    return 0;
  }
  if (cJSON_IsNumber(v) && numeric) {
    snprintf(buf, n, "%.10g", v->valuedouble);
    return 0;
  }
  return sim_errf(err, SIM_EINPUT, "%s: expected %s", what,
                  sw ? "true or false" : numeric ? "a number" : "a string");
}

static int axis_of_key(const char *key) { return grid_axis_of_key(key); }

/* Member `it` of the object at `where` names no axis. */
static int unknown_axis(const jx *j, const cJSON *it, const char *where) {
  char list[1024] = "";
  for (int a = 0; a < AX_COUNT; a++) {
    if (!axis_exists(a)) continue;
    strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
    strncat(list, grid_axis_key((grid_axis_id)a), sizeof list - strlen(list) - 1);
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
        return sim_errf(j->err, SIM_EINPUT, "%s: %s is also a grid axis; give it in one place", what,
                        grid_axis_key((grid_axis_id)a));
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
  if (p->set[AX_GPU]) {
    if (strlen(p->v[AX_GPU].s) >= sizeof sc->gpu) return sim_errf(err, SIM_EINPUT, "gpu: name too long");
    snprintf(sc->gpu, sizeof sc->gpu, "%s", p->v[AX_GPU].s);
  }
  if (p->set[AX_ENGINE]) {
    if (strlen(p->v[AX_ENGINE].s) >= sizeof sc->engine) return sim_errf(err, SIM_EINPUT, "engine: name too long");
    snprintf(sc->engine, sizeof sc->engine, "%s", p->v[AX_ENGINE].s);
  }
  for (int a = AX_SET0; a < AX_SET0 + GRID_MAX_SETTINGS; a++) { /* in the table's order: dtype before quantization */
    const setting *st = axis_setting(a);
    int rc;
    if (st && p->set[a] && (rc = setting_set_text(st, &sc->deploy, p->v[a].s, st->key, err))) return rc;
  }
  if (p->set[AX_RATE]) {
    if (sc->trace_path[0]) sc->target_rate = p->v[AX_RATE].x;
    else sc->gen.request_rate = p->v[AX_RATE].x;
  }
  if (p->set[AX_CONC]) sc->max_concurrency = (uint32_t)p->v[AX_CONC].x;
  if (p->set[AX_RATE_SCALE]) sc->rate_scale = p->v[AX_RATE_SCALE].x;
  return 0;
}

void grid_label(const grid_point *p, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  for (int a = 0; a < AX_COUNT && o < n; a++) {
    if (!p->set[a]) continue;
    const setting *st = axis_setting(a);
    int k = other_index(a);
    const char *pre = st ? st->label : k >= 0 ? OTHER[k].label : "";
    o += (size_t)snprintf(buf + o, n - o, "%s%s%s", o ? " " : "", pre, p->v[a].s);
  }
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
