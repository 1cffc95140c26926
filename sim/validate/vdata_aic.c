/* vdata_aic.c: NVIDIA AIConfigurator's closed-loop silicon sample (CSV, any
 * model, GPU, engine and mode; the mapping rules of vdata.c apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate/validate.h"
#include "validate/vcsv.h"
#include "validate/vdata_impl.h"
#include "config/engver.h"

/* ---- AIConfigurator closed-loop silicon sample ----------------------------------- */

/* "key=value; key=value" -> value of key, into out. */
static bool kv_field(const char *s, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *p = s; (p = strstr(p, key)) != NULL; p += kl) {
    if ((p == s || p[-1] == ' ' || p[-1] == ';') && p[kl] == '=') {
      const char *v = p + kl + 1, *e = strchr(v, ';');
      size_t len = e ? (size_t)(e - v) : strlen(v);
      if (len >= n) len = n - 1;
      memcpy(out, v, len);
      out[len] = 0;
      return true;
    }
  }
  return false;
}

/* A parallelism column: blank or 0 mean 1 (newer AIConfigurator rows leave
 * the ones that do not apply empty); absent column: 1. */
static int par_u32(const vcsv *c, const vcsv_row *r, int col, const char *what, uint32_t *out, sim_err *err) {
  *out = 1;
  if (col < 0 || !r->f[col][0] || !strcmp(r->f[col], "0")) return SIM_OK;
  return vcsv_u32(c, r, col, what, 1, 1024, out, err);
}

/* gemm_quant_mode (else precision) -> the point's dtypes; false with a reason
 * for what servesim has no precision for. fp8_block (block-scaled W8A8 FP8)
 * is costed with the per-tensor FP8 GEMM tables, the only FP8 ones measured.
 * FP4 weights (fp4, nvfp4, mxfp4) are 4-bit weights run weight-only (W4A16),
 * as GPUs without FP4 tensor cores (Hopper and older: every FP4 row of the
 * data is H200) run them; AIConfigurator labels gpt-oss's MXFP4 rows "nvfp4",
 * so these stay the checkpoint's 4-bit weight-only path rather than servesim's
 * NVFP4 dtype (W4A4 on Blackwell). */
static bool aic_precision(vpoint *p, const char *q, char *why, size_t n) {
  static const struct {
    const char *mode;
    int w;             /* weight dtype, -1: vdata__set_precision(as), -2: not representable */
    const char *as;    /* set_precision's name, or the missing precision */
  } t[] = {{"fp8", -1, "fp8"},          {"fp8_block", -1, "fp8"},   {"fp8_static", -1, "fp8"},
           {"fp8_dynamic", -1, "fp8"},  {"float16", -1, "fp16"},    {"fp16", -1, "fp16"},
           {"bfloat16", -1, "bf16"},    {"bf16", -1, "bf16"},       {"int8", DT_INT8, ""},
           {"w8a8", DT_INT8, ""},       {"sq", DT_INT8, ""},        {"int4", DT_INT4, ""},
           {"int4_wo", DT_INT4, ""},    {"w4a16", DT_INT4, ""},     {"int4_awq", DT_INT4, ""},
           {"awq", DT_INT4, ""},        {"gptq", DT_INT4, ""},      {"int8_wo", -2, "8-bit weight-only"},
           {"fp4", DT_INT4, ""},        {"nvfp4", DT_INT4, ""},       {"mxfp4", DT_INT4, ""},
           {"w4afp8", -2, "4-bit weight, FP8 activation"}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(t); i++) {
    if (strcasecmp(q, t[i].mode)) continue;
    if (t[i].w == -2) {
      vfmt(why, n, "gemm_quant_mode %s: servesim has no %s precision", q, t[i].as);
      return false;
    }
    if (t[i].w == -1) return vdata__set_precision(p, t[i].as);
    p->act_dtype = p->kv_dtype = DT_BF16;
    p->weight_dtype = (sim_dtype)t[i].w;
    return true;
  }
  vfmt(why, n, "gemm_quant_mode %s: no matching servesim precision", q[0] ? q : "(empty)");
  return false;
}


/* "measured=YYYY-MM-DD..." of silicon_data_source, as YYYYMMDD, or 0. */
static uint32_t aic_measured_date(const char *src) {
  char d[40];
  if (!kv_field(src, "measured", d, sizeof d)) return 0;
  unsigned y, m, dd;
  if (sscanf(d, "%4u-%2u-%2u", &y, &m, &dd) != 3 || m < 1 || m > 12 || dd < 1 || dd > 31) return 0;
  return y * 10000 + m * 100 + dd;
}

/* The engine version of a row: backend_version, else for vLLM from the
 * measurement date. vLLM 0.11.0 was released 2025-10-02, 0.11.1 2025-11-18:
 * a row measured in between ran 0.11.0 (the Llama-3.1-70B rows:
 * measured=2025-10-29). Both kernel-db vLLM versions are newer; the 0.14.0
 * tables' FP8 GEMMs alone take longer than the measured decode steps at
 * concurrency 4 (docs/ACCURACY.md, "Which kernel tables"), so they cannot
 * describe the engine that ran: these points use the 0.24.0 tables, which do
 * not contradict them. Any other date: the engine file's version. */
static void aic_version(vpoint *p, const char *ver, const char *engine, const char *src) {
  engver v;
  if (ver[0] && engver_parse(ver, &v)) {
    vdata__set_str(p->engine_version, sizeof p->engine_version, ver);
  } else if (ver[0]) { /* a build's name (gpt-oss-dev, glm5-hopper): which release it was is not recorded */
    vdata__note(p, "backend_version %s is a build name, not a version: the engine file's version ran in its place",
                ver);
  } else if (engine && !strcmp(engine, "vllm")) {
    uint32_t d = aic_measured_date(src);
    if (d >= 20251002 && d < 20251118) {
      vdata__set_str(p->engine_version, sizeof p->engine_version, "0.11.0");
      vdata__set_str(p->kernel_version, sizeof p->kernel_version, "0.24.0");
    }
  }
}

/* A blank gemm_quant_mode and precision: the checkpoint's own weights (AIConfigurator leaves both empty for
 * an unquantized checkpoint, BF16 for the rows' models): a quantization_config the model file declares, else its
 * torch_dtype. False with a reason when the model cannot be read or its format has no servesim precision. */
static bool aic_own_precision(vpoint *p, const char *model, bool renamed, char *why, size_t n) {
  model_cfg m;
  sim_err e = {0, ""};
  if (renamed) {
    vfmt(why, n, "gemm_quant_mode and precision are empty and the checkpoint is a quantized one read as its base "
                 "model's architecture: its precision is unknown");
    return false;
  }
  if (cfg_model_load(&m, model, &e)) {
    vfmt(why, n, "gemm_quant_mode and precision are empty and the model cannot be read: %s", e.msg);
    return false;
  }
  const char *as = NULL;
  if (m.ckpt_quant && m.ckpt_wdtype == DT_FP8) as = "fp8";
  else if (m.ckpt_quant && (m.ckpt_wdtype == DT_INT4 || m.ckpt_wdtype == DT_FP4)) as = "int4";
  else if (m.ckpt_quant) as = dtype_name(m.ckpt_wdtype);
  else as = m.native_dtype == DT_FP16 ? "fp16" : "bf16";
  vdata__note(p, "gemm_quant_mode and precision empty: the checkpoint's own %s (%s)", as,
              m.ckpt_quant ? "its quantization_config" : "its torch_dtype");
  return aic_precision(p, as, why, n);
}

/* A row whose tensor parallelism exceeds the model's attention heads (AIConfigurator's 2026-04-06 export of
 * Qwen3.5-397B on SGLang records tp_size 64 = moe_tp_size 8 x moe_ep_size 8 for 32 heads; its measured values
 * repeat the tp_size 8 rows of the 2026-03-25 export): no engine splits fewer heads over more GPUs, so the row
 * is skipped with that reason, not run and failed. Only rows over one node's 8 GPUs are checked (reading the
 * model for every row would cost the whole set's time). */
static void aic_heads(const vpoint *p, const char *model, char *why, size_t n) {
  if (!model || p->tp <= 8 || why[0]) return;
  model_cfg m;
  sim_err e = {0, ""};
  if (cfg_model_load(&m, model, &e) || !m.q_heads || p->tp <= m.q_heads) return;
  vfmt(why, n, "tp_size %u is more GPUs than the model's %u attention heads: not a layout an engine runs (a "
       "mislabelled export: moe_tp_size x moe_ep_size over the attention ranks)", p->tp, m.q_heads);
}

/* What a row's parallelism means for vLLM, or why it cannot be run: attention
 * data parallelism when the experts span more GPUs than one attention rank
 * (vLLM --data-parallel-size (moe_tp x moe_ep) / tp, its MoE layers over all
 * ranks; the clients are silicon_concurrency in all, spread over the ranks);
 * expert parallelism only over all the ranks. has_mtp: the row records
 * moe_tp_size. */
static void aic_parallel(vpoint *p, uint32_t adp, uint32_t mtp, uint32_t mep, bool has_mtp, bool hybrid_ok, char *why,
                         size_t n) {
  uint32_t moe_g = mtp * mep;
  if (moe_g > p->tp && moe_g % p->tp == 0 && (adp <= 1 || adp == moe_g / p->tp)) p->dp = moe_g / p->tp;
  else if (adp > 1 && moe_g == p->tp * adp) p->dp = adp;
  if (!p->dp) p->dp = 1;
  uint32_t dp = p->dp;
  bool all = mtp == 1 && mep == p->tp * dp; /* whole experts over all the ranks */
  p->ep = mep > 1 && all;                   /* vLLM --enable-expert-parallel: the experts over the dp x tp ranks */
  p->moe_ep = mep > 1 && !all && moe_g == p->tp * dp ? mep : 0; /* MoE TP x EP (--moe-expert-parallel-size) */
  if (adp > 1 && p->dp != adp)
    vfmt(why, n, "attention data parallelism %u with moe_tp_size %u x moe_ep_size %u over tp_size %u: not a layout "
         "vLLM runs", adp, mtp, mep, p->tp);
  else if (p->moe_ep && !hybrid_ok)
    vfmt(why, n, "expert parallelism (moe_ep_size %u, moe_tp_size %u) over other than all the ranks: vLLM runs its "
         "experts whole over all the ranks or sliced over all of them", mep, mtp);
  else if (mep > 1 && !all && !p->moe_ep)
    vfmt(why, n, "moe_tp_size %u x moe_ep_size %u is not the %u x %u ranks of the MoE layers: not a layout the engines "
         "run", mtp, mep, p->tp, dp);
  else if (has_mtp && (uint64_t)moe_g > (uint64_t)p->tp * dp)
    vfmt(why, n, "moe_tp_size %u x moe_ep_size %u exceeds tp_size %u x %u data-parallel ranks: not a layout vLLM runs",
         mtp, mep, p->tp, dp);
  else why[0] = 0;
}

/* A disagg row's pools (prefill_* and decode_* columns: each pool's worker count, TP, batch size, attention DP and
 * MoE EP; SOURCES.md) onto the point: --mode disagg with --prefill-workers/--prefill-tp/--prefill-max-num-seqs and
 * the decode pool's alike (AIConfigurator's prefill_batch_size and decode_batch_size are each worker's largest
 * batch: its max_num_seqs); the experts over all of a pool's ranks (ep == tp in both pools) run as vLLM's
 * --enable-expert-parallel, or the other engines' moe_expert_parallel_size = the pool's TP. A row it cannot map
 * gets why (when it has no reason yet). */
static int aic_disagg(const vcsv *c, const vcsv_row *r, const char *what, vpoint *p, bool vllm, char *why, size_t nw,
                      sim_err *err) {
  static const char *const name[2][6] = {
      {"prefill_num_workers", "prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size",
       "prefill_moe_ep_size", "prefill_batch_size"},
      {"decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size", "decode_moe_ep_size",
       "decode_batch_size"}};
  uint32_t v[2][6];
  bool blank = false;
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 6; j++) {
      int col = vcsv_col(c, name[k][j]);
      if ((j == 0 || j == 5) && (col < 0 || !r->f[col][0])) blank = true;
      int rc = par_u32(c, r, col, what, &v[k][j], err);
      if (rc) return rc;
    }
  p->disagg = true;
  p->p_workers = v[0][0], p->p_tp = v[0][1], p->p_dp = v[0][3], p->p_seqs = v[0][5];
  p->d_workers = v[1][0], p->d_tp = v[1][1], p->d_dp = v[1][3], p->d_seqs = v[1][5];
  p->tp = p->d_tp;
  p->dp = p->d_dp;
  bool ep_all = v[0][4] == v[0][1] * v[0][3] && v[1][4] == v[1][1] * v[1][3] && v[0][4] > 1 && v[1][4] > 1;
  bool ep_none = v[0][4] == 1 && v[1][4] == 1;
  if (ep_all && vllm) p->ep = true;
  else if (ep_all) p->moe_ep = p->d_tp * p->d_dp;
  if (why[0]) return SIM_OK;
  if (blank)
    vfmt(why, nw, "disagg row with a blank prefill/decode num_workers or batch_size: the pools' sizes are unknown");
  else if (v[0][2] > 1 || v[1][2] > 1)
    vfmt(why, nw, "disaggregated pools with pipeline stages (prefill pp %u, decode pp %u): not modelled", v[0][2],
         v[1][2]);
  else if (!ep_all && !ep_none)
    vfmt(why, nw, "disaggregated pools with expert parallelism over other than all their ranks (prefill TP%u DP%u "
         "EP%u, decode TP%u DP%u EP%u)", v[0][1], v[0][3], v[0][4], v[1][1], v[1][3], v[1][4]);
  return SIM_OK;
}

/* The point's clients: silicon_concurrency when recorded; batch_size is per attention-DP rank. A row whose
 * clients are unknown or disagree gets why (when it has no reason yet). */
static int aic_clients(vpoint *p, const char *src, uint32_t batch, uint32_t adp, const char *what, int line, char *why,
                       size_t nw, sim_err *err) {
  uint32_t conc_src = 0;
  char cs[32];
  if (kv_field(src, "silicon_concurrency", cs, sizeof cs)) {
    uint64_t v;
    if (!sim_parse_u64(cs, &v) || v < 1 || v > 1000000)
      return sim_errf(err, SIM_EINPUT,
                      "%s:%d: silicon_data_source: silicon_concurrency: expected an integer >= 1, got '%s'", what,
                      line, cs);
    conc_src = (uint32_t)v;
  }
  p->concurrency = conc_src ? conc_src : batch * adp;
  if (!why[0] && !p->concurrency) vfmt(why, nw, "batch_size is empty and no silicon_concurrency is recorded");
  if (!why[0] && conc_src && batch && (uint64_t)batch * adp != conc_src)
    vfmt(why, nw, "batch_size %u x attention_dp_size %u differs from silicon_concurrency=%u", batch, adp, conc_src);
  return SIM_OK;
}

/* The point's id, aic/MODEL/GPU/BACKEND/tpN[ppN|dpN]/ISLxOSL/cC, and its series. */
static void aic_id(vpoint *p, const char *model_short, const char *gpu, const char *backend, const char *pps) {
  char mid[128];
  vfmt(mid, sizeof mid, "%s", model_short);
  for (char *q = mid; (q = strchr(q, '/')) != NULL;) *q = '~'; /* an id's parts are separated by '/' */
  vfmt(p->id, sizeof p->id, "aic/%s/%s/%s/tp%u%s/%ux%u/c%u", mid,
       gpu, backend, p->tp, pps, p->isl, p->osl, p->concurrency);
  vdata__set_group(p, gpu);
}

int vdata_parse_aic(vset *s, const char *text, const char *what, sim_err *err) {
  vcsv c;
  int rc = vcsv_parse(&c, text, what, err);
  if (rc) return rc;
  vresolve *res = vset_resolver(s);
  enum { C_BACKEND, C_MODEL, C_SYSTEM, C_MODE, C_ISL, C_OSL, C_BATCH, C_TP, C_TTFT, C_TPOT, NREQ };
  static const char *const need[NREQ] = {"backend", "model_path", "system",     "mode",           "isl",
                                         "osl",     "batch_size", "tp_size",    "silicon_ttft_ms", "silicon_tpot_ms"};
  int col[NREQ];
  for (int i = 0; i < NREQ && !rc; i++) rc = vcsv_need(&c, need[i], what, &col[i], err);
  int c_src = vcsv_col(&c, "silicon_data_source"), c_ver = vcsv_col(&c, "backend_version");
  int c_quant = vcsv_col(&c, "gemm_quant_mode"), c_prec = vcsv_col(&c, "precision");
  int c_pp = vcsv_col(&c, "pp_size"), c_adp = vcsv_col(&c, "attention_dp_size");
  int c_mtp = vcsv_col(&c, "moe_tp_size"), c_mep = vcsv_col(&c, "moe_ep_size");
  for (size_t i = 0; i < c.n && !rc; i++) {
    const vcsv_row *r = &c.rows[i];
    vpoint *p = vset_add(s);
    p->src = VSRC_AIC;
    p->shape = VSHAPE_CLOSED;
    vfmt(p->where, sizeof p->where, "%s:%d", what, r->line);
    const char *backend = r->f[col[C_BACKEND]], *system = r->f[col[C_SYSTEM]], *mode = r->f[col[C_MODE]];
    const char *mlabel = r->f[col[C_MODEL]], *src = c_src >= 0 ? r->f[c_src] : "";
    if ((rc = vcsv_u32(&c, r, col[C_ISL], what, 1, 10000000, &p->isl, err))) break;
    if ((rc = vcsv_u32(&c, r, col[C_OSL], what, 1, 10000000, &p->osl, err))) break;
    char why[320] = "";
    bool agg = !strcmp(mode, "agg"), disagg = !strcmp(mode, "disagg");
    if (!agg && !disagg)
      vfmt(why, sizeof why, "mode %s: servesim models aggregated (agg) and disaggregated (disagg) serving only",
           mode[0] ? mode : "(empty)");
    /* the measurements: blank = not measured (a skipped row), anything else must be a positive number */
    bool measured = r->f[col[C_TTFT]][0] && r->f[col[C_TPOT]][0];
    if (r->f[col[C_TTFT]][0] && (rc = vcsv_pos(&c, r, col[C_TTFT], what, &p->meas[VM_TTFT], err))) break;
    if (r->f[col[C_TPOT]][0] && (rc = vcsv_pos(&c, r, col[C_TPOT], what, &p->meas[VM_TPOT], err))) break;
    if (!measured && !why[0]) vfmt(why, sizeof why, "silicon_ttft_ms or silicon_tpot_ms is empty: nothing measured");
    uint32_t adp = 1, mtp = 1, mep = 1, batch = 0;
    if ((rc = par_u32(&c, r, col[C_TP], what, &p->tp, err))) break;
    if ((rc = par_u32(&c, r, c_pp, what, &p->pp, err))) break;
    if ((rc = par_u32(&c, r, c_adp, what, &adp, err))) break;
    if ((rc = par_u32(&c, r, c_mtp, what, &mtp, err))) break;
    if ((rc = par_u32(&c, r, c_mep, what, &mep, err))) break;
    if (r->f[col[C_BATCH]][0] && (rc = vcsv_u32(&c, r, col[C_BATCH], what, 1, 1000000, &batch, err))) break;
    if ((rc = aic_clients(p, src, batch, adp, what, r->line, why, sizeof why, err))) break;
    if (!backend[0]) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: backend: empty", what, r->line);
      break;
    }
    if (!system[0]) {
      rc = sim_errf(err, SIM_EINPUT, "%s:%d: system: empty", what, r->line);
      break;
    }
    char mwhy[320], mnote[320];
    const char *gpu = vres_gpu(res, system);
    bool quantized_base = false;
    const char *model = vres_model_note(res, mlabel, mwhy, sizeof mwhy, mnote, sizeof mnote, &quantized_base);
    if (mnote[0]) vdata__note(p, "%s", mnote);
    const char *engine = vres_engine(res, backend);
    vdata__set_str(p->gpu, sizeof p->gpu, gpu);
    vdata__set_str(p->model, sizeof p->model, model);
    vdata__set_str(p->engine, sizeof p->engine, engine);
    aic_version(p, c_ver >= 0 ? r->f[c_ver] : "", engine, src);
    char pps[48] = "", pwhy[256];
    aic_parallel(p, adp, mtp, mep, c_mtp >= 0 && r->f[c_mtp][0], !engine || strcmp(engine, "vllm"), pwhy,
                 sizeof pwhy);
    if (disagg && !engine && !strcmp(backend, "sglang"))
      vfmt(why, sizeof why, "disaggregated SGLang rows wait for the [sglang] engine model (no servesim engine "
           "config for backend sglang)");
    aic_heads(p, model, why, sizeof why);
    if (disagg && (rc = aic_disagg(&c, r, what, p, engine && !strcmp(engine, "vllm"), why, sizeof why, err))) break;
    p->num_prompts = (uint64_t)VAL_CLOSED_PROMPTS_PER_CLIENT * p->concurrency;
    p->tput_derived = true;
    /* derived throughput: C x osl / E2EL (see validate.h) */
    if (measured && p->concurrency)
      p->meas[VM_TPUT] = p->concurrency * (double)p->osl /
                         ((p->meas[VM_TTFT] + (p->osl - 1.0) * p->meas[VM_TPOT]) / 1000.0);
    if (p->pp > 1) vfmt(pps, sizeof pps, "pp%u", p->pp);
    if (p->dp > 1) vfmt(pps, sizeof pps, "dp%u", p->dp);
    if (p->moe_ep) vfmt(pps + strlen(pps), sizeof pps - strlen(pps), "ep%u", p->moe_ep);
    if (disagg) /* xPyD with each pool's TP (and attention DP): tp8-1Ptp8-9Dtp8, tp1dp8-1Ptp1dp8-9Dtp8 */
      vfmt(pps + strlen(pps), sizeof pps - strlen(pps), "-%uPtp%u%s%.0u-%uDtp%u%s%.0u", p->p_workers, p->p_tp,
           p->p_dp > 1 ? "dp" : "", p->p_dp > 1 ? p->p_dp : 0, p->d_workers, p->d_tp, p->d_dp > 1 ? "dp" : "",
           p->d_dp > 1 ? p->d_dp : 0);
    aic_id(p, model ? vdata__model_short(model) : mlabel, gpu ? gpu : system, backend, pps);
    const char *quant = c_quant >= 0 && r->f[c_quant][0] ? r->f[c_quant] : c_prec >= 0 ? r->f[c_prec] : "";
    char qwhy[160];
    if (why[0]) vfmt(p->skip, sizeof p->skip, "%s", why);
    else if (!model && mwhy[0]) vfmt(p->skip, sizeof p->skip, "%s: %s", mlabel, mwhy);
    else if (!model) vfmt(p->skip, sizeof p->skip, "no servesim model config for %s (add one with --models DIR)", mlabel);
    else if (!gpu) vfmt(p->skip, sizeof p->skip, "no servesim GPU config for system %s", system);
    else if (!engine) vfmt(p->skip, sizeof p->skip, "no servesim engine config for backend %s", backend);
    else if (pwhy[0]) vfmt(p->skip, sizeof p->skip, "%s", pwhy);
    else if (!quant[0] && !aic_own_precision(p, model, quantized_base, qwhy, sizeof qwhy))
      vfmt(p->skip, sizeof p->skip, "%s", qwhy);
    else if (quant[0] && !aic_precision(p, quant, qwhy, sizeof qwhy)) vfmt(p->skip, sizeof p->skip, "%s", qwhy);
  }
  vcsv_free(&c);
  return rc;
}
