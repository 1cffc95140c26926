/* test_prof.c: profile loading (strict, errors name file and field) and
 * interpolation on synthetic tables (tests/data/profiles/synthetic.json:
 * ns = SOL / efficiency with the efficiencies below, see make_synthetic.py):
 * exact grid points, between points (log-efficiency linear in log size),
 * outside the grid (boundary efficiency held), unmeasured cells, missing
 * shapes, dtype mapping, and the leave-one-out error. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof.h"
#include "testutil.h"

#define COPY 4e12
#define PEAK_BF16 8e14
#define PEAK_FP8 1.6e15

static prof *load_synth(void) {
  prof *p = NULL;
  sim_err err = {0};
  int rc = prof_load(&p, tu_src("tests/data/profiles/synthetic.json"), &err);
  cr_assert_eq(rc, SIM_OK, "load failed: %s", err.msg);
  return p;
}

static double sol(const prof_work *w) {
  double peak = w->compute == DT_FP8 ? PEAK_FP8 : PEAK_BF16;
  double tc = w->flops / peak, tm = w->bytes / COPY;
  return (tc > tm ? tc : tm) * 1e9;
}

static double gemm_sol(sim_dtype w, sim_dtype a, uint32_t M) {
  prof_work wk;
  prof_gemm_work(w, a, M, 4096, 4096, &wk);
  return sol(&wk);
}

/* efficiency between two grid points: a power law (log-linear in log) */
static double lerp_log(double x0, double e0, double x1, double e1, double x) {
  double f = (log(x) - log(x0)) / (log(x1) - log(x0));
  return exp(log(e0) * (1 - f) + log(e1) * f);
}

static void assert_close(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= 1e-9 * fabs(want), "%s: got %.12g want %.12g", what, got, want);
}

Test(prof, loads_synthetic_and_names_gpu) {
  prof *p = load_synth();
  cr_assert_str_eq(prof_gpu_name(p), "h200");
  cr_assert(strstr(prof_source(p), "synthetic.json"));
  cr_assert_eq(prof_copy_Bps(p), COPY);
  cr_assert_eq(prof_peak_flops(p, DT_BF16), PEAK_BF16);
  cr_assert_eq(prof_peak_flops(p, DT_FP16), PEAK_BF16, "fp16 peak defaults to bf16");
  cr_assert_eq(prof_peak_flops(p, DT_INT8), 0);
  cr_assert_eq(prof_table_count(p, PK_GEMM), 2);
  cr_assert_eq(prof_table_count(p, PK_GEMM_WQ), 1);
  cr_assert_eq(prof_table_count(p, PK_DECODE), 1);
  cr_assert_eq(prof_table_count(p, PK_PREFILL), 1);
  prof_free(p);
}

Test(prof, gemm_exact_points_return_measurement) {
  prof *p = load_synth();
  static const uint32_t m[] = {1, 16, 256, 4096};
  static const double eff[] = {0.5, 0.6, 0.8, 0.9};
  for (int i = 0; i < 4; i++) {
    double ns;
    cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, m[i], 4096, 4096, &ns));
    assert_close(ns, gemm_sol(DT_BF16, DT_BF16, m[i]) / eff[i], "exact bf16");
  }
  prof_free(p);
}

Test(prof, gemm_between_points_interpolates_efficiency) {
  prof *p = load_synth();
  double ns;
  /* between 16 (0.6) and 256 (0.8) */
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 64, 4096, 4096, &ns));
  assert_close(ns, gemm_sol(DT_BF16, DT_BF16, 64) / lerp_log(16, 0.6, 256, 0.8, 64), "M=64");
  /* between 256 (0.8) and 4096 (0.9): compute-bound, time scales with M */
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 1000, 4096, 4096, &ns));
  assert_close(ns, gemm_sol(DT_BF16, DT_BF16, 1000) / lerp_log(256, 0.8, 4096, 0.9, 1000), "M=1000");
  /* monotone between neighbours in a compute-bound stretch */
  double a, b;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 256, 4096, 4096, &a));
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 4096, 4096, 4096, &b));
  cr_assert(ns > a && ns < b);
  prof_free(p);
}

Test(prof, gemm_outside_grid_holds_boundary_efficiency) {
  prof *p = load_synth();
  double ns;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 16384, 4096, 4096, &ns));
  assert_close(ns, gemm_sol(DT_BF16, DT_BF16, 16384) / 0.9, "above the grid");
  /* weight-only table ends at 64: M = 200 holds 0.3 */
  cr_assert(prof_gemm_ns(p, DT_INT4, DT_BF16, 200, 4096, 4096, &ns));
  assert_close(ns, gemm_sol(DT_INT4, DT_BF16, 200) / 0.3, "weight-only above the grid");
  cr_assert(!prof_gemm_ns(p, DT_BF16, DT_BF16, 0, 4096, 4096, &ns), "M = 0 has no time");
  prof_free(p);
}

Test(prof, gemm_missing_shapes_and_dtypes_return_false) {
  prof *p = load_synth();
  double ns = -1;
  cr_assert(!prof_gemm_ns(p, DT_BF16, DT_BF16, 16, 4096, 8192, &ns), "K not in profile");
  cr_assert(!prof_gemm_ns(p, DT_BF16, DT_BF16, 16, 1024, 4096, &ns), "N not in profile");
  cr_assert(!prof_gemm_ns(p, DT_INT8, DT_INT8, 16, 4096, 4096, &ns), "no int8 table");
  cr_assert(!prof_gemm_ns(p, DT_INT8, DT_BF16, 16, 4096, 4096, &ns), "no int8 weight-only table");
  cr_assert(!prof_gemm_ns(NULL, DT_BF16, DT_BF16, 16, 4096, 4096, &ns), "no profile");
  cr_assert_eq(ns, -1, "a failed query leaves *ns alone");
  prof_free(p);
}

Test(prof, gemm_dtype_mapping) {
  prof *p = load_synth();
  double a, b;
  /* fp16 is served by the bf16 table */
  cr_assert(prof_gemm_ns(p, DT_FP16, DT_FP16, 256, 4096, 4096, &a));
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 256, 4096, 4096, &b));
  cr_assert_eq(a, b);
  /* fp8 weights with bf16 activations run the fp8 x fp8 GEMM */
  cr_assert(prof_gemm_ns(p, DT_FP8, DT_BF16, 64, 4096, 4096, &a));
  cr_assert(prof_gemm_ns(p, DT_FP8, DT_FP8, 64, 4096, 4096, &b));
  cr_assert_eq(a, b);
  assert_close(b, gemm_sol(DT_FP8, DT_FP8, 64) / 0.6, "fp8 exact");
  /* weight-only int4 between 8 (0.6) and 64 (0.3) */
  cr_assert(prof_gemm_ns(p, DT_INT4, DT_BF16, 32, 4096, 4096, &a));
  assert_close(a, gemm_sol(DT_INT4, DT_BF16, 32) / lerp_log(8, 0.6, 64, 0.3, 32), "int4 M=32");
  prof_free(p);
}

/* decode grid: batch {1, 4, 16} x kv_len {256, 1024, 4096}; cell (2, 2) not measured */
static const double dec_eff[3][3] = {{0.1, 0.2, 0.4}, {0.3, 0.5, 0.7}, {0.6, 0.8, 0.8 /* held from (2,1) */}};

static double dec_sol(uint32_t b, uint32_t l) {
  prof_work w;
  prof_decode_work(DT_BF16, b, l, 8, 1, 128, &w);
  return sol(&w);
}

Test(prof, decode_exact_between_outside_and_held) {
  prof *p = load_synth();
  double ns;
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 4, 1024, 8, 1, 128, &ns));
  assert_close(ns, dec_sol(4, 1024) / 0.5, "exact");
  /* bilinear in log-log: batch 2 (between 1 and 4), kv_len 512 (between 256 and 1024) */
  double fx = log(2.0 / 1) / log(4.0 / 1), fy = log(512.0 / 256) / log(1024.0 / 256);
  double le = log(dec_eff[0][0]) * (1 - fx) * (1 - fy) + log(dec_eff[0][1]) * (1 - fx) * fy +
              log(dec_eff[1][0]) * fx * (1 - fy) + log(dec_eff[1][1]) * fx * fy;
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 2, 512, 8, 1, 128, &ns));
  assert_close(ns, dec_sol(2, 512) / exp(le), "bilinear");
  /* outside: batch 64 and kv_len 128 clamp to (16, 256) */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 64, 128, 8, 1, 128, &ns));
  assert_close(ns, dec_sol(64, 128) / 0.6, "outside both axes");
  /* the unmeasured cell holds the efficiency of (16, 1024) */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 16, 4096, 8, 1, 128, &ns));
  assert_close(ns, dec_sol(16, 4096) / 0.8, "held cell");
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 32, 8192, 8, 1, 128, &ns));
  assert_close(ns, dec_sol(32, 8192) / 0.8, "beyond the held corner");
  /* kv_len 0 counts as 1 token */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 1, 0, 8, 1, 128, &ns));
  cr_assert(ns > 0);
  prof_free(p);
}

Test(prof, decode_missing_layouts_return_false) {
  prof *p = load_synth();
  double ns;
  cr_assert(!prof_attn_decode_ns(p, DT_BF16, 4, 1024, 16, 2, 128, &ns), "heads not in profile");
  cr_assert(!prof_attn_decode_ns(p, DT_BF16, 4, 1024, 8, 1, 64, &ns), "head_dim not in profile");
  cr_assert(!prof_attn_decode_ns(p, DT_FP8, 4, 1024, 8, 1, 128, &ns), "no fp8 KV table");
  cr_assert(prof_attn_decode_ns(p, DT_FP16, 4, 1024, 8, 1, 128, &ns), "fp16 KV uses the bf16 table");
  cr_assert(!prof_attn_decode_ns(p, DT_BF16, 0, 1024, 8, 1, 128, &ns), "batch 0");
  cr_assert(!prof_attn_prefill_ns(p, 16, 0, 4, 1, 128, &ns), "prefill heads not in profile");
  prof_free(p);
}

static double pre_sol(uint32_t c, uint32_t x) {
  prof_work w;
  prof_prefill_work(c, x, 8, 1, 128, &w);
  return sol(&w);
}

Test(prof, prefill_context_zero_and_log1p_axis) {
  prof *p = load_synth();
  double ns;
  cr_assert(prof_attn_prefill_ns(p, 16, 0, 8, 1, 128, &ns));
  assert_close(ns, pre_sol(16, 0) / 0.05, "exact, ctx 0");
  cr_assert(prof_attn_prefill_ns(p, 256, 1024, 8, 1, 128, &ns));
  assert_close(ns, pre_sol(256, 1024) / 0.4, "exact");
  /* ctx 100 between 0 (0.3) and 1024 (0.4) on log(1 + ctx), chunk 256 exact row */
  double f = log(101.0) / log(1025.0);
  cr_assert(prof_attn_prefill_ns(p, 256, 100, 8, 1, 128, &ns));
  assert_close(ns, pre_sol(256, 100) / exp(log(0.3) * (1 - f) + log(0.4) * f), "ctx 100");
  /* the unmeasured corner (4096, 8192) holds (4096, 1024) = 0.7 */
  cr_assert(prof_attn_prefill_ns(p, 4096, 8192, 8, 1, 128, &ns));
  assert_close(ns, pre_sol(4096, 8192) / 0.7, "held corner");
  prof_free(p);
}

/* ---- malformed files: the message names the file and the field ---------------------------- */

static void expect_error(const char *file, const char *field) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/data/profiles/%s", file);
  prof *p = (prof *)0x1;
  sim_err err = {0};
  int rc = prof_load(&p, tu_src(rel), &err);
  cr_assert_eq(rc, SIM_EINPUT, "%s: expected SIM_EINPUT, got %d", file, rc);
  cr_assert_null(p, "%s: *out must be NULL on error", file);
  cr_assert(strstr(err.msg, file), "%s: message does not name the file: %s", file, err.msg);
  cr_assert(strstr(err.msg, field), "%s: message does not name %s: %s", file, field, err.msg);
}

Test(prof, malformed_files_name_the_field) {
  expect_error("bad_json.json", "bad_json.json:5:89: invalid JSON");
  expect_error("bad_missing_copy.json", "probes.copy_Bps");
  expect_error("bad_ns_length.json", "gemm[0].ns");
  expect_error("bad_m_order.json", "gemm[0].m[2]");
  expect_error("bad_unknown_field.json", "gemm[0].flops");
  expect_error("bad_negative_ns.json", "gemm[0].ns[1]");
  expect_error("bad_fp8_no_peak.json", "probes.peak_flops.fp8");
  expect_error("bad_null_first.json", "attn_decode[0].ns");
  expect_error("bad_row_length.json", "attn_decode[0].ns[1]");
  expect_error("bad_version.json", "version");
}

Test(prof, inline_errors_and_missing_file) {
  static const struct {
    const char *json, *field;
  } cases[] = {
      {"[1, 2]", "(top level)"},
      {"{\"format\": \"x\", \"version\": 1, \"gpu\": \"h\"}", "format"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"\"}", "gpu"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\"}", "probes"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\", \"probes\": {\"copy_Bps\": 1e12, "
       "\"peak_flops\": {\"bf16\": 1e14}}, \"gemm\": [{\"wdtype\": \"bf17\", \"adtype\": \"bf16\", \"n\": 8, "
       "\"k\": 8, \"m\": [1], \"ns\": [1]}]}",
       "gemm[0].wdtype"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\", \"probes\": {\"copy_Bps\": 1e12, "
       "\"peak_flops\": {\"bf16\": 1e14}}, \"gemm\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"n\": 8.5, "
       "\"k\": 8, \"m\": [1], \"ns\": [1]}]}",
       "gemm[0].n"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\", \"probes\": {\"copy_Bps\": 1e12, "
       "\"peak_flops\": {\"bf16\": 1e14}}, \"gemm\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"n\": 8, "
       "\"k\": 8, \"m\": [1], \"ns\": [1]}, {\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"n\": 8, \"k\": 8, "
       "\"m\": [2], \"ns\": [1]}]}",
       "gemm[1]"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\", \"probes\": {\"copy_Bps\": 1e12, "
       "\"peak_flops\": {\"fp8\": 1e14}}}",
       "probes.peak_flops.bf16"},
      {"{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"h\", \"probes\": {\"copy_Bps\": 1e12, "
       "\"peak_flops\": {\"bf16\": 1e14}}, \"attn_prefill\": [{\"q_heads\": 8, \"kv_heads\": 3, \"head_dim\": 128, "
       "\"chunk\": [1], \"ctx\": [0], \"ns\": [[1]]}]}",
       "attn_prefill[0].q_heads"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    prof *p;
    sim_err err = {0};
    cr_assert_eq(prof_parse(&p, cases[i].json, "inline.json", &err), SIM_EINPUT, "case %zu parsed", i);
    cr_assert(strstr(err.msg, "inline.json") && strstr(err.msg, cases[i].field), "case %zu: %s", i, err.msg);
  }
  prof *p;
  sim_err err = {0};
  cr_assert_eq(prof_load(&p, "/nonexistent/dir/p.json", &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "/nonexistent/dir/p.json"), "%s", err.msg);
}

/* ---- leave-one-out ---------------------------------------------------------------------------- */

/* A one-table profile with efficiency eff(M) on a dense M grid. */
static prof *gemm_profile(double (*eff)(double)) {
  static const uint32_t m[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  size_t cap = 8192, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n,
                        "{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"t\", \"probes\": {\"copy_Bps\": "
                        "4e12, \"peak_flops\": {\"bf16\": 8e14}}, \"gemm\": [{\"wdtype\": \"bf16\", \"adtype\": "
                        "\"bf16\", \"n\": 8192, \"k\": 8192, \"m\": [");
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) n += (size_t)snprintf(s + n, cap - n, "%s%u", i ? "," : "", m[i]);
  n += (size_t)snprintf(s + n, cap - n, "], \"ns\": [");
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    prof_work w;
    prof_gemm_work(DT_BF16, DT_BF16, m[i], 8192, 8192, &w);
    double tc = w.flops / 8e14, tm = w.bytes / 4e12, t = (tc > tm ? tc : tm) * 1e9 / eff(m[i]);
    n += (size_t)snprintf(s + n, cap - n, "%s%.17g", i ? "," : "", t);
  }
  snprintf(s + n, cap - n, "]}]}");
  prof *p;
  sim_err err = {0};
  int rc = prof_parse(&p, s, "loo.json", &err);
  free(s);
  cr_assert_eq(rc, SIM_OK, "%s", err.msg);
  return p;
}

static double eff_power(double m) { return 0.2 * pow(m, 0.15); }
static double eff_smooth(double m) { return 0.92 * m / (m + 40.0) + 0.05; }

Test(prof, loo_exact_for_power_law_and_small_for_smooth) {
  prof *p = gemm_profile(eff_power);
  prof_loo l;
  prof_loo_error(p, &l);
  cr_assert_eq(l.n[PK_GEMM], 15);
  /* interior points are predicted exactly by a power law; the two ends hold
   * the neighbour's efficiency (error 1 - 2^-0.15 = 9.9%) */
  cr_assert(l.median[PK_GEMM] < 1e-9, "median %g", l.median[PK_GEMM]);
  cr_assert(fabs(l.max[PK_GEMM] - (1 - pow(2, -0.15)) / pow(2, -0.15)) < 1e-6 ||
                fabs(l.max[PK_GEMM] - (1 - pow(2, -0.15))) < 1e-6,
            "max %g", l.max[PK_GEMM]);
  cr_assert_eq(l.n[PK_DECODE], 0);
  prof_free(p);
  p = gemm_profile(eff_smooth);
  prof_loo_error(p, &l);
  cr_assert(l.median[PK_GEMM] > 1e-4 && l.median[PK_GEMM] < 0.05, "smooth median %g", l.median[PK_GEMM]);
  cr_assert(l.p90[PK_GEMM] >= l.median[PK_GEMM] && l.max[PK_GEMM] >= l.p90[PK_GEMM]);
  prof_free(p);
}

Test(prof, loo_on_synthetic_attention) {
  prof *p = load_synth();
  prof_loo l;
  prof_loo_error(p, &l);
  cr_assert_eq(l.n[PK_DECODE], 8, "8 measured decode cells");
  cr_assert_eq(l.n[PK_PREFILL], 8);
  cr_assert_eq(l.n[PK_GEMM], 4 + 3);
  cr_assert_eq(l.n[PK_GEMM_WQ], 3);
  cr_assert(l.median[PK_DECODE] > 0 && isfinite(l.max[PK_DECODE]));
  cr_assert_str_eq(prof_kind_name(PK_DECODE), "attn_decode");
  prof_free(p);
}
