/* kdb.c: the kernel-db import (see kdb.h): finding the GPU, framework and
 * NCCL directories, the attribution, the datasheet probes, the notes, and
 * the table importers (kdb_impl.h) in turn; the helpers they share are in
 * kdb_rows.c.
 * Directory listings are sorted before use, so nothing depends on readdir's
 * order. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/version.h"
#include "hw/kdb_impl.h"

#define KDB_REPOSITORY "github.com/ai-dynamo/aiconfigurator"

uint32_t kdb_decode_offset(const char *engine, const char *version) {
  if (!strcmp(engine, "vllm")) return version_cmp(version, "0.24.0") >= 0 ? 1 : 0;
  return 1; /* trtllm, sglang: `step` cached tokens and one decoded (kdb.h) */
}

/* ---- directories ---------------------------------------------------------------------- */

typedef struct names_list {
  char **v;
  size_t n, cap;
} names_list;

static void list_free(names_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

/* Sorted entries of dir (no dot files); SIM_EINPUT when it cannot be read. */
static int list_dir(const char *dir, names_list *l, sim_err *err) {
  memset(l, 0, sizeof *l);
  DIR *d = opendir(dir);
  if (!d) return sim_errf(err, SIM_EINPUT, "%s: cannot read the directory: %s", dir, strerror(errno));
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    SIM_GROW(l->v, l->cap, l->n + 1);
    l->v[l->n++] = sim_strdup(de->d_name);
  }
  closedir(d);
  if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, sim_cmp_cstr);
  return SIM_OK;
}

/* <root>/<entry> whose entry names the GPU (name or alias, any case). */
static int find_gpu_dir(const char *root, const gpu_cfg *g, char *name, size_t n, sim_err *err) {
  names_list l;
  int rc = list_dir(root, &l, err);
  if (rc) return rc;
  char have[512] = "";
  size_t len = 0;
  name[0] = 0;
  for (size_t i = 0; i < l.n; i++) {
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", root, l.v[i]);
    if (!sim_is_dir(p)) continue;
    if (!name[0] && strlen(l.v[i]) < n && cfg_gpu_has_alias(g, l.v[i])) snprintf(name, n, "%s", l.v[i]);
    if (len + 2 < sizeof have) len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", l.v[i]);
  }
  list_free(&l);
  if (name[0]) return SIM_OK;
  return sim_errf(err, SIM_EINPUT,
                  "%s: no directory for gpu %s (looked for its name and the aliases in configs/gpus/%s.json; "
                  "the database has: %s)",
                  root, g->name, g->name, have[0] ? have : "nothing");
}

static int cmp_version_str(const void *a, const void *b) {
  const char *x = a, *y = b;
  int c = version_cmp(x, y);
  return c ? c : strcmp(x, y);
}

/* Versions of "<prefix>-<version>" directories in dir, oldest first. */
static int prefixed_versions(const char *dir, const char *prefix, char (*out)[KDB_VERSION_LEN], int max, int *n,
                             sim_err *err) {
  names_list l;
  int rc = list_dir(dir, &l, err);
  if (rc) return rc;
  size_t pl = strlen(prefix);
  *n = 0;
  for (size_t i = 0; i < l.n && *n < max; i++) {
    const char *s = l.v[i];
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, s);
    if (strncmp(s, prefix, pl) || s[pl] != '-' || !version_valid(s + pl + 1) || strlen(s + pl + 1) >= KDB_VERSION_LEN ||
        !sim_is_dir(p))
      continue;
    snprintf(out[(*n)++], KDB_VERSION_LEN, "%s", s + pl + 1);
  }
  list_free(&l);
  if (*n > 1) qsort(out, (size_t)*n, KDB_VERSION_LEN, cmp_version_str);
  return SIM_OK;
}

int kdb_versions(const char *root, const gpu_cfg *gpu, const char *engine, char (*out)[KDB_VERSION_LEN], int max,
                 int *n, sim_err *err) {
  char gdir[64], dir[2048];
  *n = 0;
  int rc = find_gpu_dir(root, gpu, gdir, sizeof gdir, err);
  if (rc) return rc;
  snprintf(dir, sizeof dir, "%s/%s", root, gdir);
  return prefixed_versions(dir, engine, out, max, n, err);
}

/* ---- the import ------------------------------------------------------------------------ */

/* The AIConfigurator commit the data come from (<root>/.aic-commit). */
static int read_commit(const char *root, char *out, size_t n, sim_err *err) {
  char path[2048];
  snprintf(path, sizeof path, "%s/.aic-commit", root);
  char *text;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return sim_err_prefix(err, "the kernel database must record the AIConfigurator commit of its data");
  size_t len = strcspn(text, " \t\r\n");
  if (len == 0 || len >= n) {
    free(text);
    return sim_errf(err, SIM_EINPUT, "%s:1: expected one commit hash", path);
  }
  memcpy(out, text, len);
  out[len] = 0;
  free(text);
  return SIM_OK;
}

static void fill_header(const kdb_req *r, prof_doc *d, const char *gdir, const char *fwdir, const char *commit) {
  snprintf(d->gpu, sizeof d->gpu, "%s", r->gpu->name);
  snprintf(d->engine, sizeof d->engine, "%s", r->engine);
  snprintf(d->kdb_repository, sizeof d->kdb_repository, "%s", KDB_REPOSITORY);
  snprintf(d->kdb_commit, sizeof d->kdb_commit, "%s", commit);
  snprintf(d->kdb_gpu_dir, sizeof d->kdb_gpu_dir, "%s", gdir);
  snprintf(d->kdb_framework_dir, sizeof d->kdb_framework_dir, "%s", fwdir);
  snprintf(d->attribution, sizeof d->attribution,
           "Kernel timings measured by NVIDIA AIConfigurator's collectors (%s, commit %s, "
           "aic-core/src/aiconfigurator_core/systems/data/%s/%s), Copyright (c) 2025-2026 NVIDIA CORPORATION & "
           "AFFILIATES, licensed under the Apache License, Version 2.0 (Apache-2.0). Modified: converted by "
           "servesim calibrate --from-kernel-db to servesim's profile format (selected rows, ns with 4 significant "
           "digits; configs/profiles/README.md).",
           KDB_REPOSITORY, commit, gdir, fwdir);
  d->probes_datasheet = true;
  d->copy_Bps = r->gpu->hbm_Bps;
  static const sim_dtype pk[] = {DT_BF16, DT_FP8, DT_INT8, DT_FP4};
  for (size_t i = 0; i < SIM_ARRAY_LEN(pk); i++) d->peak[pk[i]] = r->gpu->flops[pk[i]];
  prof_doc_note(d, "probes: the datasheet figures of configs/gpus/%s.json (copy_Bps = HBM bandwidth, peak_flops = "
                   "dense tensor-core peaks); they only normalize the interpolation",
                r->gpu->name);
}

/* Imports one table file if present (else a note). */
static int table(kdb_ctx *k, const char *dir, const char *name, int kind, sim_err *err) {
  char path[2400];
  if (snprintf(path, sizeof path, "%s/%s.csv.gz", dir, name) >= (int)sizeof path)
    return sim_errf(err, SIM_EINPUT, "%s: path too long", dir);
  if (!sim_is_file(path)) {
    prof_doc_note(k->doc, "%s.csv.gz: absent, no such table in this profile", name);
    return SIM_OK;
  }
  switch (kind) {
    case 0: return kdb__gemm(k, path, err);
    case 1: return kdb__attn(k, path, false, err);
    case 2: return kdb__attn(k, path, true, err);
    case 3: return kdb__custom_ar(k, path, err);
    case 4: return kdb__moe(k, path, err);
    case 6: return kdb__mla(k, path, false, false, err);
    case 7: return kdb__mla(k, path, true, false, err);
    case 9: return kdb__mla(k, path, false, true, err);
    case 10: return kdb__mla(k, path, true, true, err);
    case 8: return kdb__gdn(k, path, err);
    default: return kdb__nccl(k, path, err);
  }
}

/* A note listing the tables of dir that servesim does not read. */
static void note_unread(kdb_ctx *k, const char *dir, const char *const *read) {
  names_list l;
  sim_err ignore;
  if (list_dir(dir, &l, &ignore)) return;
  char list[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < l.n; i++) {
    size_t sl = strlen(l.v[i]);
    if (sl < 8 || strcmp(l.v[i] + sl - 7, ".csv.gz")) continue;
    bool known = false;
    for (const char *const *r = read; *r; r++) known |= !strncmp(l.v[i], *r, sl - 7) && strlen(*r) == sl - 7;
    if (!known && len + 2 < sizeof list)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%.*s", len ? ", " : "", (int)(sl - 7), l.v[i]);
  }
  list_free(&l);
  if (len) prof_doc_note(k->doc, "not imported (no servesim operation yet): %s", list);
}

int kdb_import(const kdb_req *r, prof_doc *d, sim_err *err) {
  if (strcmp(r->engine, "vllm") && strcmp(r->engine, "trtllm") && strcmp(r->engine, "sglang"))
    return sim_errf(err, SIM_EINPUT, "engine '%s': the kernel database has vllm, trtllm and sglang", r->engine);
  if (!sim_is_dir(r->root)) return sim_errf(err, SIM_EINPUT, "%s: not a directory (the kernel database root)", r->root);
  char commit[64], gdir[64], gpath[2048];
  int rc = read_commit(r->root, commit, sizeof commit, err);
  if (!rc) rc = find_gpu_dir(r->root, r->gpu, gdir, sizeof gdir, err);
  if (rc) return rc;
  snprintf(gpath, sizeof gpath, "%s/%s", r->root, gdir);
  char vers[KDB_MAX_VERSIONS][KDB_VERSION_LEN];
  int nv = 0;
  if ((rc = prefixed_versions(gpath, r->engine, vers, KDB_MAX_VERSIONS, &nv, err))) return rc;
  if (!nv) return sim_errf(err, SIM_EINPUT, "%s: no %s-<version> directory", gpath, r->engine);
  const char *want = r->engine_version && r->engine_version[0] ? r->engine_version : vers[nv - 1];
  int vi = -1;
  for (int i = 0; i < nv; i++)
    if (!strcmp(vers[i], want)) vi = i;
  if (vi < 0) {
    char have[512] = "";
    size_t len = 0;
    for (int i = 0; i < nv && len + 2 < sizeof have; i++)
      len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "", vers[i]);
    return sim_errf(err, SIM_EINPUT, "%s: no %s-%s directory (versions present: %s)", gpath, r->engine, want, have);
  }
  kdb_ctx k = {.req = r, .doc = d};
  snprintf(k.version, sizeof k.version, "%s", vers[vi]);
  k.decode_offset = kdb_decode_offset(r->engine, k.version);
  char fwdir[KDB_VERSION_LEN + 16], fwpath[2200];
  snprintf(fwdir, sizeof fwdir, "%s-%s", r->engine, k.version);
  snprintf(fwpath, sizeof fwpath, "%s/%s", gpath, fwdir);
  fill_header(r, d, gdir, fwdir, commit);
  snprintf(d->engine_version, sizeof d->engine_version, "%s", k.version);
  static const char *const names[] = {"gemm_perf", "generation_attention_perf", "context_attention_perf",
                                      "custom_allreduce_perf", "moe_perf", "mla_generation_module_perf",
                                      "mla_context_module_perf", "gdn_perf", "dsa_generation_module_perf",
                                      "dsa_context_module_perf", NULL};
  static const int kinds[] = {0, 1, 2, 3, 4, 6, 7, 8, 9, 10};
  for (int i = 0; names[i] && !rc; i++) rc = table(&k, fwpath, names[i], kinds[i], err);
  if (rc) return rc;
  note_unread(&k, fwpath, names);
  if (k.other_tables[0])
    kdb__caveat(&k, "%s measured on %s (copies in the database)", k.other_tables, r->other_device);
  char nv_[KDB_MAX_VERSIONS][KDB_VERSION_LEN];
  int nn = 0;
  if ((rc = prefixed_versions(gpath, "nccl", nv_, KDB_MAX_VERSIONS, &nn, err))) return rc;
  if (!nn) {
    prof_doc_note(d, "%s: no nccl-<version> directory, no NCCL all-reduce table", gdir);
    return SIM_OK;
  }
  snprintf(d->kdb_nccl_dir, sizeof d->kdb_nccl_dir, "nccl-%s", nv_[nn - 1]);
  char npath[2400];
  snprintf(npath, sizeof npath, "%s/%s", gpath, d->kdb_nccl_dir);
  snprintf(k.version, sizeof k.version, "%s", nv_[nn - 1]);
  return table(&k, npath, "nccl_perf", 5, err);
}
