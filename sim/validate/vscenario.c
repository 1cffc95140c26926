/* vscenario.c: a point as a servesim scenario (vpoint_scenario) and the engine parameters the fit may change
 * (vparam_*, vclosed_spread); what both ways of running a point read (vrun.c: one run; vstage.c: an open-loop
 * stage), below either of them. */
#include <math.h>
#include <string.h>

#include "validate/validate.h"

#include "config/settings.h"
#include "workload/gen.h"

/* ---- engine parameters the fit may change --------------------------------------- */

const char *vparam_name(vparam p) {
  static const char *const n[VP_COUNT] = {"step_overhead_us", "per_seq_overhead_us", "launch_overhead_us_per_layer",
                                          "gemm_compute_eff", "gemm_memory_eff",     "attn_prefill_eff",
                                          "attn_decode_eff",  "elementwise_eff",     "allreduce_bw_eff",
                                          "allreduce_latency_us", "runtime_overhead_mib",
                                          "frontend_latency_us",  "closed_loop_output_spread", "stream_per_seq_us"};
  return (unsigned)p < VP_COUNT ? n[p] : "?";
}

static double *vparam_field(engine_cfg *e, vparam p, double *scale) {
  *scale = 1.0;
  switch (p) {
  case VP_STEP_OVERHEAD_US: *scale = 1e3; return &e->step_overhead_ns;
  case VP_PER_SEQ_OVERHEAD_US: *scale = 1e3; return &e->per_seq_overhead_ns;
  case VP_GEMM_COMPUTE_EFF: return &e->gemm_compute_eff;
  case VP_GEMM_MEMORY_EFF: return &e->gemm_memory_eff;
  case VP_LAUNCH_OVERHEAD_US: *scale = 1e3; return &e->launch_overhead_ns_per_layer;
  case VP_ATTN_PREFILL_EFF: return &e->attn_prefill_eff;
  case VP_ATTN_DECODE_EFF: return &e->attn_decode_eff;
  case VP_ELEMENTWISE_EFF: return &e->elementwise_eff;
  case VP_ALLREDUCE_BW_EFF: return &e->allreduce_bw_eff;
  case VP_ALLREDUCE_LATENCY_US: *scale = 1e3; return &e->allreduce_latency_ns;
  case VP_RUNTIME_OVERHEAD_MIB: *scale = 1024.0 * 1024.0; return &e->runtime_overhead_bytes;
  case VP_FRONTEND_LATENCY_US: *scale = 1e3; return &e->frontend_latency_ns;
  case VP_STREAM_PER_SEQ_US: *scale = 1e3; return &e->stream_per_seq_ns;
  case VP_CLOSED_OUTPUT_SPREAD: return NULL; /* not an engine field: vclosed_spread */
  default: SIM_ASSERT(!"unknown vparam");
  }
  return NULL;
}

double vparam_get(const engine_cfg *e, vparam p) {
  if (p == VP_CLOSED_OUTPUT_SPREAD) return vclosed_spread(NULL, e->name);
  double scale;
  double *f = vparam_field((engine_cfg *)e, p, &scale);
  return *f / scale;
}

/* Fitted closed-loop output spreads (`servesim validate --fit`, the same run
 * that fitted configs/engines/<engine>.json; docs/ACCURACY.md). */
static const struct {
  const char *engine;
  double spread;
} CLOSED_SPREAD[] = {{"vllm", 0.1357}, {"trtllm", 0.3}};

double vclosed_spread(const voverrides *ov, const char *engine) {
  if (ov && !isnan(ov->closed_output_spread)) return ov->closed_output_spread;
  if (ov)
    for (int i = 0; i < ov->n; i++)
      if (!strcmp(ov->e[i].engine, engine) && !isnan(ov->e[i].v[VP_CLOSED_OUTPUT_SPREAD]))
        return ov->e[i].v[VP_CLOSED_OUTPUT_SPREAD];
  for (size_t i = 0; i < SIM_ARRAY_LEN(CLOSED_SPREAD); i++)
    if (!strcmp(CLOSED_SPREAD[i].engine, engine)) return CLOSED_SPREAD[i].spread;
  return 0;
}

void vparam_apply(const voverrides *ov, engine_cfg *e) {
  if (!ov) return;
  for (int i = 0; i < ov->n; i++) {
    if (strcmp(ov->e[i].engine, e->name)) continue;
    for (int k = 0; k < VP_COUNT; k++) {
      if (isnan(ov->e[i].v[k])) continue;
      double scale;
      double *f = vparam_field(e, (vparam)k, &scale);
      if (f) *f = ov->e[i].v[k] * scale;
    }
  }
}

/* ---- the scenario of a point --------------------------------------------------------- */

int voverride_set_add(voverrides *ov, const char *item, sim_err *err) {
  const char *eq = strchr(item, '=');
  if (!eq || eq == item || !eq[1])
    return sim_errf(err, SIM_EINPUT, "--set %s: expected KEY=VALUE (a scenario key such as enable_mixed_chunk=on)",
                    item);
  if (ov->n_set >= (int)SIM_ARRAY_LEN(ov->set)) return sim_errf(err, SIM_EINPUT, "--set: at most 16 settings");
  size_t k = (size_t)(eq - item);
  if (k >= sizeof ov->set[0].key || strlen(eq + 1) >= sizeof ov->set[0].value)
    return sim_errf(err, SIM_EINPUT, "--set %s: key or value too long", item);
  char key[48];
  memcpy(key, item, k);
  key[k] = 0;
  const setting *s = settings_by_key(key);
  if (!s) s = settings_by_flag(key);
  if (!s) return sim_errf(err, SIM_EINPUT, "--set %s: no setting '%s' (see `servesim run --help` for the flags)", item, key);
  deploy_cfg scratch;
  deploy_init(&scratch);
  char who[96];
  snprintf(who, sizeof who, "--set %s", key);
  int rc = setting_set_text(s, &scratch, eq + 1, who, err);
  if (rc) return rc;
  snprintf(ov->set[ov->n_set].key, sizeof ov->set[0].key, "%s", s->key);
  snprintf(ov->set[ov->n_set].value, sizeof ov->set[0].value, "%s", eq + 1);
  ov->n_set++;
  return SIM_OK;
}

void voverride_set_apply(const voverrides *ov, deploy_cfg *d) {
  for (int i = 0; ov && i < ov->n_set; i++) {
    sim_err e;
    int rc = setting_set_text(settings_by_key(ov->set[i].key), d, ov->set[i].value, "--set", &e);
    SIM_ASSERT(rc == SIM_OK); /* vset_add parsed it */
  }
}

void vpoint_scenario(const vpoint *p, const voverrides *ov, scenario *sc) {
  if (p->user_sc) {
    *sc = *p->user_sc;
  } else {
    scenario_init(sc);
    vfmt(sc->model, sizeof sc->model, "%s", p->model);
    vfmt(sc->gpu, sizeof sc->gpu, "%s", p->gpu);
    if (p->engine_version[0]) vfmt(sc->engine, sizeof sc->engine, "%s@%s", p->engine, p->engine_version);
    else vfmt(sc->engine, sizeof sc->engine, "%s", p->engine);
    if (p->kernel_version[0]) vfmt(sc->profile, sizeof sc->profile, "%s_%s-%s", p->gpu, p->engine, p->kernel_version);
    else vfmt(sc->profile, sizeof sc->profile, "auto");
    sc->deploy.tp = p->tp;
    sc->deploy.pp = p->pp;
    sc->deploy.dp = p->dp;
    sc->deploy.expert_parallel = p->ep;
    sc->deploy.moe_ep = p->moe_ep;
    sc->deploy.act_dtype = p->act_dtype, sc->deploy.act_dtype_set = true;
    sc->deploy.weight_dtype = p->weight_dtype, sc->deploy.weight_dtype_set = true;
    sc->deploy.kv_dtype = p->kv_dtype, sc->deploy.kv_dtype_set = true;
    if (p->disagg) { /* AIConfigurator's xPyD: workers, TP and batch size of each pool */
      sc->deploy.disagg = true;
      sc->deploy.prefill_workers = p->p_workers, sc->deploy.prefill_tp = p->p_tp;
      sc->deploy.prefill_max_num_seqs = p->p_seqs;
      sc->deploy.prefill_dp = p->p_dp, sc->deploy.decode_dp = p->d_dp;
      sc->deploy.decode_workers = p->d_workers, sc->deploy.decode_tp = p->d_tp;
      sc->deploy.decode_max_num_seqs = p->d_seqs;
    }
    /* random prompts with cache reuse disabled: nothing to hit */
    sc->deploy.enable_prefix_caching = 0;
  }
  if (ov && ov->allreduce_set) sc->deploy.allreduce = ov->allreduce;
  if (ov && ov->moe_routing_set) sc->deploy.moe_routing = ov->moe_routing;
  voverride_set_apply(ov, &sc->deploy);
  vfmt(sc->name, sizeof sc->name, "%s", p->id);
  gen_params *g = &sc->gen;
  g->num_prompts = p->num_prompts;
  g->input.kind = g->output.kind = LEN_UNIFORM_RATIO;
  g->input.len = p->isl, g->output.len = p->osl;
  g->input.range_ratio = g->output.range_ratio = 0;
  g->request_rate = INFINITY;
  g->burstiness = 1.0;
  sc->max_concurrency = 0;
  switch (p->shape) {
  case VSHAPE_CLOSED:
    sc->max_concurrency = p->concurrency;
    g->output.range_ratio = vclosed_spread(ov, p->engine);
    break;
  case VSHAPE_OFFLINE: break;
  case VSHAPE_STATIC:
    sc->deploy.max_num_seqs = p->concurrency;
    sc->deploy.max_num_batched_tokens = p->concurrency * p->isl;
    break;
  case VSHAPE_OPEN:
    if (p->user_sc) { /* the user's generator lengths (range ratio) when they gave them */
      g->input = p->user_sc->gen.input;
      g->output = p->user_sc->gen.output;
      g->input.len = p->isl, g->output.len = p->osl;
    }
    g->request_rate = p->request_rate;
    g->burstiness = p->burstiness;
    sc->max_concurrency = p->concurrency;
    break;
  case VSHAPE_STAGED: { /* the run's server (vopen.c); the workload is a trace (vstage.c), not gen */
    const vopen_run *r = &p->staged->run;
    sc->deploy.max_num_seqs = r->max_num_seqs;
    sc->deploy.max_num_batched_tokens = r->max_num_batched_tokens;
    sc->deploy.max_model_len = r->max_model_len;
    sc->deploy.gpu_memory_utilization = VSTAGE_GPU_MEMORY_UTILIZATION;
    sc->deploy.enable_prefix_caching = 1;
    g->num_prompts = 0;
    break;
  }
  default: SIM_ASSERT(!"unknown shape");
  }
}
