/* specdec.c: --speculative-config and the acceptance distribution (specdec.h). */
#include "config/specdec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/engver.h"
#include "config/jsonx.h"
#include "core/embed.h"

#define TABLE_PATH "configs/specdec/acceptance.json"

static const struct {
  const char *name;
  spec_method m;
} METHODS[] = {{"none", SPEC_NONE},   {"eagle", SPEC_EAGLE}, {"eagle3", SPEC_EAGLE3},
               {"mtp", SPEC_MTP},     {"deepseek_mtp", SPEC_MTP}, {"ngram", SPEC_NGRAM},
               {"draft_model", SPEC_DRAFT_MODEL}};

const char *spec_method_name(spec_method m) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(METHODS); i++)
    if (METHODS[i].m == m) return METHODS[i].name;
  return "?";
}

bool spec_method_parse(const char *t, spec_method *m) {
  for (size_t i = 0; i < SIM_ARRAY_LEN(METHODS); i++)
    if (!strcmp(t, METHODS[i].name)) return *m = METHODS[i].m, true;
  return false;
}

/* ---- the flag's JSON -------------------------------------------------------------------------------------- */

static bool fail(char *why, size_t n, const char *fmt, const char *key, const char *more) {
  snprintf(why, n, fmt, key, more);
  return false;
}

static bool get_uint(const cJSON *v, const char *key, uint32_t lo, uint32_t hi, uint32_t *dst, char *why, size_t n) {
  char range[64];
  snprintf(range, sizeof range, "[%u, %u]", lo, hi);
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
    return fail(why, n, "%s: expected an integer in %s", key, range);
  *dst = (uint32_t)v->valuedouble;
  return true;
}

bool specdec_parse(deploy_cfg *d, const char *text, char *why, size_t n) {
  cJSON *root = cJSON_ParseWithOpts(text, NULL, 1); /* nothing after the object */
  if (!root || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    snprintf(why, n, "expected a JSON object such as '{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}'");
    return false;
  }
  deploy_cfg t = *d; /* all or nothing */
  t.spec_n_rates = 0;
  t.spec_accept_length = -1;
  bool ok = true;
  const cJSON *v;
  cJSON_ArrayForEach(v, root) {
    const char *k = v->string;
    if (!strcmp(k, "method")) {
      if (!cJSON_IsString(v) || !spec_method_parse(v->valuestring, &t.spec_method))
        ok = fail(why, n, "%s: expected one of %s", k, "eagle, eagle3, mtp, deepseek_mtp, ngram, draft_model");
    } else if (!strcmp(k, "num_speculative_tokens")) {
      ok = get_uint(v, k, 1, SPEC_MAX_K, &t.num_speculative_tokens, why, n);
    } else if (!strcmp(k, "draft_tensor_parallel_size")) {
      ok = get_uint(v, k, 1, 64, &t.spec_draft_tp, why, n);
    } else if (!strcmp(k, "draft_vocab_size")) {
      ok = get_uint(v, k, 1, 16777216, &t.spec_draft_vocab, why, n);
    } else if (!strcmp(k, "disable_by_batch_size") || !strcmp(k, "max_concurrency")) {
      ok = get_uint(v, k, 1, 1000000, &t.spec_disable_bs, why, n);
    } else if (!strcmp(k, "model")) {
      if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof t.spec_model)
        ok = fail(why, n, "%s: expected a model name (at most %s characters)", k, "95");
      else snprintf(t.spec_model, sizeof t.spec_model, "%s", v->valuestring);
    } else if (!strcmp(k, "dataset")) {
      if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof t.spec_dataset)
        ok = fail(why, n, "%s: expected a dataset name of the acceptance table (%s)", k, TABLE_PATH);
      else snprintf(t.spec_dataset, sizeof t.spec_dataset, "%s", v->valuestring);
    } else if (!strcmp(k, "acceptance_length") || !strcmp(k, "synthetic_acceptance_length")) {
      if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || !isfinite(v->valuedouble))
        ok = fail(why, n, "%s: expected a number >= 1 (mean tokens per step, the bonus token included)%s", k, "");
      else t.spec_accept_length = v->valuedouble;
    } else if (!strcmp(k, "acceptance_rates") || !strcmp(k, "synthetic_acceptance_rates")) {
      int len = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
      if (len < 1 || len > SPEC_MAX_K) {
        ok = fail(why, n, "%s: expected an array of 1 to 16 numbers in [0, 1]%s", k, "");
      } else {
        for (int i = 0; ok && i < len; i++) {
          const cJSON *x = cJSON_GetArrayItem(v, i);
          char at[48];
          snprintf(at, sizeof at, "[%d]", i);
          if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 1))
            ok = fail(why, n, "%s%s: expected a number in [0, 1]", k, at);
          else if (i > 0 && x->valuedouble > t.spec_rates[i - 1])
            ok = fail(why, n, "%s%s: the rates are unconditional (position i accepted only with 1..i-1): they cannot "
                      "grow", k, at);
          else t.spec_rates[i] = x->valuedouble;
        }
        t.spec_n_rates = (uint32_t)len;
      }
    } else if (!strcmp(k, "prompt_lookup_max") || !strcmp(k, "prompt_lookup_min")) {
      uint32_t ignored; /* ngram's window: the acceptance measured with it says what it does */
      ok = get_uint(v, k, 1, 1024, &ignored, why, n);
    } else {
      ok = fail(why, n, "%s: unknown key (known: %s)", k,
                "method, num_speculative_tokens, model, draft_tensor_parallel_size, draft_vocab_size, disable_by_batch_size, "
                "acceptance_rates, acceptance_length, dataset, prompt_lookup_max, prompt_lookup_min");
    }
    if (!ok) break;
  }
  if (ok && t.spec_n_rates && t.spec_accept_length >= 0)
    ok = fail(why, n, "%s: give acceptance_rates or acceptance_length, not both%s", "acceptance_length", "");
  cJSON_Delete(root);
  if (ok) *d = t;
  return ok;
}

void specdec_json_text(const deploy_cfg *d, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "{\"method\":\"%s\"", spec_method_name(d->spec_method));
#define ADD(...) \
  if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__)
  if (d->num_speculative_tokens) ADD(",\"num_speculative_tokens\":%u", d->num_speculative_tokens);
  if (d->spec_model[0]) ADD(",\"model\":\"%s\"", d->spec_model);
  if (d->spec_draft_tp) ADD(",\"draft_tensor_parallel_size\":%u", d->spec_draft_tp);
  if (d->spec_draft_vocab) ADD(",\"draft_vocab_size\":%u", d->spec_draft_vocab);
  if (d->spec_disable_bs) ADD(",\"disable_by_batch_size\":%u", d->spec_disable_bs);
  if (d->spec_dataset[0]) ADD(",\"dataset\":\"%s\"", d->spec_dataset);
  if (d->spec_accept_length >= 0) ADD(",\"acceptance_length\":%.17g", d->spec_accept_length);
  if (d->spec_n_rates) {
    ADD(",\"acceptance_rates\":[");
    for (uint32_t i = 0; i < d->spec_n_rates; i++) ADD("%s%.17g", i ? "," : "", d->spec_rates[i]);
    ADD("]");
  }
  ADD("}");
#undef ADD
}

/* ---- acceptance ------------------------------------------------------------------------------------------- */

double specdec_expected_tokens(const double *rates, uint32_t k) {
  double e = 1;
  for (uint32_t i = 0; i < k; i++) e += rates[i];
  return e;
}

static uint64_t mix(uint64_t z) { /* splitmix64's finalizer */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double specdec_uniform(uint64_t seed, uint64_t id, uint64_t pos) {
  uint64_t h = mix(seed + 0x9e3779b97f4a7c15ULL);
  h = mix(h ^ (id + 1) * 0x9e3779b97f4a7c15ULL);
  h = mix(h ^ (pos + 1) * 0xc2b2ae3d27d4eb4fULL);
  return (double)(h >> 11) * 0x1.0p-53;
}

/* The constant conditional rate a with a + a^2 + ... + a^k = L - 1 (bisection: the sum grows with a). */
static double geometric_rate(double L, uint32_t k) {
  double lo = 0, hi = 1;
  for (int it = 0; it < 100; it++) {
    double a = (lo + hi) / 2, s = 0, p = 1;
    for (uint32_t i = 0; i < k; i++) s += (p *= a);
    if (s < L - 1) lo = a;
    else hi = a;
  }
  return (lo + hi) / 2;
}

/* Unconditional rates u[0..n) extended to k positions at the last conditional rate u_n / u_(n-1). */
static void extend(double *u, uint32_t n, uint32_t k) {
  double c = n >= 2 ? (u[n - 2] > 0 ? u[n - 1] / u[n - 2] : 0) : u[0];
  for (uint32_t i = n; i < k; i++) u[i] = u[i - 1] * c;
}

static bool model_matches(const cJSON *models, const model_cfg *m) {
  const cJSON *x;
  cJSON_ArrayForEach(x, models) if (cJSON_IsString(x) && (!strcasecmp(x->valuestring, m->name) ||
                                                           cfg_model_has_alias(m, x->valuestring))) return true;
  return false;
}

/* The first entry of the table for this method and model (and dataset, if given), its rates in d. */
static int from_table(deploy_cfg *d, const model_cfg *m, uint32_t k, sim_err *err) {
  const sim_embedded_file *f = sim_embed_find(TABLE_PATH);
  if (!f) return sim_errf(err, SIM_EINTERNAL, "%s: not embedded", TABLE_PATH);
  jx j;
  int rc = jx_parse(&j, f->data, TABLE_PATH, err);
  if (rc) return rc;
  const cJSON *entries = cJSON_GetObjectItemCaseSensitive(j.root, "entries"), *e;
  const char *method = spec_method_name(d->spec_method);
  char seen[400] = "";
  size_t ks = 0;
  cJSON_ArrayForEach(e, entries) {
    const cJSON *me = cJSON_GetObjectItemCaseSensitive(e, "method");
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(e, "dataset");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
    if (!cJSON_IsString(me) || !cJSON_IsString(ds) || !cJSON_IsString(id)) {
      rc = jx_fail(&j, e, "entries", NULL, "an entry needs id, method and dataset strings");
      break;
    }
    if (strcmp(me->valuestring, method) && !(d->spec_method == SPEC_MTP && !strcmp(me->valuestring, "mtp"))) continue;
    if (!model_matches(cJSON_GetObjectItemCaseSensitive(e, "models"), m)) continue;
    if (ks < sizeof seen) ks += (size_t)snprintf(seen + ks, sizeof seen - ks, "%s%s", ks ? ", " : "", ds->valuestring);
    if (d->spec_dataset[0] && strcmp(d->spec_dataset, ds->valuestring)) continue;
    const cJSON *ur = cJSON_GetObjectItemCaseSensitive(e, "acceptance_rates");
    const cJSON *cr = cJSON_GetObjectItemCaseSensitive(e, "conditional_rates");
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(e, "acceptance_length");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "at_k");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source");
    double u[SPEC_MAX_K] = {0};
    uint32_t nm = 0; /* measured positions */
    const char *how;
    if (cJSON_IsArray(ur) || cJSON_IsArray(cr)) {
      const cJSON *a = cJSON_IsArray(ur) ? ur : cr, *x;
      double p = 1;
      cJSON_ArrayForEach(x, a) {
        if (nm >= SPEC_MAX_K || !cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 1) {
          rc = jx_fail(&j, x, "entries", id->valuestring, "rates: numbers in [0, 1], at most 16");
          break;
        }
        u[nm] = a == ur ? x->valuedouble : (p *= x->valuedouble);
        nm++;
      }
      if (rc) break;
      how = a == ur ? "per-position rates" : "conditional rates";
      if (nm < k) extend(u, nm, k);
    } else if (cJSON_IsNumber(len) && cJSON_IsNumber(at) && at->valuedouble >= 1 && at->valuedouble <= SPEC_MAX_K &&
               len->valuedouble >= 1 && len->valuedouble <= at->valuedouble + 1) {
      double a = geometric_rate(len->valuedouble, (uint32_t)at->valuedouble);
      u[0] = a;
      for (uint32_t i = 1; i < k; i++) u[i] = u[i - 1] * a;
      nm = (uint32_t)at->valuedouble;
      how = "mean acceptance length, constant conditional rate";
    } else {
      rc = jx_fail(&j, e, "entries", id->valuestring,
                   "needs acceptance_rates, conditional_rates, or acceptance_length with at_k (1..16, length <= at_k + 1)");
      break;
    }
    memcpy(d->spec_rates, u, sizeof u);
    snprintf(d->spec_source, sizeof d->spec_source, "%s (%s, %s; %s)%s", id->valuestring, how, TABLE_PATH,
             cJSON_IsString(src) ? src->valuestring : "no source", k > nm ? " [positions beyond the measured ones "
             "extrapolated]" : "");
    jx_free(&j);
    return SIM_OK;
  }
  jx_free(&j);
  if (rc) return rc;
  if (ks)
    return sim_errf(err, SIM_EINPUT, "speculative_config.dataset: '%s' not measured for %s on %s (%s has: %s)",
                    d->spec_dataset, method, m->name, TABLE_PATH, seen);
  return sim_errf(err, SIM_EINPUT,
                  "speculative_config: no published acceptance for method %s on model %s in %s: give "
                  "acceptance_rates (per position) or acceptance_length",
                  method, m->name, TABLE_PATH);
}

/* method draft_model (vLLM's draft-model proposer, v1/spec_decode/draft_model.py): loads speculative_config.model
 * (a bundled name or a config.json path) and keeps its shape in d->spec_draft. The draft and the target sample over
 * one vocabulary (the rejection sampler compares their probabilities token by token: vocab sizes must match), and
 * the draft is a dense transformer of full-attention layers (what the draft cost and memory terms cost), split over
 * the target's tensor-parallel ranks. */
static int draft_model_resolve(deploy_cfg *d, const model_cfg *m, sim_err *err) {
  const char *who = "speculative_config";
  if (m->mla || m->lin_layers)
    return sim_errf(err, SIM_EINPUT, "%s.method: draft_model: the draft's attention is priced from the target's "
                    "decode call, which for %s's %s attention is not a per-head KV read: not modelled", who, m->name,
                    m->mla ? "latent (MLA)" : "linear");
  if (!d->spec_model[0])
    return sim_errf(err, SIM_EINPUT, "%s.model: required with method draft_model (the draft model's name or "
                    "config.json path, e.g. llama-3.1-8b)", who);
  if (d->spec_draft_tp && d->spec_draft_tp != d->tp)
    return sim_errf(err, SIM_EINPUT, "%s.draft_tensor_parallel_size: %u: only the target's tensor parallelism (%u) "
                    "is modelled for a draft model (vLLM V1's draft runs on the target's ranks)", who, d->spec_draft_tp,
                    d->tp);
  model_cfg *dm = sim_malloc(sizeof *dm);
  int rc = cfg_model_load(dm, d->spec_model, err);
  if (!rc && dm->vocab != m->vocab)
    rc = sim_errf(err, SIM_EINPUT, "%s.model: %s has a vocabulary of %u tokens, the target %s %u: a draft model must "
                  "share the target's vocabulary", who, dm->name, dm->vocab, m->name, m->vocab);
  if (!rc && (dm->moe_layers || dm->mla || dm->lin_layers || dm->sliding_window || dm->ffn_classes))
    rc = sim_errf(err, SIM_EINPUT, "%s.model: %s is not a dense transformer of full-attention layers (mixture of "
                  "experts, latent or linear attention, sliding windows or mixed MLP widths): not modelled as a draft",
                  who, dm->name);
  uint32_t t = d->tp;
  if (!rc && (dm->q_heads % t || (dm->kv_heads % t && t % dm->kv_heads)))
    rc = sim_errf(err, SIM_EINPUT, "%s.model: %s's %u attention heads (%u KV heads) do not split over %u GPUs", who,
                  dm->name, dm->q_heads, dm->kv_heads, t);
  if (!rc) {
    d->spec_draft.layers = dm->layers, d->spec_draft.hidden = dm->hidden, d->spec_draft.q_heads = dm->q_heads;
    d->spec_draft.kv_heads = dm->kv_heads, d->spec_draft.head_dim = dm->head_dim;
    d->spec_draft.inter = dm->intermediate, d->spec_draft.vocab = dm->vocab, d->spec_draft.tied = dm->tied_embeddings;
    d->spec_draft.params = dm->params_total;
    snprintf(d->spec_draft.name, sizeof d->spec_draft.name, "%s", dm->name);
  }
  free(dm);
  return rc;
}

int specdec_resolve(deploy_cfg *d, const model_cfg *m, const engine_cfg *e, sim_err *err) {
  uint32_t k = d->num_speculative_tokens;
  d->spec_source[0] = 0;
  const char *who = "speculative_config";
  if (k && d->spec_method == SPEC_NONE)
    return sim_errf(err, SIM_EINPUT, "%s.method: required with num_speculative_tokens %u (eagle, eagle3, mtp, ngram)",
                    who, k);
  if (d->spec_method == SPEC_NONE || k == 0) return SIM_OK; /* off (k 0 with a method: a sweep's baseline) */
  if (engver_is_sglang(e) || e->admission == ADMIT_TOKEN_RATIO)
    return sim_errf(err, SIM_EINPUT, "%s: speculative decoding is modelled on the vLLM V1 scheduler (serve/sched.c) "
                    "and TensorRT-LLM's; SGLang's (speculative_algorithm, its own scheduler) is not yet", who);
  if (d->spec_method == SPEC_DRAFT_MODEL) {
    int rc = draft_model_resolve(d, m, err);
    if (rc) return rc;
  } else if (d->spec_draft_tp && d->spec_draft_tp != d->tp) {
    return sim_errf(err, SIM_EINPUT, "%s.draft_tensor_parallel_size: %u: only the target's tensor parallelism (%u) "
                    "is modelled for the draft layers", who, d->spec_draft_tp, d->tp);
  }
  if (d->spec_method == SPEC_MTP && m->mtp_layers == 0)
    return sim_errf(err, SIM_EINPUT, "%s.method: mtp: model %s has no multi-token-prediction layers "
                    "(num_nextn_predict_layers in its config)", who, m->name);
  if (d->spec_disable_bs && !strcmp(e->name, "vllm"))
    return sim_errf(err, SIM_EINPUT,
                    "%s.disable_by_batch_size: vLLM V1 has no batch-size cut-off (the field was V0's; "
                    "vllm/config/speculative.py at vllm-project/vllm 002e77c has none, and "
                    "v1/core/sched/scheduler.py schedules every running request's drafts)", who);
  if (d->spec_draft_vocab && d->spec_method != SPEC_EAGLE3)
    return sim_errf(err, SIM_EINPUT, "%s.draft_vocab_size: only an EAGLE-3 head has its own vocabulary (eagle, mtp "
                    "and ngram draft over the target's)", who);
  if (d->spec_draft_vocab > m->vocab)
    return sim_errf(err, SIM_EINPUT, "%s.draft_vocab_size: %u is more than the target's vocabulary (%u)", who,
                    d->spec_draft_vocab, m->vocab);
  if (d->spec_n_rates) {
    if (d->spec_n_rates < k)
      return sim_errf(err, SIM_EINPUT, "%s.acceptance_rates: %u given for num_speculative_tokens %u", who,
                      d->spec_n_rates, k);
    snprintf(d->spec_source, sizeof d->spec_source, "given (acceptance_rates)");
    return SIM_OK;
  }
  if (d->spec_accept_length >= 0) {
    if (d->spec_accept_length > k + 1)
      return sim_errf(err, SIM_EINPUT, "%s.acceptance_length: %g is more than num_speculative_tokens + 1 = %u", who,
                      d->spec_accept_length, k + 1);
    double a = geometric_rate(d->spec_accept_length, k);
    d->spec_rates[0] = a;
    for (uint32_t i = 1; i < k; i++) d->spec_rates[i] = d->spec_rates[i - 1] * a;
    snprintf(d->spec_source, sizeof d->spec_source, "given (acceptance_length %g: constant conditional rate %.4f)",
             d->spec_accept_length, a);
    return SIM_OK;
  }
  return from_table(d, m, k, err);
}
