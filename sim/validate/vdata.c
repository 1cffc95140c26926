/* vdata.c: readers of the published measurements (see validate.h and
 * ../shared/validation/SOURCES.md) and the user format.
 *
 * Mapping rules, applied the same way to every row (no per-row constants):
 *  - GPUs, models and engines: through the names and aliases the config files
 *    declare (vresolve.c): "h100_sxm", "H100 80GB HBM3" -> h100-sxm;
 *    "meta-llama/Llama-3.1-70B", "llama3.1-70b" -> llama-3.1-70b (also
 *    "llama3-70b": identical layer shapes and vocabulary, the files differ
 *    only in RoPE scaling and context length, which do not enter the cost
 *    model at these lengths); any other Hugging Face id through a --models
 *    directory. A label nothing declares is skipped with that reason.
 *  - Precision: FP8 = FP8 weights (W8A8 on FP8 tensor cores). TensorRT-LLM
 *    sources: FP8 implies an FP8 KV cache (perf-overview: "If you specify FP8
 *    quantization, the KV cache will automatically be set to FP8 as well").
 *    vLLM keeps its default `--kv-cache-dtype auto` = the activation dtype.
 *    FP16 / "Mixed" = FP16 activations, weights and KV cache.
 *  - Engines: vllm, trtllm (TensorRT-LLM). Others skipped.
 *  - Workload sizes: AIConfigurator closed loop: 10 x concurrency requests
 *    (its benchmarking guide, SOURCES.md); trtllm-bench offline: the
 *    $num_requests table of perf-overview.md v0.14 (kept below); static batch:
 *    one batch.
 * Errors: a malformed row is "FILE:LINE: COLUMN: problem"; JSON records name
 * the line where the record starts. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/settings.h"
#include "validate/validate.h"
#include "validate/vcsv.h"
#include "validate/vdata_impl.h"

/* ---- TensorRT-LLM v0.14 perf overview (offline throughput) ----------------------- */

/* perf-overview.md v0.14, "Preparing a Dataset": $num_requests per ISL/OSL. */
static uint64_t trt_num_requests(uint32_t isl, uint32_t osl) {
  static const uint32_t t[][3] = {{128, 128, 30000},  {128, 2048, 3000},  {128, 4096, 1500},
                                  {2048, 128, 3000},  {2048, 2048, 1500}, {5000, 500, 1500},
                                  {1000, 1000, 3000}, {500, 2000, 3000},  {20000, 2000, 1000}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(t); i++)
    if (t[i][0] == isl && t[i][1] == osl) return t[i][2];
  return 0;
}

int vdata_parse_trt_overview(vset *s, const char *text, const char *what, sim_err *err) {
  vcsv c;
  int rc = vcsv_parse(&c, text, what, err);
  if (rc) return rc;
  int cm, ci, co, ct;
  if (!rc) rc = vcsv_need(&c, "model", what, &cm, err);
  if (!rc) rc = vcsv_need(&c, "isl", what, &ci, err);
  if (!rc) rc = vcsv_need(&c, "osl", what, &co, err);
  if (!rc) rc = vcsv_need(&c, "tp", what, &ct, err);
  /* value columns: GPU_PRECISION */
  for (int k = 0; k < c.header.n && !rc; k++) {
    if (k == cm || k == ci || k == co || k == ct) continue;
    if (!strrchr(c.header.f[k], '_') || strlen(c.header.f[k]) >= 64)
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: %.80s: expected a GPU_PRECISION column name (e.g. H200_FP8) of at most "
                    "63 characters", what, c.header.line, c.header.f[k]);
  }
  for (size_t i = 0; i < c.n && !rc; i++) {
    const vcsv_row *r = &c.rows[i];
    uint32_t isl, osl, tp;
    if ((rc = vcsv_u32(&c, r, ci, what, 1, 10000000, &isl, err))) break;
    if ((rc = vcsv_u32(&c, r, co, what, 1, 10000000, &osl, err))) break;
    if ((rc = vcsv_u32(&c, r, ct, what, 1, 1024, &tp, err))) break;
    const char *mlabel = r->f[cm];
    if (!mlabel[0]) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: model: empty", what, r->line);
      break;
    }
    for (int k = 0; k < c.header.n && !rc; k++) {
      if (k == cm || k == ci || k == co || k == ct || !r->f[k][0]) continue; /* empty cell: not measured */
      double v;
      if ((rc = vcsv_pos(&c, r, k, what, &v, err))) break;
      char glabel[64];
      vdata__set_str(glabel, sizeof glabel, c.header.f[k]);
      char *us = strrchr(glabel, '_'); /* the header check above: there is one, within the 63 characters */
      SIM_ASSERT(us);
      *us = 0;
      const char *prec = us + 1;
      vpoint *p = vset_add(s);
      p->src = VSRC_TRT_OVERVIEW;
      p->shape = VSHAPE_OFFLINE;
      vfmt(p->where, sizeof p->where, "%s:%d", what, r->line);
      p->isl = isl, p->osl = osl, p->tp = tp;
      p->meas[VM_TPUT] = v;
      const char *gpu = vres_gpu(vset_resolver(s), glabel), *model = vres_model(vset_resolver(s), mlabel, NULL, 0);
      vdata__set_str(p->gpu, sizeof p->gpu, gpu);
      vdata__set_str(p->model, sizeof p->model, model);
      vdata__set_str(p->engine, sizeof p->engine, "trtllm");
      p->num_prompts = trt_num_requests(isl, osl);
      vfmt(p->id, sizeof p->id, "trt014/%s/%s/%s/tp%u/%ux%u", mlabel, gpu ? gpu : glabel, prec, tp, isl, osl);
      vdata__set_group(p, gpu ? gpu : glabel);
      if (!model) vfmt(p->skip, sizeof p->skip, "no servesim model config for %s", mlabel);
      else if (!gpu) vfmt(p->skip, sizeof p->skip, "no servesim GPU config for %s (no sourced datasheet figures in the data)", glabel);
      else if (!vdata__set_precision(p, prec)) vfmt(p->skip, sizeof p->skip, "precision %s: not modelled", prec);
      else if (!p->num_prompts)
        vfmt(p->skip, sizeof p->skip, "ISL/OSL %u/%u: number of requests not published", isl, osl);
    }
  }
  vcsv_free(&c);
  return rc;
}

/* ---- TensorRT-LLM 0.9 static-batch sweep of Llama-2-70B ------------------------ */

int vdata_parse_static_batch(vset *s, const char *text, const char *what, sim_err *err) {
  vcsv c;
  int rc = vcsv_parse(&c, text, what, err);
  if (rc) return rc;
  enum { C_GPU, C_PREC, C_TP, C_PP, C_LENS, C_BATCH, C_FTL, C_TTL, C_TPUT, NC };
  static const char *const names[NC] = {"GPU",
                                        "Precision",
                                        "Tensor Model Parallel Size",
                                        "Pipeline Model Parallel Size",
                                        "Input/Output Lengths",
                                        "Batch Size",
                                        "1st Token Latency (ms)",
                                        "Token-to-token Latency (ms)",
                                        "Throughput (tokens / sec)"};
  int col[NC];
  for (int i = 0; i < NC && !rc; i++) rc = vcsv_need(&c, names[i], what, &col[i], err);
  for (size_t i = 0; i < c.n && !rc; i++) {
    const vcsv_row *r = &c.rows[i];
    vpoint *p = vset_add(s);
    p->src = VSRC_STATIC_BATCH;
    p->shape = VSHAPE_STATIC;
    vfmt(p->where, sizeof p->where, "%s:%d", what, r->line);
    if ((rc = vcsv_u32(&c, r, col[C_TP], what, 1, 1024, &p->tp, err))) break;
    if ((rc = vcsv_u32(&c, r, col[C_PP], what, 1, 1024, &p->pp, err))) break;
    if ((rc = vcsv_u32(&c, r, col[C_BATCH], what, 1, 1000000, &p->concurrency, err))) break;
    if ((rc = vcsv_pos(&c, r, col[C_FTL], what, &p->meas[VM_TTFT], err))) break;
    if ((rc = vcsv_pos(&c, r, col[C_TTL], what, &p->meas[VM_TPOT], err))) break;
    if ((rc = vcsv_pos(&c, r, col[C_TPUT], what, &p->meas[VM_TPUT], err))) break;
    const char *lens = r->f[col[C_LENS]];
    unsigned a, b;
    char tail;
    if (sscanf(lens, "%u,%u%c", &a, &b, &tail) != 2 || a < 1 || b < 1 || a > 10000000 || b > 10000000) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: Input/Output Lengths: expected \"ISL,OSL\" (positive integers), got '%s'",
                    what, r->line, lens);
      break;
    }
    p->isl = a, p->osl = b;
    p->num_prompts = p->concurrency;
    const char *glabel = r->f[col[C_GPU]], *prec = r->f[col[C_PREC]];
    if (!glabel[0]) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: GPU: empty", what, r->line);
      break;
    }
    const char *gpu = vres_gpu(vset_resolver(s), glabel);
    vdata__set_str(p->gpu, sizeof p->gpu, gpu);
    vdata__set_str(p->model, sizeof p->model, "llama-2-70b");
    vdata__set_str(p->engine, sizeof p->engine, "trtllm");
    vfmt(p->id, sizeof p->id, "static09/%s/%s/tp%u/%ux%u/b%u", gpu ? gpu : glabel, prec, p->tp, p->isl, p->osl,
             p->concurrency);
    vdata__set_group(p, gpu ? gpu : glabel);
    bool prec_ok = vdata__set_precision(p, prec);
    if (!gpu) vfmt(p->skip, sizeof p->skip, "no servesim GPU config for %s", glabel);
    else if (!prec_ok) vfmt(p->skip, sizeof p->skip, "precision %s: not modelled", prec);
  }
  vcsv_free(&c);
  return rc;
}

/* ---- JSON helpers ------------------------------------------------------------------ */

/* Line (1-based) where the k-th element of the top-level array starts, by a
 * scan that skips strings; 0 if not found. cJSON keeps no positions. */
static int json_elem_line(const char *text, int k) {
  int line = 1, depth = 0, idx = -1;
  bool in_str = false;
  for (const char *p = text; *p; p++) {
    char ch = *p;
    if (ch == '\n') line++;
    if (in_str) {
      if (ch == '\\' && p[1]) {
        p++;
        continue;
      }
      if (ch == '"') in_str = false;
      continue;
    }
    if (ch == '"') {
      in_str = true;
      if (depth == 1 && ++idx == k) return line;
      continue;
    }
    if (ch == '{' || ch == '[') {
      if (depth == 1 && ++idx == k) return line;
      depth++;
    } else if (ch == ']' || ch == '}') {
      depth--;
    } else if (depth == 1 && ch != ',' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') {
      /* a bare scalar element: count its first character only */
      if (++idx == k) return line;
      while (p[1] && p[1] != ',' && p[1] != ']' && p[1] != '\n') p++;
    }
  }
  return 0;
}

static cJSON *json_parse(const char *text, const char *what, sim_err *err) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, strlen(text), &end, 0);
  if (!root) {
    int line = 1;
    for (const char *p = text; end && p < end; p++) line += *p == '\n';
    sim_errf(err, SIM_EINPUT, "%s:%d: invalid JSON", what, line);
  }
  return root;
}

static const cJSON *jget(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *jstr(const cJSON *o, const char *k) {
  const cJSON *v = jget(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Positive finite number at o[k]; absent = NAN with rc 0; wrong type = error. */
static int jpos(const cJSON *o, const char *k, const char *what, int line, const char *ctx, double *out,
                sim_err *err) {
  const cJSON *v = jget(o, k);
  *out = NAN;
  if (!v || cJSON_IsNull(v)) return SIM_OK;
  if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble))
    return sim_errf(err, SIM_EINPUT, "%s:%d: %s%s: expected a positive number", what, line, ctx, k);
  *out = v->valuedouble;
  return SIM_OK;
}

/* ---- MLPerf v4.0 results (published_facts.json) --------------------------------- */

int vdata_parse_mlperf(vset *s, const char *text, const char *what, sim_err *err) {
  cJSON *root = json_parse(text, what, err);
  if (!root) return SIM_EINPUT;
  int rc = SIM_OK;
  if (!cJSON_IsArray(root)) rc = sim_errf(err, SIM_EINPUT, "%s:1: expected a JSON array of records", what);
  int k = -1;
  const cJSON *rec;
  cJSON_ArrayForEach(rec, root) {
    if (rc) break;
    k++;
    int line = json_elem_line(text, k);
    if (!cJSON_IsObject(rec)) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: record %d: expected an object", what, line, k);
      break;
    }
    const char *kind = jstr(rec, "kind");
    if (!kind) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: record %d: kind: expected a string", what, line, k);
      break;
    }
    if (strcmp(kind, "mlperf_result")) continue;
    const cJSON *cond = jget(rec, "conditions"), *val = jget(rec, "values");
    if (!cJSON_IsObject(cond) || !cJSON_IsObject(val)) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: record %d: %s: expected an object", what, line, k,
                    cJSON_IsObject(cond) ? "values" : "conditions");
      break;
    }
    const char *system = jstr(cond, "system"), *scen = jstr(cond, "scenario");
    if (!system || !scen) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: record %d: conditions.%s: expected a string", what, line, k,
                    system ? "scenario" : "system");
      break;
    }
    vpoint *p = vset_add(s);
    p->src = VSRC_MLPERF;
    p->shape = !strcmp(scen, "Offline") ? VSHAPE_OFFLINE : VSHAPE_OPEN;
    vfmt(p->where, sizeof p->where, "%s:%d", what, line);
    vfmt(p->id, sizeof p->id, "mlperf40/%s/%s", system, scen);
    vdata__set_str(p->model, sizeof p->model, "llama-2-70b");
    vdata__set_str(p->engine, sizeof p->engine, "trtllm");
    vfmt(p->group, sizeof p->group, "mlperf40/%s", system);
    if ((rc = jpos(val, "tokens_per_s", what, line, "values.", &p->meas[VM_TPUT], err))) break;
    const cJSON *tt = jget(val, "ttft_ms"), *tp = jget(val, "tpot_ms");
    if (tt && (rc = jpos(tt, "mean", what, line, "values.ttft_ms.", &p->meas[VM_TTFT], err))) break;
    if (tp && (rc = jpos(tp, "mean", what, line, "values.tpot_ms.", &p->meas[VM_TPOT], err))) break;
    if (isnan(p->meas[VM_TPUT]) && isnan(p->meas[VM_TTFT])) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: record %d: values: neither tokens_per_s nor ttft_ms.mean", what, line, k);
      break;
    }
    vfmt(p->skip, sizeof p->skip,
             "MLPerf OpenOrca workload: the data gives the mean output length but not the input-length distribution "
             "(published_facts.json), so the workload cannot be reproduced");
  }
  cJSON_Delete(root);
  return rc;
}

/* ---- user files: vllm bench serve --save-result + the deployment ------------------- */

/* vLLM writes request_rate inf as the bare token Infinity (Python json); cJSON
 * rejects it. Replaces bare Infinity / -Infinity / NaN outside strings with
 * quoted strings of equal meaning (a fresh copy). */
static char *fix_nonfinite(const char *text) {
  size_t n = strlen(text);
  char *o = sim_malloc(n * 2 + 1);
  size_t k = 0;
  bool in_str = false;
  for (size_t i = 0; i < n; i++) {
    char ch = text[i];
    if (in_str) {
      o[k++] = ch;
      if (ch == '\\' && i + 1 < n) o[k++] = text[++i];
      else if (ch == '"') in_str = false;
      continue;
    }
    if (ch == '"') in_str = true;
    if (!strncmp(text + i, "Infinity", 8)) {
      memcpy(o + k, "\"inf\"", 5);
      k += 5;
      i += 7;
      continue;
    }
    if (!strncmp(text + i, "NaN", 3)) {
      memcpy(o + k, "null", 4);
      k += 4;
      i += 2;
      continue;
    }
    o[k++] = ch;
  }
  o[k] = 0;
  return o;
}

static int user_lens(const cJSON *res, const char *key, const char *what, int line, uint64_t n, uint32_t **out,
                     sim_err *err) {
  const cJSON *a = jget(res, key);
  *out = NULL;
  if (!a || cJSON_IsNull(a)) return SIM_OK;
  if (!cJSON_IsArray(a) || (uint64_t)cJSON_GetArraySize(a) != n)
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.%s: expected an array of num_prompts (%llu) integers", what, line,
                    key, (unsigned long long)n);
  uint32_t *v = sim_malloc((size_t)n * sizeof *v);
  size_t i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, a) {
    if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e7 || e->valuedouble != floor(e->valuedouble)) {
      free(v);
      return sim_errf(err, SIM_EINPUT, "%s:%d: result.%s[%zu]: expected a token count", what, line, key, i);
    }
    v[i++] = (uint32_t)e->valuedouble;
  }
  *out = v;
  return SIM_OK;
}

/* ---- genai-perf / AIPerf results ------------------------------------------------------ */

/* A genai-perf / AIPerf metric {"unit": U, "avg": V, ...} at m[k]: its avg in
 * the unit asked for (latencies: ms, converted from s, us or ns; counts and
 * rates as given). Absent: NAN with rc 0. */
static int gp_avg(const cJSON *m, const char *k, bool latency, const char *what, int line, double *out, sim_err *err) {
  const cJSON *o = jget(m, k);
  *out = NAN;
  if (!o || cJSON_IsNull(o)) return SIM_OK;
  if (cJSON_IsNumber(o)) { /* a bare number (request_count in some versions) */
    *out = o->valuedouble;
  } else {
    const cJSON *v = jget(o, "avg");
    if (!cJSON_IsObject(o) || !cJSON_IsNumber(v))
      return sim_errf(err, SIM_EINPUT, "%s:%d: result.%s: expected {\"unit\": ..., \"avg\": number}", what, line, k);
    *out = v->valuedouble;
    const char *u = jstr(o, "unit");
    if (latency && u) {
      if (!strcmp(u, "s") || !strcmp(u, "sec")) *out *= 1e3;
      else if (!strcmp(u, "us")) *out /= 1e3;
      else if (!strcmp(u, "ns")) *out /= 1e6;
      else if (strcmp(u, "ms"))
        return sim_errf(err, SIM_EINPUT, "%s:%d: result.%s.unit: expected ms, s, us or ns, got '%s'", what, line, k, u);
    }
  }
  if (!(*out > 0) || !isfinite(*out))
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.%s: expected a positive value", what, line, k);
  return SIM_OK;
}

/* The run's own settings: input_config.K (genai-perf) or input_config.loadgen.K (AIPerf). */
static double gp_input(const cJSON *res, const char *k) {
  const cJSON *ic = jget(res, "input_config");
  const cJSON *v = jget(ic, k);
  if (!cJSON_IsNumber(v)) v = jget(jget(ic, "loadgen"), k);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : NAN;
}

/* A genai-perf (profile_export_genai_perf.json) or AIPerf
 * (profile_export_aiperf.json) result: mean TTFT, mean inter-token latency
 * (per request (E2E - TTFT) / (output - 1), vLLM's TPOT), output token
 * throughput; lengths from the mean input/output sequence lengths; request
 * count, concurrency and rate from the result's input_config, else from the
 * scenario's workload (num_prompts, max_concurrency, request_rate). */
static int user_genai(vpoint *p, const scenario *sc, const cJSON *scj, const cJSON *res, const char *what, int line,
                      sim_err *err) {
  const cJSON *m = jget(res, "llm_metrics") ? jget(res, "llm_metrics") : res;
  double count, isl, osl;
  int rc;
  if ((rc = gp_avg(m, "time_to_first_token", true, what, line, &p->meas[VM_TTFT], err))) return rc;
  if ((rc = gp_avg(m, "inter_token_latency", true, what, line, &p->meas[VM_TPOT], err))) return rc;
  if ((rc = gp_avg(m, "output_token_throughput", false, what, line, &p->meas[VM_TPUT], err))) return rc;
  if ((rc = gp_avg(m, "request_count", false, what, line, &count, err))) return rc;
  if (isnan(count) && (rc = gp_avg(res, "request_count", false, what, line, &count, err))) return rc;
  if ((rc = gp_avg(m, "input_sequence_length", false, what, line, &isl, err))) return rc;
  if ((rc = gp_avg(m, "output_sequence_length", false, what, line, &osl, err))) return rc;
  const cJSON *wl = jget(scj, "workload");
  if (isnan(count)) count = gp_input(res, "request_count");
  if (isnan(count) && jget(wl, "num_prompts")) count = (double)sc->gen.num_prompts;
  if (isnan(count) || count != floor(count) || count > 1e8)
    return sim_errf(err, SIM_EINPUT,
                    "%s:%d: result: no request_count (an integer): give scenario.workload.num_prompts", what, line);
  p->num_prompts = (uint64_t)count;
  double conc = gp_input(res, "concurrency");
  if (isnan(conc) && sc->max_concurrency) conc = sc->max_concurrency;
  if (!isnan(conc) && (conc != floor(conc) || conc > 1e7))
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.input_config.concurrency: expected an integer up to 1e7, got %.6g",
                    what, line, conc);
  p->concurrency = isnan(conc) ? 0 : (uint32_t)conc;
  double rate = gp_input(res, "request_rate");
  if (isnan(rate) && jget(wl, "request_rate")) rate = sc->gen.request_rate;
  p->request_rate = isnan(rate) ? INFINITY : rate;
  if (jget(wl, "burstiness")) p->burstiness = sc->gen.burstiness;
  if (isnan(isl) && jget(wl, "random_input_len")) isl = sc->gen.input.len;
  if (isnan(osl) && jget(wl, "random_output_len")) osl = sc->gen.output.len;
  if (isnan(isl) || isnan(osl))
    return sim_errf(err, SIM_EINPUT,
                    "%s:%d: result: no input_sequence_length / output_sequence_length: give "
                    "scenario.workload.random_input_len and random_output_len",
                    what, line);
  isl = floor(isl + 0.5), osl = floor(osl + 0.5);
  if (!(isl >= 1 && isl <= 1e7 && osl >= 1 && osl <= 1e7)) /* NAN fails too */
    return sim_errf(err, SIM_EINPUT, "%s:%d: result: mean input and output lengths must be 1 to 10,000,000 tokens, "
                    "got %.6g and %.6g", what, line, isl, osl);
  p->isl = (uint32_t)isl, p->osl = (uint32_t)osl;
  if (isnan(p->meas[VM_TTFT]) && isnan(p->meas[VM_TPOT]) && isnan(p->meas[VM_TPUT]))
    return sim_errf(err, SIM_EINPUT,
                    "%s:%d: result: none of time_to_first_token, inter_token_latency, output_token_throughput", what,
                    line);
  vfmt(p->group, sizeof p->group, "user/%s/%s/%s/tp%u", vdata__model_short(p->model), p->gpu, p->engine, p->tp);
  return SIM_OK;
}

/* A user record's deployment must name configs that exist: a typo is bad
 * input, not a failed prediction. A Hugging Face id or benchmark label
 * resolves like the tables' (vresolve.c). */
static int user_configs(vset *s, scenario *sc, const char *what, int line, sim_err *err) {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  sim_err ce = {0, ""};
  /* a name that is not a file (a bundled name, or an id a bundled file declares) becomes the bundled name */
  if (cfg_model_load(&m, sc->model, &ce)) {
    const char *mm = vres_model(vset_resolver(s), sc->model, NULL, 0);
    if (mm) vfmt(sc->model, sizeof sc->model, "%s", mm);
  } else if (!sim_is_file(sc->model)) {
    vfmt(sc->model, sizeof sc->model, "%s", m.name);
  }
  if (cfg_gpu_load(&g, sc->gpu, &ce)) {
    const char *gg = vres_gpu(vset_resolver(s), sc->gpu);
    if (gg) vfmt(sc->gpu, sizeof sc->gpu, "%s", gg);
  } else if (!sim_is_file(sc->gpu)) {
    vfmt(sc->gpu, sizeof sc->gpu, "%s", g.name);
  }
  if (cfg_engine_load(&e, sc->engine, &ce)) {
    const char *ee = vres_engine(vset_resolver(s), sc->engine);
    if (ee) vfmt(sc->engine, sizeof sc->engine, "%s", ee);
  }
  ce.code = 0, ce.msg[0] = 0;
  if (cfg_model_load(&m, sc->model, &ce) || cfg_gpu_load(&g, sc->gpu, &ce) || cfg_engine_load(&e, sc->engine, &ce))
    return sim_errf(err, SIM_EINPUT, "%s:%d: scenario: %s", what, line, ce.msg);
  return SIM_OK;
}

/* A user point's request lengths: per request (input_lens, output_lens: --save-detailed; a failed request's
 * replaced by the means), else the generator's (scenario.workload.random_input_len), else the result's means. */
static int user_lengths(vpoint *p, const scenario *sc, const cJSON *scj, const cJSON *res, const char *what, int line,
                        sim_err *err) {
  int rc;
  double completed, tin, tout;
  if ((rc = jpos(res, "completed", what, line, "result.", &completed, err))) return rc;
  if ((rc = jpos(res, "total_input_tokens", what, line, "result.", &tin, err))) return rc;
  if ((rc = jpos(res, "total_output_tokens", what, line, "result.", &tout, err))) return rc;
  if ((rc = user_lens(res, "input_lens", what, line, p->num_prompts, &p->in_lens, err))) return rc;
  if ((rc = user_lens(res, "output_lens", what, line, p->num_prompts, &p->out_lens, err))) return rc;
  if (!p->in_lens != !p->out_lens)
    return sim_errf(err, SIM_EINPUT, "%s:%d: result: input_lens and output_lens must be given together", what, line);
  if (p->in_lens) {
    p->n_lens = p->num_prompts;
    double si = 0, so = 0;
    size_t ok = 0;
    for (size_t i = 0; i < p->n_lens; i++) {
      if (!p->out_lens[i] || !p->in_lens[i]) continue; /* a failed request: replayed with its intended lengths below */
      si += p->in_lens[i], so += p->out_lens[i], ok++;
    }
    if (!ok) return sim_errf(err, SIM_EINPUT, "%s:%d: result.output_lens: no request produced tokens", what, line);
    p->isl = (uint32_t)floor(si / ok + 0.5), p->osl = (uint32_t)floor(so / ok + 0.5);
    for (size_t i = 0; i < p->n_lens; i++) {
      if (!p->in_lens[i]) p->in_lens[i] = p->isl;
      if (!p->out_lens[i]) p->out_lens[i] = p->osl;
    }
  } else if (jget(scj, "workload") && jget(jget(scj, "workload"), "random_input_len")) {
    p->isl = (uint32_t)sc->gen.input.len, p->osl = (uint32_t)sc->gen.output.len;
  } else {
    if (isnan(completed) || isnan(tin) || isnan(tout))
      return sim_errf(err, SIM_EINPUT,
                      "%s:%d: result: without input_lens/output_lens (--save-detailed) or scenario.workload."
                      "random_input_len, completed, total_input_tokens and total_output_tokens are needed for the "
                      "lengths",
                      what, line);
    double mi = floor(tin / completed + 0.5), mo = floor(tout / completed + 0.5);
    if (!(mi >= 1 && mi <= 1e7 && mo >= 1 && mo <= 1e7)) /* NAN fails too */
      return sim_errf(err, SIM_EINPUT, "%s:%d: result: mean lengths (total_input_tokens or total_output_tokens / "
                      "completed) must be 1 to 10,000,000 tokens, got %.6g and %.6g", what, line, mi, mo);
    p->isl = (uint32_t)mi, p->osl = (uint32_t)mo;
  }
  return SIM_OK;
}

static int user_record(vset *s, const cJSON *rec, const char *what, int line, int k, sim_err *err) {
  if (!cJSON_IsObject(rec)) return sim_errf(err, SIM_EINPUT, "%s:%d: record %d: expected an object", what, line, k);
  for (const cJSON *it = rec->child; it; it = it->next)
    if (strcmp(it->string, "name") && strcmp(it->string, "scenario") && strcmp(it->string, "result"))
      return sim_errf(err, SIM_EINPUT, "%s:%d: %s: unknown key (known: name, scenario, result)", what, line,
                      it->string);
  const cJSON *scj = jget(rec, "scenario"), *res = jget(rec, "result");
  if (!cJSON_IsObject(scj)) return sim_errf(err, SIM_EINPUT, "%s:%d: scenario: expected an object", what, line);
  if (!cJSON_IsObject(res)) return sim_errf(err, SIM_EINPUT, "%s:%d: result: expected an object", what, line);
  scenario *sc = sim_malloc(sizeof *sc);
  scenario_init(sc);
  char *sctext = cJSON_PrintUnformatted(scj);
  char ctx[400];
  vfmt(ctx, sizeof ctx, "%s:%d: scenario", what, line);
  int rc = scenario_parse(sc, sctext, ctx, err);
  free(sctext);
  if (rc) {
    free(sc);
    return rc;
  }
  if (sc->trace_path[0]) {
    free(sc);
    return sim_errf(err, SIM_EINPUT, "%s:%d: scenario.workload.trace: not allowed: the workload comes from the result",
                    what, line);
  }
  if ((rc = user_configs(s, sc, what, line, err))) {
    free(sc);
    return rc;
  }
  vpoint *p = vset_add(s);
  p->user_sc = sc;
  p->src = VSRC_USER;
  p->shape = VSHAPE_OPEN;
  vfmt(p->where, sizeof p->where, "%s:%d", what, line);
  const char *name = jstr(rec, "name");
  vfmt(p->id, sizeof p->id, "user/%s", name ? name : "");
  if (!name) vfmt(p->id, sizeof p->id, "user/%d", (int)s->n);
  vdata__set_str(p->model, sizeof p->model, sc->model);
  vdata__set_str(p->gpu, sizeof p->gpu, sc->gpu);
  vdata__set_str(p->engine, sizeof p->engine, sc->engine);
  deploy_cfg sizes = sc->deploy;
  settings_fill(&sizes, NULL, SD_ONE); /* config/'s rule for the parallel sizes the record leaves unset */
  p->tp = sizes.tp;
  p->pp = sizes.pp;
  p->dp = sc->deploy.dp;
  if (jget(res, "time_to_first_token") || jget(res, "llm_metrics")) return user_genai(p, sc, scj, res, what, line, err);
  /* the workload, from the result */
  double np, mc, burst;
  if ((rc = jpos(res, "num_prompts", what, line, "result.", &np, err))) return rc;
  if (isnan(np) || np != floor(np) || np > 1e8)
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.num_prompts: expected a positive integer", what, line);
  p->num_prompts = (uint64_t)np;
  const cJSON *rr = jget(res, "request_rate");
  if (!rr || cJSON_IsNull(rr) || (cJSON_IsString(rr) && !strcasecmp(rr->valuestring, "inf")))
    p->request_rate = INFINITY;
  else if (cJSON_IsNumber(rr) && rr->valuedouble > 0)
    p->request_rate = rr->valuedouble;
  else
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.request_rate: expected a positive number or \"inf\"", what, line);
  if ((rc = jpos(res, "burstiness", what, line, "result.", &burst, err))) return rc;
  p->burstiness = isnan(burst) ? 1.0 : burst;
  if ((rc = jpos(res, "max_concurrency", what, line, "result.", &mc, err))) return rc;
  if (!isnan(mc) && (mc != floor(mc) || mc > 1e7))
    return sim_errf(err, SIM_EINPUT, "%s:%d: result.max_concurrency: expected a positive integer or null", what, line);
  p->concurrency = isnan(mc) ? 0 : (uint32_t)mc;
  if ((rc = user_lengths(p, sc, scj, res, what, line, err))) return rc;
  if ((rc = jpos(res, "mean_ttft_ms", what, line, "result.", &p->meas[VM_TTFT], err))) return rc;
  if ((rc = jpos(res, "mean_tpot_ms", what, line, "result.", &p->meas[VM_TPOT], err))) return rc;
  if ((rc = jpos(res, "output_throughput", what, line, "result.", &p->meas[VM_TPUT], err))) return rc;
  if (isnan(p->meas[VM_TTFT]) && isnan(p->meas[VM_TPOT]) && isnan(p->meas[VM_TPUT]))
    return sim_errf(err, SIM_EINPUT, "%s:%d: result: none of mean_ttft_ms, mean_tpot_ms, output_throughput", what,
                    line);
  vfmt(p->group, sizeof p->group, "user/%s/%s/%s/tp%u", p->model, p->gpu, p->engine, p->tp);
  return SIM_OK;
}

int vdata_parse_user(vset *s, const char *text, const char *what, sim_err *err) {
  char *fixed = fix_nonfinite(text);
  cJSON *root = json_parse(fixed, what, err);
  if (!root) {
    free(fixed);
    return SIM_EINPUT;
  }
  int rc = SIM_OK;
  if (cJSON_IsArray(root)) {
    int k = 0;
    const cJSON *rec;
    cJSON_ArrayForEach(rec, root) {
      rc = user_record(s, rec, what, json_elem_line(fixed, k), k, err);
      if (rc) break;
      k++;
    }
    if (!rc && k == 0) rc = sim_errf(err, SIM_EINPUT, "%s:1: empty array: no measurements", what);
  } else {
    rc = user_record(s, root, what, 1, 0, err);
  }
  cJSON_Delete(root);
  free(fixed);
  return rc;
}
