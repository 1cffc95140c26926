/* vdir.c: finding the validation data and loading files and directories of
 * it, every one recognized by its content, whatever its name: the
 * AIConfigurator, TensorRT-LLM and MLPerf tables, the user format, and
 * inference-perf result directories anywhere below a directory (vopen.c).
 *
 * Determinism: subdirectories are visited in name order (strcmp), so the
 * points come in the same order on every file system. The scan does not
 * descend into a result directory, hidden directories (".name") or below
 * VDATA_SCAN_DEPTH levels (a bound, so symbolic-link cycles end too). */
#include <cjson/cJSON.h>
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

typedef struct scan_ctx {
  bool files;        /* also read measurement files (else result directories only) */
  int max_depth;
  size_t files_read, runs, run_points;
} scan_ctx;
static int scan_all(vset *s, const char *dir, int depth, scan_ctx *x, sim_err *err);

int vdata_scan_infperf(vset *s, const char *root, int max_depth, size_t *n_runs, sim_err *err) {
  scan_ctx x = {false, max_depth, 0, 0, 0};
  int rc = scan_all(s, root, 0, &x, err);
  size_t runs = x.runs;
  if (n_runs) *n_runs = runs;
  return rc;
}

/* ---- by content ---------------------------------------------------------------- */

typedef enum vkind { VK_NONE = 0, VK_AIC, VK_TRT_OVERVIEW, VK_STATIC, VK_MLPERF, VK_USER, VK_BARE_RESULT } vkind;

/* The first line that is not empty and not a '#' comment (the CSV header). */
static void first_line(const char *t, char *out, size_t n) {
  out[0] = 0;
  while (*t) {
    const char *e = strchr(t, '\n');
    size_t len = e ? (size_t)(e - t) : strlen(t);
    if (len && t[0] != '#' && !(len == 1 && t[0] == '\r')) {
      if (len >= n) len = n - 1;
      memcpy(out, t, len);
      out[len] = 0;
      return;
    }
    if (!e) return;
    t = e + 1;
  }
}

static bool has_key(const cJSON *o, const char *k) { return cJSON_IsObject(o) && cJSON_GetObjectItemCaseSensitive(o, k); }

/* A benchmark result without the deployment it ran on: vllm bench serve
 * (--save-result) or genai-perf / AIPerf (profile_export*.json). */
static bool bare_result(const cJSON *o) {
  return has_key(o, "mean_ttft_ms") || has_key(o, "time_to_first_token") || has_key(o, "llm_metrics");
}

static vkind detect(const char *text) {
  const char *t = text;
  while (*t == ' ' || *t == '\t' || *t == '\r' || *t == '\n') t++;
  if (*t == '{' || *t == '[') {
    cJSON *j = cJSON_Parse(t);
    if (!j) return VK_USER; /* looks like JSON: the user reader reports where it breaks */
    vkind k = VK_NONE;
    const cJSON *first = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : j;
    if (cJSON_IsArray(j) && has_key(first, "kind")) k = VK_MLPERF;
    else if (has_key(first, "result") || has_key(first, "scenario")) k = VK_USER;
    else if (bare_result(first)) k = VK_BARE_RESULT;
    cJSON_Delete(j);
    return k;
  }
  char h[4096];
  first_line(text, h, sizeof h);
  if (strstr(h, "silicon_ttft_ms") && strstr(h, "model_path")) return VK_AIC;
  if (strstr(h, "Tensor Model Parallel Size") && strstr(h, "1st Token Latency")) return VK_STATIC;
  if (!strncmp(h, "model,isl,osl,tp,", 17)) return VK_TRT_OVERVIEW;
  return VK_NONE;
}

static const char *const KNOWN_FORMATS =
    "an AIConfigurator silicon CSV (silicon_ttft_ms, model_path, ... columns), a TensorRT-LLM perf-overview "
    "table (model,isl,osl,tp,GPU_PRECISION...), a TensorRT-LLM static-batch table, a published-facts JSON "
    "array, a {scenario, result} JSON (result: vllm bench serve --save-result or genai-perf/AIPerf "
    "profile_export JSON), or an inference-perf result directory";

static bool measurement_name(const char *name) {
  size_t n = strlen(name);
  return (n > 4 && !strcmp(name + n - 4, ".csv")) || (n > 5 && !strcmp(name + n - 5, ".json"));
}

/* Reads one file by its content. explicit: named by the user (unknown content
 * is an error); else met in a directory scan (unknown content is ignored).
 * *loaded: whether it held measurements. */
static int load_file(vset *s, const char *path, bool explicit_file, bool *loaded, sim_err *err) {
  *loaded = false;
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  vkind k = detect(text);
  size_t before = s->n;
  switch (k) {
  case VK_AIC: rc = vdata_parse_aic(s, text, path, err); break;
  case VK_TRT_OVERVIEW: rc = vdata_parse_trt_overview(s, text, path, err); break;
  case VK_STATIC: rc = vdata_parse_static_batch(s, text, path, err); break;
  case VK_MLPERF: rc = vdata_parse_mlperf(s, text, path, err); break;
  case VK_USER: rc = vdata_parse_user(s, text, path, err); break;
  case VK_BARE_RESULT:
    rc = sim_errf(err, SIM_EINPUT,
                  "%s:1: a benchmark result without the deployment it ran on: wrap it as {\"scenario\": {model, gpu, "
                  "engine, deployment}, \"result\": <this file's JSON>} (docs/ACCURACY.md, \"Your own "
                  "measurements\")",
                  path);
    break;
  case VK_NONE:
    if (explicit_file) rc = sim_errf(err, SIM_EINPUT, "%s:1: not a measurement file: expected %s", path, KNOWN_FORMATS);
    break;
  }
  free(text);
  if (!rc && k != VK_NONE && k != VK_BARE_RESULT) {
    *loaded = true;
    vset_note(s, "%s: %zu points", path, s->n - before);
  }
  return rc;
}

/* Result directories (and, with x->files, measurement files) at or below
 * dir, depth levels down so far: name order, hidden entries skipped, nothing
 * below a result directory or x->max_depth levels (a bound, so symbolic-link
 * cycles end too). */
static int scan_all(vset *s, const char *dir, int depth, scan_ctx *x, sim_err *err) {
  if (vopen_is_result_dir(dir)) {
    size_t before = s->n;
    x->runs++;
    int rc = vdata_read_infperf(s, dir, err);
    x->run_points += s->n - before;
    return rc;
  }
  if (depth >= x->max_depth) return SIM_OK;
  DIR *d = opendir(dir);
  if (!d) return SIM_OK;
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    SIM_GROW(names, cap, n + 1);
    names[n++] = sim_strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, sim_cmp_cstr);
  int rc = SIM_OK;
  for (size_t i = 0; i < n; i++) {
    char path[2048];
    vfmt(path, sizeof path, "%s/%s", dir, names[i]);
    if (!rc && sim_is_dir(path)) {
      rc = scan_all(s, path, depth + 1, x, err);
    } else if (!rc && x->files && measurement_name(names[i]) && sim_is_file(path)) {
      bool loaded;
      rc = load_file(s, path, false, &loaded, err);
      if (loaded) x->files_read++;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int vdata_load_path(vset *s, const char *path, sim_err *err) {
  if (sim_is_file(path)) {
    bool loaded;
    return load_file(s, path, true, &loaded, err);
  }
  if (!sim_is_dir(path)) return sim_errf(err, SIM_EINPUT, "%s: no such file or directory", path);
  scan_ctx x = {true, VDATA_SCAN_DEPTH, 0, 0, 0};
  int rc = scan_all(s, path, 0, &x, err);
  if (rc) return rc;
  if (x.runs)
    vset_note(s, "%s: %zu inference-perf result directories below it: %zu points (one per load stage)", path, x.runs,
              x.run_points);
  if (!x.files_read && !x.runs)
    return sim_errf(err, SIM_EINPUT,
                    "%s: no measurements found: no .csv or .json file in it (within %d levels) is %s", path,
                    VDATA_SCAN_DEPTH, KNOWN_FORMATS);
  return SIM_OK;
}

int vdata_load_dir(vset *s, const char *dir, sim_err *err) {
  if (!sim_is_dir(dir)) return sim_errf(err, SIM_EINPUT, "%s: no such directory", dir);
  return vdata_load_path(s, dir, err);
}

int vdata_find_models_dir(char *out, size_t n) {
  const char *env = getenv("SERVESIM_SHARED_DIR");
  char buf[2048];
  if (env && *env) {
    vfmt(buf, sizeof buf, "%s/models", env);
    if (sim_is_dir(buf)) {
      vfmt(out, n, "%s", buf);
      return 1;
    }
  }
  if (sim_is_dir("../shared/models")) {
    vfmt(out, n, "%s", "../shared/models");
    return 1;
  }
  return 0;
}
