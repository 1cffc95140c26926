/* vresolve.c: measurements name models, GPUs and engines their own way
 * (Hugging Face ids, kernel-db directories, CUDA device strings, backend
 * names); this maps them to servesim configs through the names and
 * "aliases" each config file declares, never through a table here.
 *
 *   models   every bundled model config (and $SERVESIM_DATA_DIR's) by its name
 *            and aliases (Hugging Face ids, benchmark labels); then the
 *            config.json files of a models directory (--models DIR, else
 *            $SERVESIM_SHARED_DIR/models or ../shared/models when present),
 *            each named after its Hugging Face id with "/" written "--"
 *            (Qwen--Qwen3-32B.json). A file servesim cannot read (MLA attention, a
 *            missing field) still resolves its id, to the reason.
 *   GPUs     every GPU config by name and aliases.
 *   engines  every engine config by name and aliases.
 * Labels compare ignoring ASCII case. Lookups are linear: tens of configs. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate/validate.h"

struct vresolve {
  model_cfg *models; /* bundled and data-dir models */
  size_t n_models;
  struct dir_model {
    char id[160];    /* Hugging Face id from the file name */
    char path[1024];
    bool ok;         /* servesim reads it */
    char why[320];   /* why not */
  } *dir;
  size_t n_dir;
  gpu_cfg *gpus;
  size_t n_gpus;
  engine_cfg *engines;
  size_t n_engines;
};

/* Splits cfg_list's "a, b, c" and calls load for each name. */
static void each_name(cfg_kind kind, void (*load)(vresolve *, const char *), vresolve *r) {
  char buf[8192];
  cfg_list(kind, buf, sizeof buf);
  for (char *p = buf; *p;) {
    char *e = strstr(p, ", ");
    if (e) *e = 0;
    if (*p && strcmp(p, "...")) load(r, p);
    if (!e) break;
    p = e + 2;
  }
}

static void load_model(vresolve *r, const char *name) {
  model_cfg m;
  sim_err e = {0, ""};
  if (cfg_model_load(&m, name, &e)) return; /* a broken user config: not a candidate */
  r->models = sim_realloc(r->models, (r->n_models + 1) * sizeof *r->models);
  r->models[r->n_models++] = m;
}

static void load_gpu(vresolve *r, const char *name) {
  gpu_cfg g;
  sim_err e = {0, ""};
  if (cfg_gpu_load(&g, name, &e)) return;
  r->gpus = sim_realloc(r->gpus, (r->n_gpus + 1) * sizeof *r->gpus);
  r->gpus[r->n_gpus++] = g;
}

static void load_engine(vresolve *r, const char *name) {
  engine_cfg en;
  sim_err e = {0, ""};
  if (cfg_engine_load(&en, name, &e)) return;
  r->engines = sim_realloc(r->engines, (r->n_engines + 1) * sizeof *r->engines);
  r->engines[r->n_engines++] = en;
}

vresolve *vres_new(void) {
  vresolve *r = sim_calloc(1, sizeof *r);
  each_name(CFG_MODEL, load_model, r);
  each_name(CFG_GPU, load_gpu, r);
  each_name(CFG_ENGINE, load_engine, r);
  return r;
}

void vres_free(vresolve *r) {
  if (!r) return;
  free(r->models);
  free(r->dir);
  free(r->gpus);
  free(r->engines);
  free(r);
}

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && !strcmp(s + n - k, suf);
}

int vres_add_models_dir(vresolve *r, const char *dir, size_t *n_added, sim_err *err) {
  DIR *d = opendir(dir);
  if (!d) return sim_errf(err, SIM_EINPUT, "--models %s: cannot open the directory", dir);
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, ".json") || ends_with(e->d_name, ".hf_quant_config.json"))
      continue;
    SIM_GROW(names, cap, n + 1);
    names[n++] = sim_strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, sim_cmp_cstr);
  for (size_t i = 0; i < n; i++) {
    struct dir_model dm;
    memset(&dm, 0, sizeof dm);
    size_t len = strlen(names[i]) - strlen(".json");
    size_t o = 0;
    for (size_t k = 0; k < len && o + 1 < sizeof dm.id; k++) { /* "--" -> "/" */
      if (names[i][k] == '-' && names[i][k + 1] == '-' && k + 1 < len) {
        dm.id[o++] = '/';
        k++;
      } else {
        dm.id[o++] = names[i][k];
      }
    }
    vfmt(dm.path, sizeof dm.path, "%s/%s", dir, names[i]);
    model_cfg m;
    sim_err e = {0, ""};
    dm.ok = sim_is_file(dm.path) && cfg_model_load(&m, dm.path, &e) == SIM_OK;
    if (!dm.ok) vfmt(dm.why, sizeof dm.why, "%s", e.msg[0] ? e.msg : "not a regular file");
    r->dir = sim_realloc(r->dir, (r->n_dir + 1) * sizeof *r->dir);
    r->dir[r->n_dir++] = dm;
    free(names[i]);
  }
  free(names);
  if (n_added) *n_added = n;
  return SIM_OK;
}

const char *vres_model(const vresolve *r, const char *label, char *why, size_t n) {
  if (why && n) why[0] = 0;
  if (!label || !label[0]) return NULL;
  for (size_t i = 0; i < r->n_models; i++)
    if (cfg_model_has_alias(&r->models[i], label)) return r->models[i].name;
  for (size_t i = 0; i < r->n_dir; i++)
    if (!strcasecmp(r->dir[i].id, label)) {
      if (r->dir[i].ok) return r->dir[i].path;
      if (why && n) vfmt(why, n, "%s", r->dir[i].why);
      return NULL;
    }
  return NULL;
}

const char *vres_gpu(const vresolve *r, const char *label) {
  if (!label || !label[0]) return NULL;
  for (size_t i = 0; i < r->n_gpus; i++)
    if (cfg_gpu_has_alias(&r->gpus[i], label)) return r->gpus[i].name;
  return NULL;
}

const char *vres_engine(const vresolve *r, const char *label) {
  if (!label || !label[0]) return NULL;
  for (size_t i = 0; i < r->n_engines; i++)
    if (cfg_engine_has_alias(&r->engines[i], label)) return r->engines[i].name;
  return NULL;
}

