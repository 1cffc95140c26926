/* vdir.c: finding the validation data and loading a directory of it: the
 * published tables by their file names, and inference-perf result
 * directories anywhere below it, recognized by their content (vopen.c), so a
 * new run directory is picked up without naming it here.
 *
 * Determinism: subdirectories are visited in name order (strcmp), so the
 * points come in the same order on every file system. The scan does not
 * descend into a result directory, hidden directories (".name") or below
 * VDATA_SCAN_DEPTH levels (a bound, so symbolic-link cycles end too). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "validate/validate.h"

#define VDATA_SCAN_DEPTH 3

int vdata_find_dir(const char *explicit_dir, char *out, size_t n, sim_err *err) {
  if (explicit_dir) {
    if (!sim_is_dir(explicit_dir))
      return sim_errf(err, SIM_EINPUT, "--data %s: no such directory", explicit_dir);
    vfmt(out, n, "%s", explicit_dir);
    return SIM_OK;
  }
  const char *env = getenv("SERVESIM_SHARED_DIR");
  char buf[2048];
  if (env && *env) {
    vfmt(buf, sizeof buf, "%s/validation", env);
    if (sim_is_dir(buf)) {
      vfmt(out, n, "%s", buf);
      return SIM_OK;
    }
  }
  if (sim_is_dir("../shared/validation")) {
    vfmt(out, n, "%s", "../shared/validation");
    return SIM_OK;
  }
  return sim_errf(err, SIM_EINPUT,
                  "no validation data: pass --data DIR, set SERVESIM_SHARED_DIR (its validation/ subdirectory is "
                  "used), or run from a directory beside ../shared/validation%s%s%s",
                  env && *env ? " (" : "", env && *env ? buf : "", env && *env ? " does not exist)" : "");
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Result directories at or below dir (depth levels down so far). */
static int scan(vset *s, const char *dir, int depth, int max_depth, size_t *n_runs, sim_err *err) {
  if (vopen_is_result_dir(dir)) {
    (*n_runs)++;
    return vdata_read_infperf(s, dir, err);
  }
  if (depth >= max_depth) return SIM_OK;
  DIR *d = opendir(dir);
  if (!d) return SIM_OK; /* unreadable: not ours to validate */
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    SIM_GROW(names, cap, n + 1);
    names[n++] = sim_strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  int rc = SIM_OK;
  for (size_t i = 0; i < n; i++) {
    char path[2048];
    vfmt(path, sizeof path, "%s/%s", dir, names[i]);
    if (!rc && sim_is_dir(path)) rc = scan(s, path, depth + 1, max_depth, n_runs, err);
    free(names[i]);
  }
  free(names);
  return rc;
}

int vdata_scan_infperf(vset *s, const char *root, int max_depth, size_t *n_runs, sim_err *err) {
  size_t runs = 0;
  int rc = scan(s, root, 0, max_depth, &runs, err);
  if (n_runs) *n_runs = runs;
  return rc;
}

int vdata_load_dir(vset *s, const char *dir, sim_err *err) {
  static const struct {
    const char *file;
    int (*read)(vset *, const char *, sim_err *);
  } known[] = {{"aic_silicon_llama31_70b.csv", vdata_read_aic},
               {"trtllm_v0.14_perf_overview_llama31_70b.csv", vdata_read_trt_overview},
               {"trtllm090_static_batch_llama2_70b.csv", vdata_read_static_batch},
               {"published_facts.json", vdata_read_mlperf}};
  if (!sim_is_dir(dir)) return sim_errf(err, SIM_EINPUT, "%s: no such directory", dir);
  int found = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(known); i++) {
    char path[2048];
    vfmt(path, sizeof path, "%s/%s", dir, known[i].file);
    if (!sim_is_file(path)) {
      vset_note(s, "%s/%s: not found (skipped)", dir, known[i].file);
      continue;
    }
    size_t before = s->n;
    int rc = known[i].read(s, path, err);
    if (rc) return rc;
    vset_note(s, "%s: %zu points", path, s->n - before);
    found++;
  }
  size_t before = s->n, runs = 0;
  int rc = vdata_scan_infperf(s, dir, VDATA_SCAN_DEPTH, &runs, err);
  if (rc) return rc;
  if (runs) {
    vset_note(s, "%s: %zu inference-perf result directories below it: %zu points (one per load stage)", dir, runs,
              s->n - before);
    found++;
  }
  if (!found)
    return sim_errf(err, SIM_EINPUT,
                    "%s: none of the known validation files (aic_silicon_llama31_70b.csv, "
                    "trtllm_v0.14_perf_overview_llama31_70b.csv, trtllm090_static_batch_llama2_70b.csv, "
                    "published_facts.json) is there, nor an inference-perf result directory "
                    "(stage_<K>_lifecycle_metrics.json beside config.yaml) within %d levels below it",
                    dir, VDATA_SCAN_DEPTH);
  return SIM_OK;
}
