/* vopen.c: reader of Kubernetes inference-perf result directories (the
 * open-loop runs of ../shared/validation/openloop/, SOURCES.md): one
 * validation point per load stage (validate.h, VSHAPE_STAGED).
 *
 * Which file says what ran: config.yaml. inference-perf writes it from its
 * parsed config (Config.model_dump), so it holds exactly the fields the
 * version that ran knew, with their values after defaults; profile.yaml is
 * the config as requested. Where they disagree, config.yaml ran. The
 * published profiles ask for shared_prefix num_unique_system_prompts,
 * num_users_per_system_prompt and enable_multi_turn_chat, names the version
 * that ran (2025-10/11: its config.yaml has load.circuit_breakers and
 * load.request_timeout but no load.trace) did not have and dropped; it ran
 * its defaults, num_groups 10 x num_prompts_per_group 10, one request per
 * prompt in turn, no multi-turn chat. The measured prompts agree: each run's
 * mean input length has two decimals (591.63) and is the same in every
 * stage, as a mean over 100 prompts cycled whole times (3000, 6000 requests)
 * is. The differences go into a note on the points (vopen_run.profile_note).
 *
 * The measurement setup the directory does not record (SOURCES.md):
 * H100-SXM-80GB, vLLM v0.15.1 with its defaults (async scheduling on since
 * 0.14, chunked prefill, block size 16), gpu_memory_utilization 0.9, prefix
 * caching on, dtype auto (the model's torch_dtype). exp-config.yaml holds the
 * other server arguments.
 *
 * Files read:
 *   config.yaml (yamlx): api.type, api.streaming, data.type,
 *     data.shared_prefix.{num_groups, num_prompts_per_group,
 *     system_prompt_len, question_len, output_len}, load.type,
 *     load.interval, load.stages[].{rate, duration}, load.sweep,
 *     load.request_timeout, server.type, server.model_name,
 *     server.ignore_eos; other keys are inference-perf's and ignored.
 *   exp-config.yaml (yamlx, every key known: an unknown one could be a server
 *     argument this reader would silently drop): model, tensor_parallelism,
 *     max_model_len, max_num_batched_tokens, max_num_seqs, app.
 *   stage_<K>_lifecycle_metrics.json (jsonx), exactly K = 0..stages-1:
 *     load_summary.{count, requested_rate}, successes.count,
 *     successes.latency.time_to_first_token.{mean, p99},
 *     successes.latency.request_latency.mean,
 *     successes.throughput.{input_tokens_per_sec, requests_per_sec},
 *     failures.count (latencies may be null when nothing succeeded).
 *   profile.yaml (JSON, optional): data.shared_prefix, compared.
 * The client timeout is load.request_timeout or, when null, aiohttp's default
 * ClientTimeout (total 300 s), which inference-perf's client then uses; every
 * published failure ended at 300.0-301.0 s.
 * The rebuilt prompt length is the measured mean input length, rounded (the
 * tokenizer's decode/encode round trip of random token ids, the joining space
 * and BOS add 4-5% to system_prompt_len + question_len); the system prompt
 * is scaled by the same ratio. Without any answered request, the nominal
 * lengths are used. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/jsonx.h"
#include "config/yamlx.h"
#include "validate/validate.h"

#define VOPEN_GPU "h100-sxm"
#define VOPEN_ENGINE "vllm"
#define VOPEN_ENGINE_VERSION "0.15.1" /* SOURCES.md: vLLM v0.15.1 */
#define VOPEN_AIOHTTP_TIMEOUT_S 300.0
#define VOPEN_MAX_TOKENS 10000000u

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* "stage_<K>_lifecycle_metrics.json" -> K (false for any other name). */
static bool stage_file_index(const char *name, uint32_t *k) {
  const char *pre = "stage_", *suf = "_lifecycle_metrics.json";
  size_t n = strlen(name), lp = strlen(pre), ls = strlen(suf);
  if (n <= lp + ls || strncmp(name, pre, lp) || strcmp(name + n - ls, suf)) return false;
  uint64_t v = 0;
  for (size_t i = lp; i < n - ls; i++) {
    if (name[i] < '0' || name[i] > '9' || v > 100000) return false;
    v = v * 10 + (uint64_t)(name[i] - '0');
  }
  *k = (uint32_t)v;
  return true;
}

/* Highest stage index + 1 of the stage files in dir (0 when none). */
static uint32_t stage_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  uint32_t n = 0, k;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (stage_file_index(e->d_name, &k) && k + 1 > n) n = k + 1;
  closedir(d);
  return n;
}

bool vopen_is_result_dir(const char *dir) {
  char a[2048], b[2048];
  vfmt(a, sizeof a, "%s/config.yaml", dir);
  vfmt(b, sizeof b, "%s/profile.yaml", dir);
  return (file_exists(a) || file_exists(b)) && stage_files(dir) > 0;
}

/* ---- config.yaml ----------------------------------------------------------------- */

/* Reads a stage list; r->n_stages and the rates and durations. */
static int read_stages(const yx_doc *d, const yx_node *load, vopen_run *r) {
  const yx_node *stages;
  int rc = yx_need(d, load, "load", "stages", YX_SEQ, &stages);
  if (rc) return rc;
  if (stages->n == 0) return yx_fail(d, stages, "load", "stages", "empty: no load stage");
  if (stages->n > VSTAGE_MAX) return yx_fail(d, stages, "load", "stages", "%u stages: at most %d", stages->n, VSTAGE_MAX);
  r->n_stages = stages->n;
  for (uint32_t k = 0; k < stages->n; k++) {
    const yx_node *it = yx_item(stages, k);
    char path[32];
    vfmt(path, sizeof path, "load.stages[%u]", k);
    char b[96];
    if (it->kind != YX_MAP) return yx_fail(d, it, path, NULL, "expected a mapping, got %s", yx_describe(it, b, sizeof b));
    if ((rc = yx_need_num(d, it, path, "rate", 0, 1e6, &r->rate_per_s[k]))) return rc;
    if ((rc = yx_need_num(d, it, path, "duration", 0, 1e7, &r->duration_s[k]))) return rc;
    if (!(r->rate_per_s[k] > 0)) return yx_fail(d, yx_get(it, "rate"), path, "rate", "must be > 0");
    if (!(r->duration_s[k] > 0)) return yx_fail(d, yx_get(it, "duration"), path, "duration", "must be > 0");
    if (floor(r->rate_per_s[k] * r->duration_s[k]) < 1)
      return yx_fail(d, it, path, NULL, "rate x duration is below one request");
  }
  return SIM_OK;
}

/* data.shared_prefix: the five lengths; another key is a feature this reader
 * does not rebuild (skip). */
static int read_shared_prefix(const yx_doc *d, const yx_node *data, vopen_run *r, char *skip, size_t ns) {
  static const char *const known[] = {"num_groups", "num_prompts_per_group", "system_prompt_len", "question_len",
                                       "output_len"};
  const yx_node *sp;
  int rc = yx_need(d, data, "data", "shared_prefix", YX_MAP, &sp);
  const char *p = "data.shared_prefix";
  if (!rc) rc = yx_need_u32(d, sp, p, known[0], 1, 1000, &r->n_groups);
  if (!rc) rc = yx_need_u32(d, sp, p, known[1], 1, 1000, &r->prompts_per_group);
  if (!rc) rc = yx_need_u32(d, sp, p, known[2], 0, VOPEN_MAX_TOKENS, &r->system_prompt_tokens);
  if (!rc) rc = yx_need_u32(d, sp, p, known[3], 0, VOPEN_MAX_TOKENS, &r->question_tokens);
  if (!rc) rc = yx_need_u32(d, sp, p, known[4], 1, VOPEN_MAX_TOKENS, &r->output_tokens);
  if (rc) return rc;
  if (r->system_prompt_tokens + r->question_tokens == 0)
    return yx_fail(d, sp, p, NULL, "system_prompt_len + question_len is 0: an empty prompt");
  for (const yx_node *m = sp->child; m && !skip[0]; m = m->next) {
    bool ok = false;
    for (size_t i = 0; i < SIM_ARRAY_LEN(known); i++) ok |= !strcmp(m->key, known[i]);
    if (!ok)
      vfmt(skip, ns, "%s:%d: data.shared_prefix.%s: not rebuilt (the reader knows num_groups, num_prompts_per_group, "
                     "system_prompt_len, question_len, output_len)", d->what, m->line, m->key);
  }
  return SIM_OK;
}

static int read_config_doc(const yx_doc *d, vopen_run *r, char *skip, size_t ns) {
  const yx_node *root = d->root, *api, *data, *load, *server, *v;
  char b[96], api_type[32], data_type[64], load_type[32], server_type[32];
  if (!root || root->kind != YX_MAP)
    return yx_fail(d, root, NULL, NULL, "expected a mapping (inference-perf's config), got %s", yx_describe(root, b, sizeof b));
  bool streaming, ignore_eos;
  int rc = yx_need(d, root, NULL, "api", YX_MAP, &api);
  if (!rc) rc = yx_need_str(d, api, "api", "type", api_type, sizeof api_type);
  if (!rc) rc = yx_need_bool(d, api, "api", "streaming", &streaming);
  if (!rc) rc = yx_need(d, root, NULL, "data", YX_MAP, &data);
  if (!rc) rc = yx_need_str(d, data, "data", "type", data_type, sizeof data_type);
  if (!rc) rc = yx_need(d, root, NULL, "load", YX_MAP, &load);
  if (!rc) rc = yx_need_str(d, load, "load", "type", load_type, sizeof load_type);
  if (!rc) rc = read_stages(d, load, r);
  if (!rc) rc = yx_need_num(d, load, "load", "interval", 0, 3600, &r->interval_s);
  if (!rc) rc = yx_need(d, root, NULL, "server", YX_MAP, &server);
  if (!rc) rc = yx_need_str(d, server, "server", "type", server_type, sizeof server_type);
  if (!rc) rc = yx_need_str(d, server, "server", "model_name", r->model_label, sizeof r->model_label);
  if (!rc) rc = yx_need_bool(d, server, "server", "ignore_eos", &ignore_eos);
  if (rc) return rc;
  r->timeout_s = VOPEN_AIOHTTP_TIMEOUT_S;
  if (!yx_is_null(v = yx_get(load, "request_timeout"))) {
    if ((rc = yx_need_num(d, load, "load", "request_timeout", 0, 1e7, &r->timeout_s))) return rc;
    if (!(r->timeout_s > 0)) return yx_fail(d, v, "load", "request_timeout", "must be > 0");
  }
  if (strcmp(api_type, "completion"))
    vfmt(skip, ns, "api.type %s: the chat API wraps prompts in a chat template the data does not count", api_type);
  else if (!streaming) vfmt(skip, ns, "api.streaming false: the stream's first token is what TTFT measures");
  else if (strcmp(data_type, "shared_prefix")) vfmt(skip, ns, "data.type %s: only shared_prefix data is rebuilt", data_type);
  else if (strcmp(load_type, "constant")) vfmt(skip, ns, "load.type %s: only constant load stages are rebuilt", load_type);
  else if (!yx_is_null(v = yx_get(load, "sweep")))
    vfmt(skip, ns, "load.sweep (line %d): stages from a saturation sweep are not in the data", v->line);
  else if (strcmp(server_type, VOPEN_ENGINE)) vfmt(skip, ns, "server.type %s: no servesim engine profile", server_type);
  else if (!ignore_eos) vfmt(skip, ns, "server.ignore_eos false: output lengths set by the model's EOS are not in the data");
  if (!strcmp(data_type, "shared_prefix")) rc = read_shared_prefix(d, data, r, skip, ns);
  return rc;
}

static int read_yaml_file(const char *path, int (*fn)(const yx_doc *, void *, void *, size_t), void *a, void *b,
                          size_t n, sim_err *err) {
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  yx_doc d;
  rc = yx_parse(&d, text, path, err);
  if (!rc) rc = fn(&d, a, b, n);
  yx_free(&d);
  free(text);
  return rc;
}

static int config_cb(const yx_doc *d, void *r, void *skip, size_t ns) { return read_config_doc(d, r, skip, ns); }

/* ---- exp-config.yaml --------------------------------------------------------------- */

static int exp_cb(const yx_doc *d, void *rv, void *tpv, size_t n) {
  (void)n;
  vopen_run *r = rv;
  static const char *const known[] = {"model", "tensor_parallelism", "max_model_len", "max_num_batched_tokens",
                                      "max_num_seqs", "app"};
  const yx_node *root = d->root;
  char b[96], model[128];
  if (!root || root->kind != YX_MAP)
    return yx_fail(d, root, NULL, NULL, "expected a mapping of server arguments, got %s", yx_describe(root, b, sizeof b));
  for (const yx_node *m = root->child; m; m = m->next) {
    bool ok = false;
    for (size_t i = 0; i < SIM_ARRAY_LEN(known); i++) ok |= !strcmp(m->key, known[i]);
    if (!ok)
      return yx_fail(d, m, NULL, m->key, "unknown key (known: model, tensor_parallelism, max_model_len, "
                                         "max_num_batched_tokens, max_num_seqs, app): a server argument this reader "
                                         "would not apply");
  }
  int rc = yx_need_str(d, root, NULL, "model", model, sizeof model);
  if (!rc) rc = yx_need_u32(d, root, NULL, "tensor_parallelism", 1, 1024, tpv);
  if (!rc) rc = yx_need_u32(d, root, NULL, "max_model_len", 1, VOPEN_MAX_TOKENS, &r->max_model_len);
  if (!rc) rc = yx_need_u32(d, root, NULL, "max_num_batched_tokens", 1, VOPEN_MAX_TOKENS, &r->max_num_batched_tokens);
  if (!rc) rc = yx_need_u32(d, root, NULL, "max_num_seqs", 1, 1000000, &r->max_num_seqs);
  if (rc) return rc;
  if (strcmp(model, r->model_label))
    return yx_fail(d, yx_get(root, "model"), NULL, "model", "'%s' differs from config.yaml's server.model_name '%s'",
                   model, r->model_label);
  return SIM_OK;
}

/* ---- stage files --------------------------------------------------------------------- */

static int jneed_obj(const jx *j, const cJSON *o, const char *where, const char *key, const cJSON **out) {
  int rc = jx_obj(j, o, where, key, out);
  if (!rc && !*out) rc = jx_fail(j, o, where, key, "missing");
  return rc;
}

static int jneed_num(const jx *j, const cJSON *o, const char *where, const char *key, double *out) {
  *out = NAN;
  int rc = jx_num(j, o, where, key, out, 0, 1e300, 0);
  if (!rc && isnan(*out)) rc = jx_fail(j, o, where, key, "missing");
  return rc;
}

static int jneed_count(const jx *j, const cJSON *o, const char *where, const char *key, uint64_t *out) {
  uint32_t v = UINT32_MAX;
  int rc = jx_u32(j, o, where, key, &v, 0, 1e9, 0);
  if (!rc && !cJSON_GetObjectItemCaseSensitive(o, key)) rc = jx_fail(j, o, where, key, "missing");
  *out = v;
  return rc;
}

/* One stage file into the stage's measured outcome and metrics (ms). */
static int stage_doc(const jx *j, const vopen_run *r, uint32_t k, vstage_out *o, double meas[VM_COUNT]) {
  const cJSON *root = j->root, *ls, *su, *fa, *lat, *tt, *rl, *tp;
  double req_rate, in_tps, rps;
  uint64_t fails;
  for (int m = 0; m < VM_COUNT; m++) meas[m] = NAN;
  int rc = jneed_obj(j, root, NULL, "load_summary", &ls);
  if (!rc) rc = jneed_count(j, ls, "load_summary", "count", &o->sent);
  if (!rc) rc = jneed_num(j, ls, "load_summary", "requested_rate", &req_rate);
  if (!rc) rc = jneed_obj(j, root, NULL, "successes", &su);
  if (!rc) rc = jneed_count(j, su, "successes", "count", &o->ok);
  if (!rc) rc = jneed_obj(j, root, NULL, "failures", &fa);
  if (!rc) rc = jneed_count(j, fa, "failures", "count", &fails);
  if (rc) return rc;
  if (fabs(req_rate - r->rate_per_s[k]) > 1e-9 * r->rate_per_s[k])
    return jx_fail(j, cJSON_GetObjectItemCaseSensitive(ls, "requested_rate"), "load_summary", "requested_rate",
                   "%g, but config.yaml's load.stages[%u].rate is %g", req_rate, k, r->rate_per_s[k]);
  if (o->ok + fails != o->sent)
    return jx_fail(j, su, "successes", "count", "%llu successes + %llu failures != load_summary.count %llu",
                   (unsigned long long)o->ok, (unsigned long long)fails, (unsigned long long)o->sent);
  o->served_rate = 0;
  o->mean_input_tokens = NAN;
  if (!o->ok) return SIM_OK; /* nothing answered: no latencies (null in the file) */
  if ((rc = jneed_obj(j, su, "successes", "latency", &lat))) return rc;
  if ((rc = jneed_obj(j, lat, "successes.latency", "time_to_first_token", &tt))) return rc;
  if ((rc = jneed_obj(j, lat, "successes.latency", "request_latency", &rl))) return rc;
  if ((rc = jneed_obj(j, su, "successes", "throughput", &tp))) return rc;
  if ((rc = jneed_num(j, tt, "successes.latency.time_to_first_token", "mean", &meas[VM_TTFT]))) return rc;
  if ((rc = jneed_num(j, tt, "successes.latency.time_to_first_token", "p99", &meas[VM_TTFT_P99]))) return rc;
  if ((rc = jneed_num(j, tt, "successes.latency.time_to_first_token", "median", &meas[VM_TTFT_MED]))) return rc;
  if ((rc = jneed_num(j, rl, "successes.latency.request_latency", "mean", &meas[VM_E2E]))) return rc;
  if ((rc = jneed_num(j, tp, "successes.throughput", "input_tokens_per_sec", &in_tps))) return rc;
  if ((rc = jneed_num(j, tp, "successes.throughput", "requests_per_sec", &rps))) return rc;
  if (!(rps > 0)) return jx_fail(j, tp, "successes.throughput", "requests_per_sec", "0 with %llu successes",
                                 (unsigned long long)o->ok);
  meas[VM_TTFT] *= 1000.0, meas[VM_TTFT_P99] *= 1000.0, meas[VM_E2E] *= 1000.0, meas[VM_TTFT_MED] *= 1000.0;
  o->served_rate = rps;
  o->mean_input_tokens = in_tps / rps;
  return SIM_OK;
}

static int read_stage(const char *dir, const vopen_run *r, uint32_t k, vstage_out *o, double meas[VM_COUNT],
                      sim_err *err) {
  char path[2048];
  vfmt(path, sizeof path, "%s/stage_%u_lifecycle_metrics.json", dir, k);
  if (!file_exists(path))
    return sim_errf(err, SIM_EINPUT, "%s: missing: %s/config.yaml has %u load stages", path, dir, r->n_stages);
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  jx j;
  rc = jx_parse(&j, text, path, err);
  if (!rc) rc = stage_doc(&j, r, k, o, meas);
  jx_free(&j);
  free(text);
  return rc;
}

/* ---- profile.yaml: what was asked for ------------------------------------------------- */

static void print_value(const cJSON *v, char *buf, size_t n) {
  if (cJSON_IsNumber(v)) vfmt(buf, n, "%g", v->valuedouble);
  else if (cJSON_IsBool(v)) vfmt(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsString(v)) vfmt(buf, n, "%s", v->valuestring);
  else vfmt(buf, n, "(%s)", jx_type_name(v));
}

/* Notes the shared_prefix fields of profile.yaml that config.yaml lacks or
 * sets otherwise. */
static int read_profile(const char *dir, vopen_run *r, sim_err *err) {
  char path[2048];
  vfmt(path, sizeof path, "%s/profile.yaml", dir);
  if (!file_exists(path)) return SIM_OK;
  char *text = NULL;
  int rc = sim_read_file(path, &text, NULL, err);
  if (rc) return rc;
  jx j;
  if ((rc = jx_parse(&j, text, path, err))) {
    free(text);
    return sim_err_prefix(err, "profile.yaml is read as the JSON inference-sim writes");
  }
  const cJSON *data = NULL, *sp = NULL;
  rc = jx_obj(&j, j.root, NULL, "data", &data);
  if (!rc && data) rc = jx_obj(&j, data, "data", "shared_prefix", &sp);
  const struct {
    const char *key;
    uint32_t v;
  } ran[] = {{"num_groups", r->n_groups},
             {"num_prompts_per_group", r->prompts_per_group},
             {"system_prompt_len", r->system_prompt_tokens},
             {"question_len", r->question_tokens},
             {"output_len", r->output_tokens}};
  char lacks[320] = "", differs[320] = "";
  for (const cJSON *m = sp ? sp->child : NULL; m && !rc; m = m->next) {
    char val[64], one[128];
    print_value(m, val, sizeof val);
    size_t i = 0;
    while (i < SIM_ARRAY_LEN(ran) && strcmp(ran[i].key, m->string)) i++;
    if (i == SIM_ARRAY_LEN(ran)) {
      vfmt(one, sizeof one, "%s%s=%s", lacks[0] ? ", " : "", m->string, val);
      strncat(lacks, one, sizeof lacks - strlen(lacks) - 1);
    } else if (!cJSON_IsNumber(m) || m->valuedouble != ran[i].v) {
      vfmt(one, sizeof one, "%s%s=%s (ran %u)", differs[0] ? ", " : "", m->string, val, ran[i].v);
      strncat(differs, one, sizeof differs - strlen(differs) - 1);
    }
  }
  if (!rc && (lacks[0] || differs[0]))
    vfmt(r->profile_note, sizeof r->profile_note,
         "profile.yaml asked for shared_prefix %s%s%s%s; config.yaml (what ran) has num_groups=%u, "
         "num_prompts_per_group=%u%s",
         lacks, lacks[0] ? " (fields this inference-perf did not have: dropped)" : "", lacks[0] && differs[0] ? ", " : "",
         differs, r->n_groups, r->prompts_per_group, strstr(lacks, "multi_turn") ? " and no multi-turn chat" : "");
  jx_free(&j);
  free(text);
  return rc;
}

/* ---- the points ------------------------------------------------------------------------- */

/* The rebuilt lengths (header comment). */
static void rebuild_lengths(vopen_run *r, const vstage_out *o) {
  double sum = 0, n = 0;
  for (uint32_t k = 0; k < r->n_stages; k++)
    if (o[k].ok) sum += o[k].mean_input_tokens * (double)o[k].ok, n += (double)o[k].ok;
  uint32_t nominal = r->system_prompt_tokens + r->question_tokens;
  r->meas_input_tokens = n > 0 ? sum / n : NAN;
  r->prompt_tokens = nominal;
  r->shared_tokens = r->system_prompt_tokens;
  if (n > 0 && nominal && r->meas_input_tokens >= 1 && r->meas_input_tokens < VOPEN_MAX_TOKENS) {
    r->prompt_tokens = (uint32_t)floor(r->meas_input_tokens + 0.5);
    r->shared_tokens = (uint32_t)floor(r->system_prompt_tokens * r->meas_input_tokens / nominal + 0.5);
    if (r->shared_tokens > r->prompt_tokens) r->shared_tokens = r->prompt_tokens;
  }
}

static void add_points(vset *s, const vopen_run *r, uint32_t tp, const vstage_out *o, double meas[][VM_COUNT],
                       const char *skip) {
  char why[320];
  const char *model = vres_model(vset_resolver(s), r->model_label, why, sizeof why);
  model_cfg mc;
  sim_err me = {0, ""};
  bool model_ok = model && !cfg_model_load(&mc, model, &me);
  for (uint32_t k = 0; k < r->n_stages; k++) {
    vpoint *p = vset_add(s);
    p->src = VSRC_INFPERF;
    p->shape = VSHAPE_STAGED;
    vfmt(p->id, sizeof p->id, "infperf/%s/stage%u", r->name, k);
    vfmt(p->where, sizeof p->where, "%s/stage_%u_lifecycle_metrics.json:1", r->dir, k);
    vfmt(p->model, sizeof p->model, "%s", model ? model : "");
    vfmt(p->gpu, sizeof p->gpu, "%s", VOPEN_GPU);
    vfmt(p->engine, sizeof p->engine, "%s", VOPEN_ENGINE);
    vfmt(p->engine_version, sizeof p->engine_version, "%s", VOPEN_ENGINE_VERSION);
    vfmt(p->group, sizeof p->group, "infperf/%s", r->name);
    p->tp = tp;
    if (model_ok) p->act_dtype = p->weight_dtype = p->kv_dtype = mc.native_dtype;
    p->isl = r->prompt_tokens, p->osl = r->output_tokens;
    p->num_prompts = o[k].sent;
    p->request_rate = r->rate_per_s[k];
    for (int m = 0; m < VM_COUNT; m++) p->meas[m] = meas[k][m];
    p->staged = sim_calloc(1, sizeof *p->staged);
    p->staged->run = *r;
    p->staged->stage = k;
    p->staged->meas = o[k];
    p->staged->meas.kept_up = vstage_kept_up(o[k].served_rate, r->rate_per_s[k], meas[k][VM_TTFT_P99], r->duration_s[k]);
    p->staged->pred.served_rate = p->staged->pred.mean_input_tokens = NAN;
    if (skip[0]) vfmt(p->skip, sizeof p->skip, "%s", skip);
    else if (!model && why[0]) vfmt(p->skip, sizeof p->skip, "%s: %s", r->model_label, why);
    else if (!model) vfmt(p->skip, sizeof p->skip, "no servesim model config for %s (add one with --models DIR)", r->model_label);
    else if (!model_ok) vfmt(p->skip, sizeof p->skip, "model %s: %s", model, me.msg);
  }
}

int vdata_read_infperf(vset *s, const char *dir, sim_err *err) {
  vopen_run *r = sim_calloc(1, sizeof *r);
  vfmt(r->dir, sizeof r->dir, "%s", dir);
  const char *base = strrchr(dir, '/');
  vfmt(r->name, sizeof r->name, "%s", base && base[1] ? base + 1 : dir);
  char path[2048], skip[256] = "";
  uint32_t tp = 1;
  vstage_out o[VSTAGE_MAX];
  double meas[VSTAGE_MAX][VM_COUNT];
  memset(o, 0, sizeof o);
  vfmt(path, sizeof path, "%s/config.yaml", dir);
  int rc = SIM_OK;
  if (!file_exists(path))
    rc = sim_errf(err, SIM_EINPUT, "%s: missing: the expanded config inference-perf ran (profile.yaml is what was "
                                   "asked for, and versions differ in what they take from it)", path);
  if (!rc) rc = read_yaml_file(path, config_cb, r, skip, sizeof skip, err);
  uint32_t files = rc ? 0 : stage_files(dir);
  if (!rc && files > r->n_stages)
    rc = sim_errf(err, SIM_EINPUT, "%s/stage_%u_lifecycle_metrics.json: a stage that %s does not configure (%u stages)",
                  dir, files - 1, path, r->n_stages);
  if (!rc) {
    vfmt(path, sizeof path, "%s/exp-config.yaml", dir);
    if (!file_exists(path)) rc = sim_errf(err, SIM_EINPUT, "%s: missing: the server's arguments", path);
    else rc = read_yaml_file(path, exp_cb, r, &tp, 0, err);
  }
  for (uint32_t k = 0; k < r->n_stages && !rc; k++) rc = read_stage(dir, r, k, &o[k], meas[k], err);
  if (!rc) rc = read_profile(dir, r, err);
  if (!rc) {
    rebuild_lengths(r, o);
    add_points(s, r, tp, o, meas, skip);
  }
  free(r);
  return rc;
}
