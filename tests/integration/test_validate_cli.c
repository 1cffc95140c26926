/* test_validate_cli.c: `servesim validate` end to end.
 *  - on the pinned files of the shared validation data (skipped when ../shared or one of them is
 *    absent; linked into a directory of the test's own, so that files added there change nothing): exits
 *    0 and reports every published point, counted independently from the
 *    files here, as predicted, or skipped/failed with a reason; the summary
 *    meets the fidelity targets of docs/ACCURACY.md (a regression gate: one
 *    full run, the only one in the suite);
 *    the open-loop stages: one point per stage file, no overload missed or
 *    invented (kept up / overloaded);
 *  - a user's own run (servesim run --json wrapped with its deployment)
 *    validates with ~0% error: the user path reproduces the workload exactly;
 *  - an open-loop stage point is redone by `servesim run` on the trace
 *    --save-traces writes, to the same numbers;
 *  - bad input exits 2 with a message naming the flag, file or line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/stat.h>

#include "testutil.h"

static char out[1 << 20], err[1 << 16];

static size_t count_lines(const char *path) {
  size_t len;
  char *t = tu_slurp(path, &len);
  cr_assert(t != NULL, "cannot read %s", path);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += t[i] == '\n';
  if (len && t[len - 1] != '\n') n++;
  free(t);
  return n;
}

/* Non-empty value cells (after the 4 key columns) of the offline table; its
 * cells hold plain numbers (no quotes), comment lines start with '#'. */
static size_t count_offline_cells(const char *path) {
  char *t = tu_slurp(path, NULL);
  cr_assert(t != NULL);
  size_t n = 0;
  bool header = true;
  for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !line[0]) continue;
    if (header) {
      header = false;
      continue;
    }
    int col = 0;
    const char *start = line;
    for (const char *p = line;; p++) {
      if (*p == ',' || *p == 0 || *p == '\r') {
        if (col >= 4 && p > start) n++;
        col++;
        start = p + 1;
        if (*p != ',') break;
      }
    }
  }
  free(t);
  return n;
}

static size_t count_substr(const char *path, const char *needle) {
  char *t = tu_slurp(path, NULL);
  cr_assert(t != NULL);
  size_t n = 0;
  for (const char *p = t; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  free(t);
  return n;
}

/* stage_<K>_lifecycle_metrics.json files at most depth levels below dir. */
static size_t count_stage_files(const char *dir, int depth) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st)) continue;
    if (S_ISDIR(st.st_mode) && depth > 0) n += count_stage_files(path, depth - 1);
    else if (S_ISREG(st.st_mode) && !strncmp(e->d_name, "stage_", 6) && strstr(e->d_name, "_lifecycle_metrics.json"))
      n++;
  }
  closedir(d);
  return n;
}

static double jget_num(const cJSON *o, const char *a, const char *b, const char *c) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
  if (c) v = cJSON_GetObjectItemCaseSensitive(v, c);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median |error| of `metric` over the vLLM closed-loop Llama-3.1-70B points (AIConfigurator's vLLM/H100). */
static double dense_vllm_median(const cJSON *pts, const char *metric) {
  double v[512];
  size_t n = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, pts) {
    const char *src = cJSON_GetObjectItemCaseSensitive(p, "source")->valuestring;
    const char *eng = cJSON_GetObjectItemCaseSensitive(p, "engine")->valuestring;
    const char *model = cJSON_GetObjectItemCaseSensitive(p, "model")->valuestring;
    if (strcmp(src, "aic_closed_loop") || strcmp(eng, "vllm") || strcmp(model, "llama-3.1-70b")) continue;
    double e = jget_num(p, "error_pct", metric, NULL);
    if (isfinite(e) && n < 512) v[n++] = fabs(e);
  }
  cr_assert_gt(n, 0u);
  qsort(v, n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The files this test judges, by name: the published set as it stood when the targets below were set.
 * ../shared/validation grows (new engines, GPUs, serving modes whose accuracy is tracked in
 * docs/ACCURACY.md, not here), so the test links exactly these into a directory of its own and
 * validates that; a file added beside them changes nothing here. */
static const char *const pinned_files[] = {
    "aic_silicon_llama31_70b.csv",     "aic_silicon_moe_h200_vllm.csv",          "trtllm_v0.14_perf_overview_llama31_70b.csv",
    "trtllm090_static_batch_llama2_70b.csv", "published_facts.json", "openloop",
};

/* A fresh directory holding links to the pinned files of the shared validation directory `src`, or NULL
 * (and a reason in why) when one of them is missing there. */
static const char *pinned_validation_dir(const char *src, char *why, size_t cap) {
  const char *dir = tu_tmpdir();
  for (size_t i = 0; i < sizeof pinned_files / sizeof pinned_files[0]; i++) {
    char from[4200], to[4200];
    snprintf(from, sizeof from, "%s/%s", src, pinned_files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, pinned_files[i]);
    struct stat st;
    if (stat(from, &st)) {
      snprintf(why, cap, "%s is absent", from);
      return NULL;
    }
    cr_assert_eq(symlink(from, to), 0, "cannot link %s to %s", to, from);
  }
  return dir;
}

Test(validate_cli, every_published_point_is_reported_and_targets_hold, .timeout = 1400) {
  const char *shared = tu_shared("validation");
  if (!shared) cr_skip_test("../shared/validation is absent");
  char absent[4400], from[2048];
  snprintf(from, sizeof from, "%s", shared);
  const char *pinned = pinned_validation_dir(from, absent, sizeof absent);
  if (!pinned) cr_skip_test("%s", absent);
  char d[2048], path[4200];
  snprintf(d, sizeof d, "%s", pinned);
  size_t want[5];
  want[0] = 0; /* every AIConfigurator sample (aic_silicon_*.csv) linked here: read by content, all models */
  DIR *dd = opendir(d);
  cr_assert(dd != NULL);
  for (struct dirent *e; (e = readdir(dd)) != NULL;) {
    size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, "aic_silicon_", 12) || n < 4 || strcmp(e->d_name + n - 4, ".csv")) continue;
    snprintf(path, sizeof path, "%s/%s", d, e->d_name);
    want[0] += count_lines(path) - 1;
  }
  closedir(dd);
  snprintf(path, sizeof path, "%s/trtllm_v0.14_perf_overview_llama31_70b.csv", d);
  want[1] = count_offline_cells(path);
  snprintf(path, sizeof path, "%s/trtllm090_static_batch_llama2_70b.csv", d);
  want[2] = count_lines(path) - 1;
  snprintf(path, sizeof path, "%s/published_facts.json", d);
  want[3] = count_substr(path, "\"mlperf_result\"");
  want[4] = count_stage_files(d, 3);
  cr_assert_gt(want[4], 0u, "no open-loop stage file under %s", d);
  char json[256], args[8192];
  snprintf(json, sizeof json, "/tmp/servesim_validate_%d.json", getpid());
  tu_tmp_track(json);
  snprintf(args, sizeof args, "validate --data '%s' --no-table --json '%s' --force", d, json);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "exit %d, stderr: %s", rc, err);
  cr_assert(strstr(out, "Closed-loop points") && strstr(out, "Saturation cliffs"), "%s", out);
  char *text = tu_slurp(json, NULL);
  cr_assert(text != NULL);
  unlink(json);
  cJSON *root = cJSON_Parse(text);
  free(text);
  cr_assert(root != NULL, "invalid JSON report");
  const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
  static const char *const src[5] = {"aic_closed_loop", "trtllm_0.14_offline", "trtllm_0.9_static_batch",
                                     "mlperf_4.0", "inference_perf"};
  size_t got[5] = {0, 0, 0, 0, 0}, predicted = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, pts) {
    const char *s = cJSON_GetObjectItemCaseSensitive(p, "source")->valuestring;
    const char *status = cJSON_GetObjectItemCaseSensitive(p, "status")->valuestring;
    const char *id = cJSON_GetObjectItemCaseSensitive(p, "id")->valuestring;
    for (int k = 0; k < 5; k++) got[k] += !strcmp(s, src[k]);
    if (!strcmp(s, "inference_perf")) {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "stage"), "method");
      cr_assert(cJSON_IsString(m) && strstr(m->valuestring, "servesim run --trace"), "%s: no reproduction method", id);
    } else {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(p, "method");
      cr_assert(cJSON_IsString(m) && strstr(m->valuestring, "Redo: servesim run --model"), "%s: no reproduction method",
                id);
    }
    if (!strcmp(status, "predicted")) {
      predicted++;
    } else {
      cr_assert(!strcmp(status, "skipped") || !strcmp(status, "failed"), "%s: status %s", id, status);
      const cJSON *why = cJSON_GetObjectItemCaseSensitive(p, "reason");
      cr_assert(cJSON_IsString(why) && why->valuestring[0], "%s: %s without a reason", id, status);
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(p, "where");
    cr_assert(cJSON_IsString(w) && strchr(w->valuestring, ':'), "%s: no file:line", id);
  }
  for (int k = 0; k < 5; k++) cr_assert_eq(got[k], want[k], "%s: %zu points reported, %zu in the file", src[k], got[k], want[k]);
  cr_assert_gt(predicted, 600u, "only %zu points predicted", predicted);
  /* the fidelity reached (docs/ACCURACY.md states it, and where it misses the targets):
   * vLLM on measured kernel tables, every closed-loop point of the dense Llama-3.1-70B runs (vLLM 0.11.0 by
   * their date; the mixture-of-experts rows ran 0.12.0 and 0.18.0) and every open-loop point */
  const cJSON *sum = cJSON_GetObjectItemCaseSensitive(root, "summary");
  const cJSON *eng = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "by_group"), "engine");
  double ttft = dense_vllm_median(pts, "ttft_ms"), tpot = dense_vllm_median(pts, "tpot_ms"),
         tput = dense_vllm_median(pts, "output_tok_s");
  cr_assert_leq(ttft, 15.0, "vLLM closed-loop TTFT median |error| %.1f%%", ttft);
  cr_assert_leq(tpot, 5.0, "vLLM closed-loop TPOT median |error| %.1f%%", tpot);
  cr_assert_leq(tput, 5.0, "vLLM closed-loop throughput median |error| %.1f%%", tput);
  double stage_e2e = jget_num(sum, "open_loop_stages", "e2el_ms", "median_abs_pct");
  double stage_ttft = jget_num(sum, "open_loop_stages", "ttft_ms", "median_abs_pct");
  cr_assert_leq(stage_e2e, 10.0, "open-loop mean E2E median |error| %.1f%%", stage_e2e);
  cr_assert_leq(stage_ttft, 20.0, "open-loop mean TTFT median |error| %.1f%%", stage_ttft);
  /* TensorRT-LLM: its kernel tables' small-M FP8 GEMMs are slower than the measured decode steps allow
   * (docs/ACCURACY.md): a known gap, held to what the model reaches so that it cannot grow unnoticed */
  double trt = jget_num(eng, "trtllm", "tpot_ms", "median_abs_pct");
  cr_assert_leq(trt, 15.0, "TensorRT-LLM TPOT median |error| %.1f%%", trt);
  double fn = jget_num(sum, "cliffs", "measured_yes_predicted_no", NULL);
  double tp = jget_num(sum, "cliffs", "measured_yes_predicted_yes", NULL);
  double fp = jget_num(sum, "cliffs", "measured_no_predicted_yes", NULL);
  cr_assert_eq(fn, 0, "a measured saturation cliff was not predicted");
  /* two series predict a cliff one rung early (TP2 1024x8192: vLLM c32, TensorRT-LLM c128), where the
   * KV pool fills first: docs/ACCURACY.md */
  cr_assert_leq(fp, 2, "%g saturation cliffs predicted where the measurement has none", fp);
  cr_assert_gt(tp, 0);
  /* open-loop stages: the overloads placed where measured, none invented */
  double missed = jget_num(sum, "kept_up", "measured_overloaded_predicted_kept_up", NULL);
  double invented = jget_num(sum, "kept_up", "measured_kept_up_predicted_overloaded", NULL);
  double over = jget_num(sum, "kept_up", "measured_overloaded_predicted_overloaded", NULL);
  cr_assert_eq(missed, 0, "a measured overload was not predicted");
  cr_assert_eq(invented, 0, "an overload was predicted where the server kept up");
  cr_assert_gt(over, 0);
  cr_assert_gt(jget_num(sum, "open_loop_stages", "e2el_ms", "n"), 0);
  cJSON_Delete(root);
}

Test(validate_cli, open_loop_stage_is_redone_by_run_on_the_saved_trace) {
  char dir[256], args[4096], csv[300];
  const char *d = tu_tmpdir(); /* removed with its files when the test exits */
  cr_assert(d != NULL);
  snprintf(dir, sizeof dir, "%s", d);
  snprintf(args, sizeof args, "validate --data '%s' --only infperf/llama-small/stage1 --save-traces '%s' --json -",
           tu_src("tests/data/infperf/ok"), dir);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "validate: %s", err);
  cJSON *root = cJSON_Parse(out);
  cr_assert(root != NULL, "stdout is not the JSON report");
  const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "points"), 0);
  double ttft = jget_num(p, "predicted", "ttft_ms", NULL), e2e = jget_num(p, "predicted", "e2el_ms", NULL);
  double ttft_med = jget_num(p, "predicted", "ttft_median_ms", NULL);
  /* the measured median is the file's (stage_1_lifecycle_metrics.json: 0.029 s) */
  cr_assert_float_eq(jget_num(p, "measured", "ttft_median_ms", NULL), 29.0, 1e-9);
  cJSON_Delete(root);
  snprintf(csv, sizeof csv, "%s/requests.csv", dir);
  snprintf(args, sizeof args,
           "run --trace '%s/infperf_llama-small_stage1.csv' --model llama-2-7b --engine vllm@0.15.1 --gpu h100-sxm "
           "--tp 1 --max-num-seqs 128 --max-num-batched-tokens 2048 --max-model-len 4096 --gpu-memory-utilization 0.9 "
           "--enable-prefix-caching --quiet --csv '%s'",
           dir, csv);
  rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "run: %s", err);
  /* rows of requests 20..39 (the method says so): columns ttft_ms and e2el_ms by name */
  char *text = tu_slurp(csv, NULL);
  cr_assert(text != NULL);
  int c_ttft = -1, c_e2e = -1, row = -1;
  double st = 0, se = 0, tt[20];
  size_t n = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), row++) {
    int col = 0;
    for (char *f = line, *next; f; f = next, col++) { /* fields may be empty: split by hand */
      next = strchr(f, ',');
      if (next) *next++ = 0;
      if (row < 0) {
        if (!strcmp(f, "ttft_ms")) c_ttft = col;
        if (!strcmp(f, "e2el_ms")) c_e2e = col;
      } else if (row >= 20 && row < 40) {
        if (col == c_ttft) st += tt[row - 20] = atof(f);
        if (col == c_e2e) se += atof(f), n++;
      }
    }
  }
  free(text);
  cr_assert(c_ttft > 0 && c_e2e > 0 && c_e2e > c_ttft, "no ttft_ms/e2el_ms columns");
  cr_assert_eq(n, 20);
  cr_assert(fabs(st / 20 - ttft) < 1e-4 * ttft, "mean TTFT of stage 1's rows %g, validate %g", st / 20, ttft);
  cr_assert(fabs(se / 20 - e2e) < 1e-4 * e2e, "mean E2E of stage 1's rows %g, validate %g", se / 20, e2e);
  /* and the median (numpy's: the mean of the middle two of 20) */
  for (int i = 1; i < 20; i++)
    for (int j = i; j > 0 && tt[j - 1] > tt[j]; j--) {
      double x = tt[j];
      tt[j] = tt[j - 1], tt[j - 1] = x;
    }
  double med = (tt[9] + tt[10]) / 2;
  cr_assert(fabs(med - ttft_med) < 1e-4 * ttft_med, "median TTFT of stage 1's rows %g, validate %g", med, ttft_med);
  unlink(csv);
  char tr[400];
  snprintf(tr, sizeof tr, "%s/infperf_llama-small_stage1.csv", dir);
  unlink(tr);
  rmdir(dir);
}

/* --report FILE.html: the page holds the open-loop stages' TTFT chart and table (each stage's id, measured and
   predicted, the signed error) and the error tables with the signed median beside the absolute one; the same inputs
   write the same bytes; an existing file is not replaced without --force. */
Test(validate_cli, html_report_shows_stages_and_signed_errors) {
  const char *d = tu_tmpdir();
  char h1[300], h2[300], args[2048];
  snprintf(h1, sizeof h1, "%s/v1.html", d);
  snprintf(h2, sizeof h2, "%s/v2.html", d);
  const char *paths[2] = {h1, h2};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, "validate --data '%s' --no-table --report '%s'", tu_src("tests/data/infperf/ok"),
             paths[i]);
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "validate: %s", err);
  }
  size_t n1, n2;
  char *a = tu_slurp(h1, &n1), *b = tu_slurp(h2, &n2);
  cr_assert(a && b && n1 == n2 && !memcmp(a, b, n1), "the same inputs, the same page");
  cr_assert(strstr(a, "<h1>servesim validation report</h1>"), "title");
  cr_assert(strstr(a, "TTFT per open-loop stage (ms, log scale)"), "the stage chart");
  cr_assert(strstr(a, "infperf/llama-small/stage1"), "the stage's id in the table");
  cr_assert(strstr(a, "median signed error") && strstr(a, "Error by engine"), "signed errors per group");
  cr_assert(strstr(a, "</html>"), "a whole page");
  free(a), free(b);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2, "replaced without --force");
  cr_assert(strstr(err, "already exists"), "%s", err);
}

Test(validate_cli, own_run_validates_with_no_error) {
  char run_json[256], wrap[256], args[2048];
  snprintf(run_json, sizeof run_json, "/tmp/servesim_own_%d.json", getpid());
  tu_tmp_track(run_json);
  snprintf(wrap, sizeof wrap, "/tmp/servesim_own_wrap_%d.json", getpid());
  tu_tmp_track(wrap);
  snprintf(args, sizeof args,
           "run --model llama-3.1-8b --gpu h200 --engine vllm --tp 1 --num-prompts 24 --max-concurrency 4 "
           "--random-input-len 256 --random-output-len 32 --quiet --force --json '%s'",
           run_json);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "run: %s", err);
  char *result = tu_slurp(run_json, NULL);
  cr_assert(result != NULL);
  unlink(run_json);
  FILE *f = fopen(wrap, "w");
  cr_assert(f != NULL);
  fprintf(f,
          "{\"name\": \"own\",\n \"scenario\": {\"model\": \"llama-3.1-8b\", \"gpu\": \"h200\", \"engine\": \"vllm\",\n"
          "              \"deployment\": {\"tensor_parallel_size\": 1}},\n \"result\": %s}\n",
          result);
  fclose(f);
  free(result);
  snprintf(args, sizeof args, "validate --measurements '%s' --json -", wrap);
  rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  unlink(wrap);
  cr_assert_eq(rc, 0, "validate: %s", err);
  cJSON *root = cJSON_Parse(out);
  cr_assert(root != NULL, "stdout is not the JSON report");
  const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
  cr_assert_eq(cJSON_GetArraySize(pts), 1);
  const cJSON *p = cJSON_GetArrayItem(pts, 0);
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "status")->valuestring, "predicted");
  static const char *const m[] = {"ttft_ms", "tpot_ms", "output_tok_s"};
  for (int k = 0; k < 3; k++) {
    double e = jget_num(p, "error_pct", m[k], NULL);
    cr_assert(fabs(e) < 0.01, "%s error %g%%", m[k], e);
  }
  cr_assert(strstr(err, "user/own"), "the table goes to stderr when the JSON takes stdout");
  cJSON_Delete(root);
}

/* A model config under mdir and an AIConfigurator-format CSV of `rows` (after the header) at dir/csv. */
static void write_measured(const char *mdir, const char *model_file, const char *config, const char *dir,
                           const char *csv, const char *rows) {
  char path[1024], text[4096];
  snprintf(path, sizeof path, "%s/%s", mdir, model_file);
  cr_assert(tu_write_table(path, config, false));
  snprintf(path, sizeof path, "%s/%s", dir, csv);
  snprintf(text, sizeof text, "%s%s",
           "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,"
           "moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,"
           "silicon_tpot_ms\n",
           rows);
  cr_assert(tu_write_table(path, text, false));
}

/* Measurements of another model, under any file name in a directory, with its
 * config from a --models directory: predicted; the per-point method's
 * `servesim run` command redoes the prediction; groups by model, version
 * and loop, with summaries of too few points flagged. */
Test(validate_cli, any_model_any_file_and_the_redo_command) {
  const char *dir = tu_tmpdir(), *mdir = tu_tmpdir();
  char args[4096];
  write_measured(mdir, "Qwen--Qwen3-8B.json",
                 "{\"model_type\": \"qwen3\", \"hidden_size\": 4096, \"intermediate_size\": 12288, "
                 "\"num_hidden_layers\": 36, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                 "\"head_dim\": 128, \"vocab_size\": 151936, \"max_position_embeddings\": 40960, "
                 "\"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\"}",
                 dir, "week48/bench-results.csv",
      "q1,silicon_concurrency=4,vllm,0.15.1,Qwen/Qwen3-8B,h100_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n"
      "q2,silicon_concurrency=8,vllm,0.15.1,Qwen/Qwen3-8B,h100_sxm,bf16,agg,512,64,bfloat16,,8,1,,,,,45,10\n"
      "q3,silicon_concurrency=8,vllm,0.15.1,example-org/No-Such-Model-7B,h100_sxm,bf16,agg,512,64,bfloat16,,8,1,,,,,45,10\n");
  snprintf(args, sizeof args,
           "validate --measurements '%s' --models '%s' --group-by model,version,loop --min-points 3 --json -", dir,
           mdir);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(err, "3 points: 2 predicted, 0 failed, 1 skipped"), "%s", err);
  cr_assert(strstr(err, "By model:") && strstr(err, "Qwen--Qwen3-8B ttft_ms") && strstr(err, "By version:") &&
                strstr(err, "vllm@0.15.1") && strstr(err, "By loop:") && strstr(err, "[too few points to judge]"),
            "%s", err);
  cr_assert(strstr(err, "no servesim model config for example-org/No-Such-Model-7B"), "%s", err);
  cJSON *root = cJSON_Parse(out);
  cr_assert(root != NULL);
  const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "points"), 0);
  cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "status")->valuestring, "predicted");
  double ttft = jget_num(p, "predicted", "ttft_ms", NULL), tpot = jget_num(p, "predicted", "tpot_ms", NULL);
  const char *m = cJSON_GetObjectItemCaseSensitive(p, "method")->valuestring;
  const char *redo = strstr(m, "Redo: servesim ");
  cr_assert(redo, "%s", m);
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "%s", redo + strlen("Redo: servesim "));
  cJSON_Delete(root);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s: %s", cmd, err);
  double run_ttft = NAN, run_tpot = NAN;
  const char *t = strstr(out, "Mean TTFT (ms):"), *q = strstr(out, "Mean TPOT (ms):");
  cr_assert(t && q, "%s", out);
  sscanf(t + strlen("Mean TTFT (ms):"), "%lf", &run_ttft);
  sscanf(q + strlen("Mean TPOT (ms):"), "%lf", &run_tpot);
  cr_assert(fabs(run_ttft - ttft) <= 0.01 + 1e-4 * ttft, "redo TTFT %g vs validate %g (%s)", run_ttft, ttft, cmd);
  cr_assert(fabs(run_tpot - tpot) <= 0.01 + 1e-4 * tpot, "redo TPOT %g vs validate %g (%s)", run_tpot, tpot, cmd);
}

/* --moe-routing reads every mixture-of-experts point's fused-MoE tables at the routing asked (the title says
 * which); dense points are untouched. */
Test(validate_cli, moe_routing_applies_to_the_moe_points_only) {
  const char *dir = tu_tmpdir(), *mdir = tu_tmpdir();
  char args[4096];
  write_measured(mdir, "mistralai--Mixtral-8x7B-v0.1.json",
                 "{\"model_type\": \"mixtral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
                 "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
                 "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"vocab_size\": 32000, "
                 "\"max_position_embeddings\": 32768, \"tie_word_embeddings\": false, "
                 "\"torch_dtype\": \"bfloat16\"}",
                 dir, "aic.csv",
      "m1,silicon_concurrency=4,vllm,0.15.1,mistralai/Mixtral-8x7B-v0.1,h100_sxm,bf16,agg,2048,32,bfloat16,bfloat16,4,2,,,,,"
      "90,12\n"
      "d1,silicon_concurrency=4,vllm,0.15.1,meta-llama/Llama-3.1-8B,h100_sxm,bf16,agg,2048,32,bfloat16,,4,1,,,,,60,8\n");
  double ttft[2][2];
  for (int r = 0; r < 2; r++) {
    snprintf(args, sizeof args, "validate --measurements '%s' --models '%s' --no-table --json -%s", dir, mdir,
             r ? " --moe-routing power_law_1.01" : "");
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(err, "2 points: 2 predicted"), "%s", err);
    cr_assert(!r == !strstr(err, "mixture-of-experts routing power_law_1.01"), "%s", err);
    cJSON *root = cJSON_Parse(out);
    cr_assert(root != NULL);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    for (int i = 0; i < 2; i++) ttft[r][i] = jget_num(cJSON_GetArrayItem(pts, i), "predicted", "ttft_ms", NULL);
    cJSON_Delete(root);
  }
  cr_assert(ttft[1][0] > ttft[0][0] * 1.02, "skewed experts slow the MoE prefill: %g vs %g", ttft[1][0], ttft[0][0]);
  cr_assert_float_eq(ttft[1][1], ttft[0][1], 0, "the dense point does not change");
}

/* --set applies a deployment setting to every point after its source's facts: SGLang's mixed chunked prefill
 * changes the SGLang point's decode (its decodes run in the long prompts' prefill steps instead of waiting for
 * them), the title says so and the point's Redo line carries the flag and gives the same figures; a vLLM point
 * the setting does not fit fails with the reason instead of running without it. */
Test(validate_cli, set_applies_a_setting_to_every_point) {
  const char *dir = tu_tmpdir(), *mdir = tu_tmpdir();
  char args[4096];
  write_measured(mdir, "unused.json", "{}", dir, "aic.csv",
      "s1,silicon_concurrency=16,sglang,0.5.6.post2,meta-llama/Llama-3.1-8B,h200_sxm,fp8,agg,4000,64,fp8,,16,1,,,,,"
      "500,30\n"
      "v1,silicon_concurrency=16,vllm,0.15.1,meta-llama/Llama-3.1-8B,h200_sxm,bf16,agg,4000,64,bfloat16,,16,1,,,,,"
      "500,30\n");
  double tpot[2];
  const char *redo_m = NULL;
  char redo[3000] = "";
  for (int r = 0; r < 2; r++) {
    snprintf(args, sizeof args, "validate --measurements '%s' --no-table --json -%s", dir,
             r ? " --set enable_mixed_chunk=on" : "");
    cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(err, r ? "2 points: 1 predicted, 1 failed" : "2 points: 2 predicted"), "%s", err);
    cr_assert(!r == !strstr(err, "enable_mixed_chunk=on"), "the title names the setting: %s", err);
    cJSON *root = cJSON_Parse(out);
    cr_assert(root != NULL);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points");
    const cJSON *s1 = cJSON_GetArrayItem(pts, 0), *v1 = cJSON_GetArrayItem(pts, 1);
    tpot[r] = jget_num(s1, "predicted", "tpot_ms", NULL);
    if (r) {
      cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(v1, "status")->valuestring, "failed");
      cr_assert(strstr(cJSON_GetObjectItemCaseSensitive(v1, "reason")->valuestring, "enable_mixed_chunk is SGLang's"));
      redo_m = strstr(cJSON_GetObjectItemCaseSensitive(s1, "method")->valuestring, "Redo: servesim ");
      cr_assert(redo_m && strstr(redo_m, " --enable-mixed-chunk"), "%s", redo_m ? redo_m : "no redo");
      snprintf(redo, sizeof redo, "%s", redo_m + strlen("Redo: servesim "));
    }
    cJSON_Delete(root);
  }
  cr_assert(tpot[1] > tpot[0] * 1.05, "decodes in the prefill steps: TPOT %g with mixing vs %g without", tpot[1],
            tpot[0]);
  cr_assert_eq(tu_run_cli(redo, out, sizeof out, err, sizeof err), 0, "%s: %s", redo, err);
  double run_tpot = NAN;
  const char *q = strstr(out, "Mean TPOT (ms):");
  cr_assert(q, "%s", out);
  sscanf(q + strlen("Mean TPOT (ms):"), "%lf", &run_tpot);
  cr_assert(fabs(run_tpot - tpot[1]) <= 0.01 + 1e-4 * tpot[1], "redo TPOT %g vs validate %g", run_tpot, tpot[1]);
}

/* The text report's per-group summaries give the open-loop stages every stage metric (mean, median and p99
 * TTFT, mean E2E), as the overall stage summary does. */
Test(validate_cli, group_summaries_list_every_stage_metric) {
  char args[1024];
  snprintf(args, sizeof args, "validate --data '%s' --only infperf/llama-small --group-by model --no-table",
           tu_src("tests/data/infperf/ok"));
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  static const char *const want[] = {"llama-2-7b stages ttft_ms ", "llama-2-7b stages ttft_median_ms ",
                                     "llama-2-7b stages ttft_p99_ms ", "llama-2-7b stages e2el_ms "};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_assert(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
}

Test(validate_cli, help_lists_the_options) {
  cr_assert_eq(tu_run_cli("validate --help", out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "usage") && strstr(out, "--measurements") && strstr(out, "--fit") &&
                strstr(out, "--output-spread"),
            "%s", out);
}

Test(validate_cli, bad_input_exits_2_with_a_precise_message) {
  cr_assert_eq(tu_run_cli("validate --data /nonexistent/validation", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "/nonexistent/validation"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --group-by colour", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "colour"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --output-spread 0.9", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--output-spread"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --param vllm.closed_loop_output_spread=0.7", out, sizeof out, err,
                          sizeof err), 2);
  cr_assert(strstr(err, "closed_loop_output_spread=0.7") && strstr(err, "[0, 0.5)"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --allreduce ring", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--allreduce: expected auto, table or link, got 'ring'"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --moe-routing skewed", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--moe-routing: expected balanced, power_law_1.01 or power_law_1.2, got 'skewed'"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data . --param trtllm.frontend_latency_us=1e12", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "frontend_latency_us=1e12") && strstr(err, "one hour"), "%s", err);
  cr_assert_eq(tu_run_cli("validate --data .", out, sizeof out, err, sizeof err), 2, "no known file in the source root");
  cr_assert(strstr(err, "no measurements found"), "%s", err);
  const char *bad = tu_tmpfile(".json", "[\n {\"scenario\": {\"model\": \"llama-3.1-8b\"},\n  \"result\": "
                                        "{\"num_prompts\": -4, \"mean_ttft_ms\": 3}}\n]\n");
  char args[1024];
  snprintf(args, sizeof args, "validate --measurements '%s'", bad);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, bad) && strstr(err, ":2:") && strstr(err, "result.num_prompts"), "%s", err);
  unlink(bad);
  cr_assert_eq(tu_run_cli("validate --param vllm.warp_speed=3 --data .", out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "warp_speed"), "%s", err);
  /* an inference-perf result directory with a defect: FILE:LINE: field */
  snprintf(args, sizeof args, "validate --data '%s'", tu_src("tests/data/infperf/bad/no-stages"));
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "no-stages/config.yaml:16: load.stages: missing"), "%s", err);
  snprintf(args, sizeof args, "validate --data '%s' --save-traces /nonexistent/dir", tu_src("tests/data/infperf/ok"));
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 2);
  cr_assert(strstr(err, "--save-traces /nonexistent/dir"), "%s", err);
}

/* The point of `id` in a validate JSON report, or NULL. */
static const cJSON *point_by_id(const cJSON *root, const char *id) {
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(root, "points")) {
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(p, "id");
    if (cJSON_IsString(i) && strstr(i->valuestring, id)) return p;
  }
  return NULL;
}

static const char *pstr(const cJSON *p, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

#define QWEN8B_CONFIG                                                                                                \
  "{\"model_type\": \"qwen3\", \"hidden_size\": 4096, \"intermediate_size\": 12288, \"num_hidden_layers\": 36, "   \
  "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, \"vocab_size\": 151936, "            \
  "\"max_position_embeddings\": 40960, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\"}"

/* The input quirks of AIConfigurator's public sample that were skipped or failed (issue [coverage]), each in a
 * row written here: every row is predicted, with a note saying how it was read. */
Test(validate_cli, aic_input_quirks_are_predicted) {
  const char *dir = tu_tmpdir(), *mdir = tu_tmpdir(), *shared = tu_tmpdir();
  char path[1024], args[4096];
  /* a shared models directory (as ../shared/models) holding one model; --models adds another */
  snprintf(path, sizeof path, "%s/models/acme--Shared-8B.json", shared);
  cr_assert(tu_write_table(path, QWEN8B_CONFIG, false));
  setenv("SERVESIM_SHARED_DIR", shared, 1);
  write_measured(mdir, "Qwen--Qwen3-8B.json", QWEN8B_CONFIG, dir, "quirks.csv",
      /* blank gemm_quant_mode and precision: the checkpoint's own BF16 */
      "blank,silicon_concurrency=4,vllm,0.15.1,Qwen/Qwen3-8B,h100_sxm,,agg,512,64,,,4,1,,,,,40,9\n"
      /* PEP 440 post-release of a release candidate, and of a release */
      "post,silicon_concurrency=4,trtllm,1.2.0rc6.post1,Qwen/Qwen3-8B,h100_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n"
      "post2,silicon_concurrency=4,trtllm,0.8.1.post3,Qwen/Qwen3-8B,h200_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n"
      /* a build's name instead of a version */
      "build,silicon_concurrency=4,vllm,gpt-oss-dev,Qwen/Qwen3-8B,h200_sxm,bf16,agg,512,64,bfloat16,,4,2,,,,,40,9\n"
      /* a quantized checkpoint's id: the base model's architecture (bundled llama-3.1-8b) */
      "fp8id,silicon_concurrency=4,vllm,0.15.1,nvidia/Llama-3.1-8B-Instruct-FP8,h100_sxm,fp8,agg,512,64,fp8,,4,1,,,,,"
      "30,7\n"
      /* the same name under another organization */
      "org,silicon_concurrency=4,vllm,0.15.1,renamed-org/Qwen3-8B,h100_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n"
      /* a model of the shared directory, found although --models is given */
      "shared,silicon_concurrency=4,vllm,0.15.1,acme/Shared-8B,h100_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n");
  snprintf(args, sizeof args, "validate --measurements '%s' --models '%s' --no-table --json -", dir, mdir);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  unsetenv("SERVESIM_SHARED_DIR");
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert(strstr(err, "7 points: 7 predicted, 0 failed, 0 skipped"), "%s", err);
  cr_assert(strstr(err, "coverage: 7 of 7 rows predicted (100.0%), 0 failed, 0 skipped\n"), "%s", err);
  cJSON *root = cJSON_Parse(out);
  cr_assert(root != NULL);
  const cJSON *cov = cJSON_GetObjectItemCaseSensitive(root, "coverage");
  cr_assert_eq(jget_num(cov, "predicted", NULL, NULL), 7);
  const cJSON *p = point_by_id(root, "Qwen--Qwen3-8B/h100-sxm/vllm/tp1/512x64/c4");
  cr_assert(p, "%s", out);
  cr_assert(strstr(pstr(p, "method"), "the checkpoint's own bf16 (its torch_dtype)") &&
                strstr(pstr(p, "method"), "--quantization none"),
            "%s", pstr(p, "method"));
  p = point_by_id(root, "h100-sxm/trtllm/tp1/512x64/c4");
  cr_assert(p && !strcmp(pstr(p, "status"), "predicted"), "%s", out);
  p = point_by_id(root, "h200/trtllm/tp1/512x64/c4");
  cr_assert(p && !strcmp(pstr(p, "status"), "predicted"), "%s", out);
  p = point_by_id(root, "h200/vllm/tp2/512x64/c4");
  cr_assert(p && strstr(pstr(p, "method"), "backend_version gpt-oss-dev is a build name"), "%s", out);
  p = point_by_id(root, "llama-3.1-8b/h100-sxm/vllm/tp1/512x64/c4");
  cr_assert(p && !strcmp(pstr(p, "status"), "predicted"), "%s", out);
  cr_assert(strstr(pstr(p, "method"), "model nvidia/Llama-3.1-8B-Instruct-FP8 read as meta-llama/Llama-3.1-8B-Instruct"
                                      "'s architecture") &&
                strstr(pstr(p, "method"), "--quantization fp8"),
            "%s", pstr(p, "method"));
  size_t orgs = 0;
  const cJSON *q;
  cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(root, "points"))
    orgs += strstr(pstr(q, "method"), "model renamed-org/Qwen3-8B read as Qwen/Qwen3-8B (the same name under another "
                                      "organization)") != NULL;
  cr_assert_eq(orgs, 1u, "%s", out);
  cr_assert(point_by_id(root, "acme--Shared-8B"), "the shared directory's model: %s", out);
  cJSON_Delete(root);
  /* an ambiguous name is not guessed: two models named Twin-8B under other organizations */
  snprintf(path, sizeof path, "%s/a--Twin-8B.json", mdir);
  cr_assert(tu_write_table(path, QWEN8B_CONFIG, false));
  snprintf(path, sizeof path, "%s/b--Twin-8B.json", mdir);
  cr_assert(tu_write_table(path, QWEN8B_CONFIG, false));
  write_measured(mdir, "Qwen--Qwen3-8B.json", QWEN8B_CONFIG, dir, "quirks.csv",
                 "twin,silicon_concurrency=4,vllm,0.15.1,c/Twin-8B,h100_sxm,bf16,agg,512,64,bfloat16,,4,1,,,,,40,9\n");
  snprintf(args, sizeof args, "validate --measurements '%s' --models '%s' --no-table", dir, mdir);
  cr_assert_eq(tu_run_cli(args, out, sizeof out, err, sizeof err), 0, "%s", err);
  cr_assert(strstr(out, "1 x no servesim model config for c/Twin-8B (add one"), "%s\n%s", out, err);
}
