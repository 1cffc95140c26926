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
 *            missing field) still resolves its id, to the reason. A label
 *            neither knows resolves to the one model of the same name under
 *            another organization, else to the one model its name has with a
 *            quantization suffix dropped (-FP8, -NVFP4, -AWQ, ...), with a
 *            note saying so; an ambiguous name resolves to nothing.
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

/* The exact lookup: an alias of a bundled model, else a models directory's id. */
static const char *model_exact(const vresolve *r, const char *label, char *why, size_t n) {
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

/* The part of a Hugging Face id after its organization ("meta-llama/Llama-3.1-8B" -> "Llama-3.1-8B"). */
static const char *id_name(const char *id) {
  const char *s = strrchr(id, '/');
  return s ? s + 1 : id;
}

/* Suffixes that name a checkpoint's quantization, not its architecture (Hugging Face naming of NVIDIA ModelOpt,
 * RedHat/Neural Magic llm-compressor, AutoAWQ/GPTQ and the model makers' own FP8 releases). Longest first. */
static const char *const QUANT_SUFFIXES[] = {"-FP8-Static-PerTensor", "-FP8-dynamic", "-FP8-Dynamic", "-FP8-static",
                                             "-quantized.w4a16", "-quantized.w8a8", "-GPTQ-Int4", "-GPTQ-Int8",
                                             "-FP8", "-NVFP4", "-MXFP4", "-AWQ", "-GPTQ", "-W4A16", "-W8A8", "-INT4",
                                             "-INT8"};

/* label's name without its quantization suffix into out; false when it has none. */
static bool strip_quant_suffix(const char *label, char *out, size_t n) {
  const char *name = id_name(label);
  size_t len = strlen(name);
  for (size_t i = 0; i < SIM_ARRAY_LEN(QUANT_SUFFIXES); i++) {
    size_t k = strlen(QUANT_SUFFIXES[i]);
    if (len > k && !strcasecmp(name + len - k, QUANT_SUFFIXES[i])) {
      vfmt(out, n, "%.*s", (int)(len - k), name);
      return true;
    }
  }
  return false;
}

/* The label of the one model whose alias or directory id has `name` after its organization (case ignored): a
 * bundled model's alias first, else a models directory's id; NULL when none or several match (an ambiguous name
 * is not guessed). */
static const char *model_by_name(const vresolve *r, const char *name) {
  const char *found = NULL;
  int hits = 0;
  for (size_t i = 0; i < r->n_models; i++)
    for (uint32_t a = 0; a < r->models[i].naliases; a++)
      if (strchr(r->models[i].aliases[a], '/') && !strcasecmp(id_name(r->models[i].aliases[a]), name)) {
        hits++;
        found = r->models[i].aliases[a];
        break; /* one hit a model */
      }
  if (hits) return hits == 1 ? found : NULL;
  for (size_t i = 0; i < r->n_dir; i++)
    if (!strcasecmp(id_name(r->dir[i].id), name)) hits++, found = r->dir[i].id;
  return hits == 1 ? found : NULL;
}

const char *vres_model_note(const vresolve *r, const char *label, char *why, size_t n, char *note, size_t nn,
                            bool *base_of_quantized) {
  if (why && n) why[0] = 0;
  if (base_of_quantized) *base_of_quantized = false;
  if (note && nn) note[0] = 0;
  if (!label || !label[0]) return NULL;
  const char *m = model_exact(r, label, why, n);
  if (m || (why && n && why[0])) return m;
  /* the same name under another organization (zhipuai/GLM-5 is zai-org/GLM-5), else the architecture of a
     quantized checkpoint's base model (nvidia/Llama-3.1-8B-Instruct-FP8 is meta-llama/Llama-3.1-8B-Instruct's) */
  const char *matched = strchr(label, '/') ? model_by_name(r, id_name(label)) : NULL;
  bool base = false;
  char stem[160];
  if (!matched && strip_quant_suffix(label, stem, sizeof stem)) matched = model_by_name(r, stem), base = true;
  if (!matched) return NULL;
  m = model_exact(r, matched, why, n);
  if (base_of_quantized) *base_of_quantized = base;
  if (note && nn)
    vfmt(note, nn, base ? "model %s read as %s's architecture (a quantized checkpoint of it: the row's precision "
                          "applies)"
                        : "model %s read as %s (the same name under another organization)",
         label, matched);
  return m;
}

const char *vres_model(const vresolve *r, const char *label, char *why, size_t n) {
  return vres_model_note(r, label, why, n, NULL, 0, NULL);
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

