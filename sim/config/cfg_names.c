/* cfg_names.c: the names of known configs, their aliases, suggestions (see cfg_names.h). */
#include "config/cfg_names.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/embed.h"

static const char *const kind_dir[] = {"models", "gpus", "engines", "examples", "profiles", "instances"};
static const char *const kind_word[] = {"model", "gpu", "engine", "scenario", "profile", "instance"};

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && !strcmp(s + n - k, suf);
}

/* ---- listing ---------------------------------------------------------------- */

typedef struct name_list {
  char **v;
  size_t n, cap;
} name_list;

static void names_add(name_list *l, const char *s, size_t len) {
  SIM_GROW(l->v, l->cap, l->n + 1);
  char *d = sim_malloc(len + 1);
  memcpy(d, s, len);
  d[len] = 0;
  l->v[l->n++] = d;
}

/* Collects the names of a kind: embedded files and $SERVESIM_DATA_DIR files,
 * sorted, without duplicates. */
static void names_collect(cfg_kind kind, name_list *l) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "configs/%s/", kind_dir[kind]);
  size_t pl = strlen(prefix);
  for (const sim_embedded_file *f = sim_embedded_files; f->path; f++) {
    if (strncmp(f->path, prefix, pl) || !ends_with(f->path, ".json")) continue;
    const char *name = f->path + pl;
    if (strchr(name, '/')) continue;
    names_add(l, name, strlen(name) - 5);
  }
  const char *dd = getenv("SERVESIM_DATA_DIR");
  if (dd && *dd) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", dd, prefix);
    DIR *d = opendir(dir);
    if (d) {
      struct dirent *de;
      while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !ends_with(de->d_name, ".json") || strlen(de->d_name) <= 5) continue;
        char p[2048];
        snprintf(p, sizeof p, "%s%s", dir, de->d_name);
        if (sim_is_file(p)) names_add(l, de->d_name, strlen(de->d_name) - 5);
      }
      closedir(d);
    }
  }
  if (l->n) qsort(l->v, l->n, sizeof *l->v, sim_cmp_cstr);
  size_t k = 0;
  for (size_t i = 0; i < l->n; i++) {
    if (k && !strcmp(l->v[k - 1], l->v[i])) {
      free(l->v[i]);
      continue;
    }
    l->v[k++] = l->v[i];
  }
  l->n = k;
}

static void names_free(name_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

void cfg_list(cfg_kind kind, char *buf, size_t n) {
  SIM_ASSERT((unsigned)kind < SIM_ARRAY_LEN(kind_dir));
  if (!n) return;
  buf[0] = 0;
  name_list l = {0};
  names_collect(kind, &l);
  size_t len = 0;
  for (size_t i = 0; i < l.n; i++) {
    size_t need = strlen(l.v[i]) + (i ? 2 : 0);
    if (len + need + 1 > n) { /* does not fit: end with "..." if there is room */
      if (n >= 4) {
        size_t at = len + 3 < n ? len : n - 4;
        memcpy(buf + at, "...", 4);
      }
      break;
    }
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", l.v[i]);
  }
  names_free(&l);
}


const char *cfg_kind_dir(cfg_kind kind) {
  SIM_ASSERT((unsigned)kind < SIM_ARRAY_LEN(kind_dir));
  return kind_dir[kind];
}

const char *cfg_kind_word(cfg_kind kind) {
  SIM_ASSERT((unsigned)kind < SIM_ARRAY_LEN(kind_word));
  return kind_word[kind];
}

/* ---- aliases -------------------------------------------------------------------------------------- */

/* The text of known config `name` of a kind (data dir first, then embedded), malloc'd; NULL if unreadable. */
static char *config_text(cfg_kind kind, const char *name) {
  char rel[512], p[1536];
  snprintf(rel, sizeof rel, "configs/%s/%s.json", kind_dir[kind], name);
  const char *dd = getenv("SERVESIM_DATA_DIR");
  char *text = NULL;
  sim_err ignore;
  if (dd && *dd) {
    snprintf(p, sizeof p, "%s/%s", dd, rel);
    if (sim_is_file(p) && !sim_read_file(p, &text, NULL, &ignore)) return text;
  }
  const sim_embedded_file *f = sim_embed_find(rel);
  if (!f) return NULL;
  text = sim_malloc(f->len + 1);
  memcpy(text, f->data, f->len + 1);
  return text;
}

/* The aliases of known config `name`, as cfg_parse reads them; the count (0: none or unreadable). */
static uint32_t aliases_of(cfg_kind kind, const char *name, char (*out)[96], uint32_t cap) {
  char *text = config_text(kind, name);
  if (!text) return 0;
  sim_err ignore;
  uint32_t n = 0;
  if (kind == CFG_MODEL) {
    model_cfg *m = sim_malloc(sizeof *m);
    if (!cfg_model_parse(m, text, name, &ignore))
      for (uint32_t i = 0; i < m->naliases && n < cap; i++) snprintf(out[n++], 96, "%s", m->aliases[i]);
    free(m);
  } else if (kind == CFG_GPU) {
    gpu_cfg *g = sim_malloc(sizeof *g);
    if (!cfg_gpu_parse(g, text, name, &ignore))
      for (uint32_t i = 0; i < g->naliases && n < cap; i++) snprintf(out[n++], 96, "%s", g->aliases[i]);
    free(g);
  } else if (kind == CFG_ENGINE) {
    engine_cfg *e = sim_malloc(sizeof *e);
    if (!cfg_engine_parse(e, text, name, &ignore))
      for (uint32_t i = 0; i < e->naliases && n < cap; i++) snprintf(out[n++], 96, "%s", e->aliases[i]);
    free(e);
  }
  free(text);
  return n;
}

bool cfg_alias_name(cfg_kind kind, const char *id, char *name, size_t n) {
  if (kind != CFG_MODEL && kind != CFG_GPU && kind != CFG_ENGINE) return false;
  name_list l = {0};
  names_collect(kind, &l);
  bool found = false;
  char al[CFG_MAX_ALIASES][96];
  for (size_t i = 0; i < l.n && !found; i++) {
    uint32_t k = aliases_of(kind, l.v[i], al, CFG_MAX_ALIASES);
    for (uint32_t j = 0; j < k && !found; j++)
      if (!strcasecmp(al[j], id)) {
        snprintf(name, n, "%s", l.v[i]);
        found = true;
      }
  }
  names_free(&l);
  return found;
}

/* ---- suggestions ---------------------------------------------------------------------------------- */

/* Levenshtein distance, ASCII case ignored, of strings up to 95 characters (longer: their length). */
static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 95 || lb > 95) return la > lb ? la : lb;
  size_t row[96];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
      size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      diag = up;
    }
  }
  return row[lb];
}

void cfg_suggest(cfg_kind kind, const char *arg, char *buf, size_t n) {
  buf[0] = 0;
  name_list l = {0};
  names_collect(kind, &l);
  size_t len = strlen(arg), limit = len / 3 < 3 ? len / 3 : 3, best = limit + 1;
  char al[CFG_MAX_ALIASES][96];
  for (size_t i = 0; i < l.n; i++) {
    size_t d = distance(arg, l.v[i]);
    if (d < best) best = d, snprintf(buf, n, "%s", l.v[i]);
    uint32_t k = aliases_of(kind, l.v[i], al, CFG_MAX_ALIASES);
    for (uint32_t j = 0; j < k; j++)
      if ((d = distance(arg, al[j])) < best) best = d, snprintf(buf, n, "%s", al[j]);
  }
  names_free(&l);
  if (best > limit || best == 0) buf[0] = 0;
}
