/* test_prof_v2.c: profile format version 2 (hw/prof.h): GEMM grids
 * (trilinear log-efficiency reproduces a power law exactly, exact grid
 * points, boundary held, null cells from the nearest measured cell), context
 * attention, the nearest head layout, all-reduce interpolation on a synthetic
 * latency + bandwidth curve, the leave-one-out of the new families, and the
 * strict reader (duplicates, unknown keys, attribution). Profiles are built
 * in memory with times = SOL / efficiency of a chosen efficiency. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof.h"
#include "testutil.h"

#define COPY 4e12
#define PEAK 1e15

typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w < b->cap - b->n) {
      b->n += (size_t)w;
      return;
    }
    b->cap = b->cap * 2 + (size_t)w + 256;
    b->s = realloc(b->s, b->cap);
  }
}

static void head(buf *b) {
  b->cap = 4096, b->n = 0, b->s = malloc(b->cap);
  put(b, "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"t\", \"engine\": \"vllm\", \"engine_version\": "
         "\"0.14.0\", \"probes_source\": \"datasheet\", \"probes\": {\"copy_Bps\": %g, \"peak_flops\": {\"bf16\": %g}}",
      COPY, PEAK);
}

static prof *parse_ok(buf *b) {
  prof *p = NULL;
  sim_err err = {0};
  int rc = prof_parse(&p, b->s, "v2.json", &err);
  cr_assert_eq(rc, SIM_OK, "%s", err.msg);
  free(b->s);
  return p;
}

static void parse_bad(const char *json, const char *field, const char *what) {
  prof *p = NULL;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p, json, "bad.json", &err), SIM_EINPUT, "parsed: %s", json);
  cr_assert(strstr(err.msg, "bad.json") && strstr(err.msg, field) && strstr(err.msg, what), "'%s' '%s' in: %s", field,
            what, err.msg);
}

static double sol(const prof_work *w) {
  double tc = w->flops / PEAK, tm = w->bytes / COPY;
  return (tc > tm ? tc : tm) * 1e9;
}

static double gsol(double m, double n, double k) {
  prof_work w;
  prof_gemm_work(DT_BF16, DT_BF16, (uint32_t)m, (uint32_t)n, (uint32_t)k, &w);
  return sol(&w);
}

static double eff_pow(double m, double n, double k) { return 0.02 * pow(m, 0.3) * pow(n, 0.1) * pow(k, 0.05); }

static const uint32_t GM[] = {1, 8, 64, 512}, GN[] = {256, 4096}, GK[] = {256, 1024, 8192};

/* A grid profile of efficiency eff; cell `skip` (flat index, -1 none) is null. */
static prof *grid_profile(double (*eff)(double, double, double), int skip) {
  buf b;
  head(&b);
  put(&b, ", \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"m\": [1, 8, 64, 512], \"n\": [256, 4096], "
          "\"k\": [256, 1024, 8192], \"ns\": [");
  int q = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 3; l++, q++) {
        if (q == skip) put(&b, "%snull", q ? ", " : "");
        else put(&b, "%s%.17g", q ? ", " : "", gsol(GM[i], GN[j], GK[l]) / eff(GM[i], GN[j], GK[l]));
      }
  put(&b, "]}]}");
  return parse_ok(&b);
}

static void close_to(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= 1e-9 * fabs(want), "%s: got %.12g want %.12g", what, got, want);
}

Test(prof_v2, grid_trilinear_reproduces_a_power_law) {
  prof *p = grid_profile(eff_pow, -1);
  cr_assert_eq(prof_format_version(p), 2);
  cr_assert_str_eq(prof_engine(p), "vllm");
  cr_assert_eq(prof_table_count(p, PK_GEMM_GRID), 1);
  double ns;
  for (int i = 0; i < 4; i++) {
    cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, GM[i], 4096, 1024, &ns));
    close_to(ns, gsol(GM[i], 4096, 1024) / eff_pow(GM[i], 4096, 1024), "exact grid point");
  }
  static const uint32_t q[][3] = {{20, 1000, 3000}, {3, 300, 5000}, {100, 2048, 512}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(q); i++) {
    cr_assert(prof_gemm_ns(p, DT_FP16, DT_FP16, q[i][0], q[i][1], q[i][2], &ns), "fp16 uses the bf16 grid");
    close_to(ns, gsol(q[i][0], q[i][1], q[i][2]) / eff_pow(q[i][0], q[i][1], q[i][2]), "inside the grid");
  }
  /* outside: the boundary efficiency held on every axis */
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 2000, 100000, 100, &ns));
  close_to(ns, gsol(2000, 100000, 100) / eff_pow(512, 4096, 256), "held boundary");
  cr_assert(!prof_gemm_ns(p, DT_FP8, DT_FP8, 8, 256, 256, &ns), "no fp8 grid");
  cr_assert(!prof_gemm_ns(p, DT_BF16, DT_BF16, 0, 256, 256, &ns), "M 0");
  prof_free(p);
}

/* A saturating efficiency (latency-bound small calls, a plateau for large
 * ones), the shape measured GEMMs have: time grows with M between points. */
static double eff_sat(double m, double n, double k) { return 0.85 * m * n / (m * n + 30000.0) * (1 - 200.0 / (k + 400)); }

Test(prof_v2, grid_point_between_two_points_lies_between_their_times) {
  prof *p = grid_profile(eff_sat, -1);
  for (int i = 0; i + 1 < 4; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 3; l++) {
        double t0, t1, t;
        cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, GM[i], GN[j], GK[l], &t0));
        cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, GM[i + 1], GN[j], GK[l], &t1));
        for (uint32_t m = GM[i] + 1; m < GM[i + 1]; m += (GM[i + 1] - GM[i] + 6) / 7) {
          cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, m, GN[j], GK[l], &t));
          cr_assert(t >= fmin(t0, t1) && t <= fmax(t0, t1), "m %u n %u k %u: %g not in [%g, %g]", m, GN[j], GK[l], t,
                    t0, t1);
        }
      }
  prof_free(p);
}

Test(prof_v2, grid_null_cell_takes_the_nearest_measured_cell) {
  /* cell (512, 4096, 8192) is the last one (index 23); its measured
   * neighbours one step away are (64, 4096, 8192) (index 17), (512, 256, 8192)
   * (20) and (512, 4096, 1024) (22): the first in m-major order serves */
  prof *p = grid_profile(eff_pow, 23);
  double ns;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 512, 4096, 8192, &ns));
  close_to(ns, gsol(512, 4096, 8192) / eff_pow(64, 4096, 8192), "held from (64, 4096, 8192)");
  prof_free(p);
  /* a null cell four steps from any measurement is refused */
  parse_bad("{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"t\", \"probes\": {\"copy_Bps\": 1e12, "
            "\"peak_flops\": {\"bf16\": 1e14}}, \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", "
            "\"m\": [1, 2, 3, 4, 5], \"n\": [8], \"k\": [8], \"ns\": [1000, null, null, null, null]}]}",
            "gemm_grid[0].ns", "(m 5, n 8, k 8) is null");
}

/* ---- attention --------------------------------------------------------------------------- */

static double dsol(uint32_t b, uint32_t l, uint32_t qh, uint32_t kvh, uint32_t hd) {
  prof_work w;
  prof_decode_work(DT_BF16, b, l, qh, kvh, hd, &w);
  return sol(&w);
}

static double csol(uint32_t b, uint32_t s, uint32_t qh, uint32_t kvh, uint32_t hd) {
  prof_work w;
  prof_context_work(DT_BF16, b, s, qh, kvh, hd, &w);
  return sol(&w);
}

static double eff2(double x, double y, double scale) { return scale * pow(x, 0.2) * pow(y, 0.1); }

static const uint32_t AX[] = {1, 4, 16}, AY[] = {16, 256, 4096};

static void attn_table(buf *b, bool context, uint32_t qh, uint32_t kvh, uint32_t hd, double scale, bool first) {
  put(b, "%s{\"kv_dtype\": \"bf16\", \"q_heads\": %u, \"kv_heads\": %u, \"head_dim\": %u, \"batch\": [1, 4, 16], "
         "\"%s\": [16, 256, 4096], \"ns\": [",
      first ? "" : ", ", qh, kvh, hd, context ? "isl" : "kv_len");
  for (int i = 0; i < 3; i++) {
    put(b, "%s[", i ? ", " : "");
    for (int j = 0; j < 3; j++) {
      double s = context ? csol(AX[i], AY[j], qh, kvh, hd) : dsol(AX[i], AY[j], qh, kvh, hd);
      put(b, "%s%.17g", j ? ", " : "", s / eff2(AX[i], AY[j], scale));
    }
    put(b, "]");
  }
  put(b, "]}");
}

static prof *attn_profile(void) {
  buf b;
  head(&b);
  put(&b, ", \"attn_decode\": [");
  attn_table(&b, false, 8, 1, 128, 0.1, true);
  attn_table(&b, false, 32, 8, 128, 0.2, false);
  attn_table(&b, false, 8, 1, 64, 0.3, false);
  put(&b, "], \"attn_context\": [");
  attn_table(&b, true, 8, 1, 128, 0.05, true);
  put(&b, "]}");
  return parse_ok(&b);
}

Test(prof_v2, nearest_head_layout_holds_its_efficiency) {
  prof *p = attn_profile();
  double ns;
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 4, 256, 32, 8, 128, &ns));
  close_to(ns, dsol(4, 256, 32, 8, 128) / eff2(4, 256, 0.2), "own layout, exact point");
  /* (16, 2): (8, 1) is at distance log 2 on kv_heads, (32, 8) at log 4: the (8, 1) table serves */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 4, 256, 16, 2, 128, &ns));
  close_to(ns, dsol(4, 256, 16, 2, 128) / eff2(4, 256, 0.1), "nearest (8, 1)");
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 2, 1000, 16, 2, 128, &ns));
  close_to(ns, dsol(2, 1000, 16, 2, 128) / eff2(2, 1000, 0.1), "nearest (8, 1), between points");
  /* (64, 8): group 8 vs 4 at equal kv_heads: (32, 8) */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 16, 4096, 64, 8, 128, &ns));
  close_to(ns, dsol(16, 4096, 64, 8, 128) / eff2(16, 4096, 0.2), "nearest (32, 8)");
  /* head_dim 64 has its own table; 256 and fp8 have none */
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 1, 16, 4, 4, 64, &ns));
  close_to(ns, dsol(1, 16, 4, 4, 64) / eff2(1, 16, 0.3), "head_dim 64");
  cr_assert(!prof_attn_decode_ns(p, DT_BF16, 1, 16, 8, 1, 256, &ns));
  cr_assert(!prof_attn_decode_ns(p, DT_FP8, 1, 16, 8, 1, 128, &ns));
  prof_free(p);
}

Test(prof_v2, context_attention_exact_bilinear_and_held) {
  prof *p = attn_profile();
  cr_assert_eq(prof_table_count(p, PK_CONTEXT), 1);
  double ns;
  cr_assert(prof_attn_context_ns(p, DT_BF16, 4, 256, 8, 1, 128, &ns));
  close_to(ns, csol(4, 256, 8, 1, 128) / eff2(4, 256, 0.05), "exact");
  cr_assert(prof_attn_context_ns(p, DT_FP16, 2, 1000, 8, 1, 128, &ns));
  close_to(ns, csol(2, 1000, 8, 1, 128) / eff2(2, 1000, 0.05), "bilinear in logs (power law)");
  cr_assert(prof_attn_context_ns(p, DT_BF16, 64, 8, 8, 1, 128, &ns));
  close_to(ns, csol(64, 8, 8, 1, 128) / eff2(16, 16, 0.05), "held outside");
  cr_assert(prof_attn_context_ns(p, DT_BF16, 4, 256, 16, 2, 128, &ns), "nearest layout");
  cr_assert(!prof_attn_context_ns(p, DT_BF16, 0, 256, 8, 1, 128, &ns) &&
            !prof_attn_context_ns(p, DT_BF16, 4, 0, 8, 1, 128, &ns));
  prof_work w;
  prof_context_work(DT_FP8, 2, 100, 8, 2, 128, &w);
  cr_assert(w.flops == 4.0 * 8 * 128 * 2 * 100 * 101 / 2 && w.compute == DT_BF16);
  cr_assert(w.bytes == 2.0 * 100 * (2 * 8 * 128 * 2 + 2 * 2 * 128 * 2 + 2 * 2 * 128 * 1));
  prof_free(p);
}

/* ---- all-reduce ----------------------------------------------------------------------------- */

#define LAT 5000.0  /* ns */
#define BW 100.0    /* bytes per ns */

static prof *ar_profile(double (*t)(double)) {
  buf b;
  head(&b);
  put(&b, ", \"allreduce\": [{\"impl\": \"custom\", \"mode\": \"graph\", \"dtype\": \"bf16\", \"num_gpus\": 4, "
          "\"bytes\": [1000, 10000, 100000, 1000000, 10000000], \"ns\": [");
  for (int i = 0; i < 5; i++) put(&b, "%s%.17g", i ? ", " : "", t(1000 * pow(10, i)));
  put(&b, "]}, {\"impl\": \"nccl\", \"dtype\": \"fp16\", \"num_gpus\": 4, \"bytes\": [1000], \"ns\": [9000]}]}");
  return parse_ok(&b);
}

static double t_curve(double bytes) { return LAT + bytes / BW; }
static double t_flat(double bytes) { return LAT + 0 * bytes; }
static double t_line(double bytes) { return bytes / BW; }

Test(prof_v2, allreduce_latency_plus_bandwidth) {
  prof *p = ar_profile(t_curve);
  cr_assert_eq(prof_table_count(p, PK_ALLREDUCE), 2);
  double ns;
  for (int i = 0; i < 5; i++) {
    double b = 1000 * pow(10, i);
    cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, b, &ns));
    close_to(ns, t_curve(b), "exact size");
  }
  /* between: log-log linear */
  double f = log(3e4 / 1e4) / log(10.0);
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, 3e4, &ns));
  close_to(ns, exp(log(t_curve(1e4)) * (1 - f) + log(t_curve(1e5)) * f), "log-log between");
  cr_assert(ns > t_curve(1e4) && ns < t_curve(1e5));
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, 10, &ns));
  close_to(ns, t_curve(1000), "below: the smallest size's time");
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, 4e7, &ns));
  close_to(ns, t_curve(1e7) * 4, "above: proportional to bytes");
  cr_assert(prof_allreduce_ns(p, PROF_AR_NCCL, 4, 5e6, &ns));
  close_to(ns, 9000 * 5e3, "one-point table: proportional above");
  cr_assert(!prof_allreduce_ns(p, PROF_AR_CUSTOM_EAGER, 4, 1000, &ns), "no eager table");
  cr_assert(!prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 8, 1000, &ns), "no 8-GPU table");
  cr_assert_str_eq(prof_ar_impl_name(PROF_AR_CUSTOM_EAGER), "custom eager");
  prof_loo l;
  prof_loo_error(p, &l);
  cr_assert_eq(l.n[PK_ALLREDUCE], 5, "one-point tables predict nothing");
  prof_free(p);
  /* exact on the latency plateau and on the bandwidth line */
  p = ar_profile(t_flat);
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, 2.5e5, &ns));
  close_to(ns, LAT, "plateau");
  prof_free(p);
  p = ar_profile(t_line);
  cr_assert(prof_allreduce_ns(p, PROF_AR_CUSTOM_GRAPH, 4, 2.5e5, &ns));
  close_to(ns, t_line(2.5e5), "bandwidth line");
  prof_loo_error(p, &l);
  cr_assert(l.median[PK_ALLREDUCE] < 1e-9, "interior and upper end exact on the line: %g", l.median[PK_ALLREDUCE]);
  prof_free(p);
}

Test(prof_v2, leave_one_out_of_grids_and_context) {
  prof *p = grid_profile(eff_pow, -1);
  prof_loo l;
  prof_loo_error(p, &l);
  cr_assert_eq(l.n[PK_GEMM_GRID], 24);
  /* every cell is bracketed on some axis except the 8 corners... the power law is exact there */
  cr_assert(l.median[PK_GEMM_GRID] < 1e-9, "median %g", l.median[PK_GEMM_GRID]);
  cr_assert_str_eq(prof_kind_name(PK_GEMM_GRID), "gemm_grid");
  cr_assert_str_eq(prof_kind_name(PK_CONTEXT), "attn_context");
  cr_assert_str_eq(prof_kind_name(PK_ALLREDUCE), "allreduce");
  prof_free(p);
  p = attn_profile();
  prof_loo_error(p, &l);
  cr_assert_eq(l.n[PK_CONTEXT], 9);
  cr_assert_eq(l.n[PK_DECODE], 27);
  prof_free(p);
}

/* ---- the strict reader ------------------------------------------------------------------------ */

#define P2 "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"t\", \"probes\": {\"copy_Bps\": 1e12, " \
           "\"peak_flops\": {\"bf16\": 1e14}}"
#define G1 "{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"m\": [1], \"n\": [8], \"k\": [8], \"ns\": [100]}"
#define C1 "{\"kv_dtype\": \"bf16\", \"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, \"batch\": [1], \"isl\": [16], " \
           "\"ns\": [[100]]}"
#define A1 "{\"impl\": \"custom\", \"mode\": \"eager\", \"dtype\": \"bf16\", \"num_gpus\": 2, \"bytes\": [256], " \
           "\"ns\": [100]}"

Test(prof_v2, strict_reader_names_file_and_field) {
  parse_bad(P2 ", \"gemm_grid\": [" G1 ", " G1 "]}", "gemm_grid[1]", "duplicate");
  parse_bad(P2 ", \"attn_context\": [" C1 ", " C1 "]}", "attn_context[1]", "duplicate");
  parse_bad(P2 ", \"allreduce\": [" A1 ", " A1 "]}", "allreduce[1]", "duplicate");
  parse_bad(P2 ", \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"m\": [1], \"n\": [8], \"k\": [8], "
               "\"ns\": [100], \"layer\": \"x\"}]}",
            "gemm_grid[0]", "layer");
  parse_bad(P2 ", \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"m\": [1, 2], \"n\": [8], \"k\": [8], "
               "\"ns\": [100]}]}",
            "gemm_grid[0].ns", "2 values");
  parse_bad(P2 ", \"gemm_grid\": [{\"wdtype\": \"fp8\", \"adtype\": \"fp8\", \"m\": [1], \"n\": [8], \"k\": [8], "
               "\"ns\": [100]}]}",
            "probes.peak_flops.fp8", "missing");
  parse_bad(P2 ", \"allreduce\": [{\"impl\": \"custom\", \"dtype\": \"bf16\", \"num_gpus\": 2, \"bytes\": [256], "
               "\"ns\": [100]}]}",
            "allreduce[0].mode", "missing");
  parse_bad(P2 ", \"allreduce\": [{\"impl\": \"nccl\", \"mode\": \"graph\", \"dtype\": \"bf16\", \"num_gpus\": 2, "
               "\"bytes\": [256], \"ns\": [100]}]}",
            "allreduce[0].mode", "only custom");
  parse_bad(P2 ", \"allreduce\": [{\"impl\": \"custom\", \"mode\": \"eager\", \"dtype\": \"bf16\", \"num_gpus\": 1, "
               "\"bytes\": [256], \"ns\": [100]}]}",
            "allreduce[0].num_gpus", "at least 2");
  parse_bad(P2 ", \"allreduce\": [{\"impl\": \"custom\", \"mode\": \"eager\", \"dtype\": \"bf16\", \"num_gpus\": 2, "
               "\"bytes\": [256, 128], \"ns\": [100, 90]}]}",
            "allreduce[0].bytes[1]", "greater");
  parse_bad(P2 ", \"attn_context\": [{\"kv_dtype\": \"bf16\", \"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, "
               "\"batch\": [1], \"isl\": [16], \"block_size\": 16, \"ns\": [[100]]}]}",
            "attn_context[0]", "block_size");
  parse_bad(P2 ", \"probes_source\": \"guess\"}", "probes_source", "datasheet");
  /* version 2 keys in a version 1 file are unknown keys */
  parse_bad("{\"format\": \"servesim-profile\", \"version\": 1, \"gpu\": \"t\", \"engine\": \"vllm\", \"probes\": "
            "{\"copy_Bps\": 1e12, \"peak_flops\": {\"bf16\": 1e14}}}",
            "engine", "unknown");
  /* imported tables need their attribution, engine and version */
  parse_bad(P2 ", \"engine\": \"vllm\", \"engine_version\": \"0.14.0\", \"kernel_db\": {\"repository\": \"r\", "
               "\"commit\": \"abc123\", \"gpu_dir\": \"h100_sxm\", \"framework_dir\": \"vllm-0.14.0\"}}",
            "attribution", "Apache-2.0");
  parse_bad(P2 ", \"engine\": \"vllm\", \"engine_version\": \"0.14.0\", \"attribution\": \"Apache-2.0, commit "
               "zzz\", \"kernel_db\": {\"repository\": \"r\", \"commit\": \"abc123\", \"gpu_dir\": \"h100_sxm\", "
               "\"framework_dir\": \"vllm-0.14.0\"}}",
            "attribution", "abc123");
  parse_bad(P2 ", \"attribution\": \"Apache-2.0 abc123\", \"kernel_db\": {\"repository\": \"r\", \"commit\": "
               "\"abc123\", \"gpu_dir\": \"h100_sxm\", \"framework_dir\": \"vllm-0.14.0\"}}",
            "engine", "missing");
  prof *p;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p,
                          P2 ", \"engine\": \"vllm\", \"engine_version\": \"0.14.0\", \"attribution\": \"Apache-2.0 "
                             "abc123\", \"kernel_db\": {\"repository\": \"r\", \"commit\": \"abc123\", \"gpu_dir\": "
                             "\"h100_sxm\", \"framework_dir\": \"vllm-0.14.0\"}}",
                          "ok.json", &err),
               SIM_OK, "%s", err.msg);
  cr_assert_str_eq(prof_origin(p), "kernel-db: NVIDIA AIConfigurator, vllm 0.14.0 on h100_sxm");
  prof_free(p);
}

/* A non-gated kernel's table (its "kernel" names "nongated": TensorRT-LLM's moe_torch_flow_nongated, Nemotron-3's
 * relu2 experts) is kept apart from a gated one of the same shape: each answers only for its own kind of expert,
 * and the two together are not a duplicate. */
Test(prof_v2, moe_nongated_tables_apart_from_gated) {
  buf b;
  head(&b);
  put(&b, ", \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 2688, \"inter\": 1856, \"topk\": 6, \"experts\": 128, "
          "\"tp\": 1, \"ep\": 1, \"distribution\": \"balanced\", \"kernel\": \"moe_torch_flow_nongated\", "
          "\"tokens\": [1, 16], \"ns\": [30000, 60000]}, {\"dtype\": \"bfloat16\", \"hidden\": 2688, \"inter\": 1856, "
          "\"topk\": 6, \"experts\": 128, \"tp\": 1, \"ep\": 1, \"distribution\": \"balanced\", \"kernel\": "
          "\"moe_torch_flow_cutlass\", \"tokens\": [1, 16], \"ns\": [40000, 80000]}]}");
  prof *p = parse_ok(&b);
  cr_assert_eq(prof_moe_tables(p), 2);
  double ns;
  cr_assert(prof_moe_ns(p, "bfloat16", true, 16, 2688, 1856, 6, 128, 1, 1, "balanced", &ns));
  cr_assert_float_eq(ns, 60000, 1e-6, "the non-gated table");
  cr_assert(prof_moe_ns(p, "bfloat16", false, 16, 2688, 1856, 6, 128, 1, 1, "balanced", &ns));
  cr_assert_float_eq(ns, 80000, 1e-6, "the gated table");
  prof_free(p);
  /* a non-gated table alone answers no gated lookup */
  head(&b);
  put(&b, ", \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 2688, \"inter\": 1856, \"topk\": 6, \"experts\": 128, "
          "\"tp\": 1, \"ep\": 1, \"distribution\": \"balanced\", \"kernel\": \"moe_torch_flow_nongated\", "
          "\"tokens\": [1, 16], \"ns\": [30000, 60000]}]}");
  p = parse_ok(&b);
  cr_assert_not(prof_moe_ns(p, "bfloat16", false, 16, 2688, 1856, 6, 128, 1, 1, "balanced", &ns));
  prof_free(p);
}

/* Fused-MoE tables: one shape (dtype, sizes, top-k, experts, TP, EP, routing)
 * by tokens; log(time) linear in log(tokens) between measured counts, the
 * smallest held below, proportional above; any other shape has no data. */
Test(prof_v2, moe_tables_interpolate_by_tokens) {
  buf b;
  head(&b);
  put(&b, ", \"moe\": [{\"dtype\": \"fp8_block\", \"hidden\": 4096, \"inter\": 1536, \"topk\": 8, \"experts\": 128, "
          "\"tp\": 2, \"ep\": 1, \"distribution\": \"balanced\", \"tokens\": [1, 16, 256], \"ns\": [50000, 200000, "
          "800000]}]}");
  prof *p = parse_ok(&b);
  cr_assert_eq(prof_moe_tables(p), 1);
  double ns;
  cr_assert(prof_moe_ns(p, "fp8_block", false, 16, 4096, 1536, 8, 128, 2, 1, "balanced", &ns));
  cr_assert_float_eq(ns, 200000, 1e-6, "a measured count");
  cr_assert(prof_moe_ns(p, "fp8_block", false, 4, 4096, 1536, 8, 128, 2, 1, "balanced", &ns));
  cr_assert_float_eq(ns, 50000 * pow(4.0, 0.5), 1e-3, "halfway in log tokens: the geometric mean");
  cr_assert(prof_moe_ns(p, "fp8_block", false, 1024, 4096, 1536, 8, 128, 2, 1, "balanced", &ns));
  cr_assert_float_eq(ns, 800000 * 4.0, 1e-6, "beyond the last count: proportional to tokens");
  cr_assert_not(prof_moe_ns(p, "fp8_block", false, 16, 4096, 1536, 8, 128, 4, 1, "balanced", &ns), "another TP");
  cr_assert_not(prof_moe_ns(p, "fp8", false, 16, 4096, 1536, 8, 128, 2, 1, "balanced", &ns), "another dtype");
  cr_assert_not(prof_moe_ns(p, "fp8_block", false, 16, 4096, 1536, 8, 128, 2, 1, "power_law_1.01", &ns), "another routing");
  prof_free(p);
  parse_bad("{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"t\", \"probes\": {\"copy_Bps\": 1e12, "
            "\"peak_flops\": {\"bf16\": 1e15}}, \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 8, \"inter\": 8, \"topk\": "
            "4, \"experts\": 2, \"tp\": 1, \"ep\": 1, \"distribution\": \"balanced\", \"tokens\": [1], \"ns\": [5]}]}",
            "moe[0].topk", "exceeds experts");
  parse_bad("{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"t\", \"probes\": {\"copy_Bps\": 1e12, "
            "\"peak_flops\": {\"bf16\": 1e15}}, \"moe\": [{\"dtype\": \"bfloat16\", \"hidden\": 8, \"inter\": 8, \"topk\": "
            "1, \"experts\": 2, \"tp\": 1, \"ep\": 1, \"distribution\": \"balanced\", \"tokens\": [1, 2], \"ns\": [5]}]}",
            "moe[0].ns", "expected an array of 2");
}

/* Block-scaled FP8 grids ("scaling": "block") are their own lookup key beside the per-tensor FP8 grid:
 * prof_gemm_ns never returns them, prof_gemm_block_ns returns only them; the key is refused on other
 * dtypes or with another value. */
Test(prof_v2, block_scaled_fp8_grid_is_its_own_table) {
  buf b;
  head(&b);
  char *pk = strstr(b.s, "\"bf16\": "); /* the probes need an fp8 peak */
  cr_assert(pk);
  b.n = (size_t)(pk - b.s);
  put(&b, "\"bf16\": %g, \"fp8\": %g}}", PEAK, 2 * PEAK);
  put(&b, ", \"gemm_grid\": [{\"wdtype\": \"fp8\", \"adtype\": \"fp8\", \"m\": [1], \"n\": [4096], \"k\": [4096], "
          "\"ns\": [17000]}, {\"wdtype\": \"fp8\", \"adtype\": \"fp8\", \"scaling\": \"block\", \"m\": [1], \"n\": "
          "[4096], \"k\": [4096], \"ns\": [35000]}]}");
  prof *p = parse_ok(&b);
  double ns = 0;
  cr_assert(prof_gemm_ns(p, DT_FP8, DT_FP8, 1, 4096, 4096, &ns));
  cr_assert_float_eq(ns, 17000.0, 1e-9, "per-tensor grid: %g", ns);
  cr_assert(prof_gemm_block_ns(p, 1, 4096, 4096, &ns));
  cr_assert_float_eq(ns, 35000.0, 1e-9, "block-scaled grid: %g", ns);
  prof_free(p);
  /* without a block grid there is no block answer */
  p = grid_profile(eff_pow, -1);
  cr_assert_not(prof_gemm_block_ns(p, 1, 4096, 4096, &ns));
  prof_free(p);
  parse_bad(P2 ", \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"scaling\": \"block\", \"m\": [1], "
               "\"n\": [8], \"k\": [8], \"ns\": [100]}]}",
            "gemm_grid[0].scaling", "must be fp8");
  parse_bad(P2 ", \"gemm_grid\": [{\"wdtype\": \"bf16\", \"adtype\": \"bf16\", \"scaling\": \"group\", \"m\": [1], "
               "\"n\": [8], \"k\": [8], \"ns\": [100]}]}",
            "gemm_grid[0].scaling", "\"block\"");
}

/* MLA module tables: ragged rows of the measured cells; along a row log-log between lengths, held below,
 * linear with the last slope beyond; across rows log-log in batch, held below, proportional above. */
#define MLA_HEAD "\"kv_dtype\": \"bf16\", \"gemm\": \"fp8_block\", \"heads\": 16, \"hidden\": 7168, \"q_lora\": 1536, " \
                 "\"kv_lora\": 512, \"qk_nope\": 128, \"qk_rope\": 64, \"v_head\": 128"
Test(prof_v2, mla_module_rows_interpolate_and_extrapolate) {
  buf b;
  head(&b);
  put(&b, ", \"mla_module\": [{\"phase\": \"generation\", " MLA_HEAD ", \"batch\": [1, 4], \"len\": [1, 100, 1000], "
          "\"ns\": [[90000, 100000, 200000], [120000, 160000, null]]}, {\"phase\": \"context\", " MLA_HEAD
          ", \"batch\": [1], \"len\": [16, 1024], \"ns\": [[95000, 400000]]}]}");
  prof *p = parse_ok(&b);
  cr_assert_eq(prof_mla_tables(p), 2);
  prof_mla_key k = {.context = false, .kv_dtype = DT_BF16, .gemm = "fp8_block", .heads = 16,
                    .dims = {7168, 1536, 512, 128, 64, 128}};
  double ns;
  cr_assert(prof_mla_module_ns(p, &k, 1, 100, &ns));
  close_to(ns, 100000, "exact cell");
  cr_assert(prof_mla_module_ns(p, &k, 1, 10, &ns));
  close_to(ns, 90000 * pow(100000.0 / 90000, log(10) / log(100)), "log-log between lengths");
  cr_assert(prof_mla_module_ns(p, &k, 1, 2000, &ns));
  close_to(ns, 200000 + (200000 - 100000) / 900.0 * 1000, "linear with the last slope beyond the row");
  /* batch 4's row stops at 100 (null beyond): its own last slope extends it */
  cr_assert(prof_mla_module_ns(p, &k, 4, 1000, &ns));
  close_to(ns, 160000 + (160000 - 120000) / 99.0 * 900, "ragged row extended");
  cr_assert(prof_mla_module_ns(p, &k, 2, 1, &ns));
  close_to(ns, exp(log(90000) * 0.5 + log(120000) * 0.5), "log-log between batches");
  cr_assert(prof_mla_module_ns(p, &k, 8, 1, &ns));
  close_to(ns, 120000 * 2, "proportional above the last batch");
  k.context = true;
  cr_assert(prof_mla_module_ns(p, &k, 1, 8, &ns));
  close_to(ns, 95000, "held below the first length");
  k.heads = 8;
  cr_assert_not(prof_mla_module_ns(p, &k, 1, 8, &ns), "no table of 8 heads");
  k.heads = 16, k.dims.hidden = 5120;
  cr_assert_not(prof_mla_module_ns(p, &k, 1, 8, &ns), "other dimensions");
  prof_free(p);
  parse_bad(P2 ", \"mla_module\": [{\"phase\": \"decode\", " MLA_HEAD ", \"batch\": [1], \"len\": [1], "
               "\"ns\": [[1]]}]}",
            "mla_module[0].phase", "generation");
  parse_bad(P2 ", \"mla_module\": [{\"phase\": \"context\", " MLA_HEAD ", \"batch\": [1, 2], \"len\": [1], "
               "\"ns\": [[1]]}]}",
            "mla_module[0].ns", "2 rows");
  parse_bad(P2 ", \"mla_module\": [{\"phase\": \"context\", " MLA_HEAD ", \"batch\": [1], \"len\": [1, 2], "
               "\"ns\": [[null, null]]}]}",
            "mla_module[0].ns", "no measured value");
  parse_bad(P2 ", \"mla_module\": [{\"phase\": \"context\", " MLA_HEAD ", \"batch\": [1], \"len\": [1], "
               "\"ns\": [[1]]}, {\"phase\": \"context\", " MLA_HEAD ", \"batch\": [1], \"len\": [1], \"ns\": [[1]]}]}",
            "mla_module[1]", "duplicate");
}

/* NCCL all_gather and reduce_scatter tables ("op") are their own keys beside NCCL's all-reduce; custom
 * (engine) tables cannot name an op; an unknown op is refused. */
#define AROW(op) "{\"impl\": \"nccl\", " op "\"dtype\": \"bf16\", \"num_gpus\": 2, \"bytes\": [256, 65536], \"ns\": "
Test(prof_v2, nccl_gather_and_scatter_tables) {
  const char *json = P2 ", \"allreduce\": [" AROW("") "[5000, 9000]}, " AROW("\"op\": \"all_gather\", ")
      "[4000, 6000]}, " AROW("\"op\": \"reduce_scatter\", ") "[3000, 5000]}]}";
  prof *p = NULL;
  sim_err err = {0};
  cr_assert_eq(prof_parse(&p, json, "ag.json", &err), SIM_OK, "%s", err.msg);
  double ns;
  cr_assert(prof_allreduce_ns(p, PROF_AR_NCCL, 2, 65536, &ns));
  close_to(ns, 9000, "all_reduce");
  cr_assert(prof_allreduce_ns(p, PROF_AG_NCCL, 2, 65536, &ns));
  close_to(ns, 6000, "all_gather");
  cr_assert(prof_allreduce_ns(p, PROF_RS_NCCL, 2, 256, &ns));
  close_to(ns, 3000, "reduce_scatter");
  cr_assert_str_eq(prof_ar_impl_name(PROF_RS_NCCL), "nccl reduce_scatter");
  prof_free(p);
  parse_bad(P2 ", \"allreduce\": [" AROW("\"op\": \"alltoall\", ") "[1, 2]}]}", "allreduce[0].op", "all_gather");
  parse_bad(P2 ", \"allreduce\": [{\"impl\": \"custom\", \"mode\": \"graph\", \"op\": \"all_gather\", \"dtype\": "
               "\"bf16\", \"num_gpus\": 2, \"bytes\": [256], \"ns\": [100]}]}",
            "allreduce[0].op", "only NCCL");
}

/* Sliding-window tables ("window"): their own tables beside the full-attention ones of the same layout, asked
 * only with their window; the speed of light counts the windowed work, so past the measured lengths a decode
 * stays flat (the kernel reads W tokens whatever the context) where a full-attention table's time grows; the
 * nearest head layout is sought among the same window's tables; a window on a prefill table, a bad value and a
 * duplicate (same window) are refused by field. */
Test(prof_v2, sliding_window_tables_serve_their_window_only) {
  buf b;
  head(&b);
  put(&b, ", \"attn_decode\": [{\"kv_dtype\": \"bf16\", \"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, \"batch\": "
          "[1, 32], \"kv_len\": [128, 4096], \"ns\": [[10000, 14000], [14000, 78000]]}, {\"kv_dtype\": \"bf16\", "
          "\"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, \"window\": 128, \"batch\": [1, 32], \"kv_len\": [128, "
          "4096], \"ns\": [[10000, 15000], [14000, 16000]]}], \"attn_context\": [{\"kv_dtype\": \"bf16\", \"q_heads\": "
          "8, \"kv_heads\": 1, \"head_dim\": 64, \"window\": 128, \"batch\": [1], \"isl\": [1024, 8192], \"ns\": "
          "[[30000, 185000]]}]}");
  prof *p = parse_ok(&b);
  double full, win;
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 32, 4096, 8, 1, 64, &full) && full == 78000);
  cr_assert(prof_attn_window_decode_ns(p, 128, DT_BF16, 32, 4096, 8, 1, 64, &win) && win == 16000);
  cr_assert(!prof_attn_window_decode_ns(p, 256, DT_BF16, 32, 4096, 8, 1, 64, &win), "another window: no table");
  cr_assert(!prof_attn_window_decode_ns(p, 0, DT_BF16, 32, 4096, 8, 1, 64, &win), "window 0 is full attention");
  /* past the grid: the window table holds its time (same windowed work), the full one grows with the context */
  cr_assert(prof_attn_window_decode_ns(p, 128, DT_BF16, 32, 65536, 8, 1, 64, &win));
  cr_assert_float_eq(win, 16000.0, 1e-6, "flat beyond the measured lengths: %g", win);
  cr_assert(prof_attn_decode_ns(p, DT_BF16, 32, 65536, 8, 1, 64, &full) && full > 4 * 78000, "%g", full);
  /* nearest layout among window-128 tables: 16/2 heads take the 8/1 table's efficiency */
  cr_assert(prof_attn_window_decode_ns(p, 128, DT_BF16, 32, 4096, 16, 2, 64, &win) && win > 16000, "%g", win);
  /* context: the windowed prompt between measured lengths, no full-attention context table to confuse it with */
  cr_assert(!prof_attn_context_ns(p, DT_BF16, 1, 4096, 8, 1, 64, &full));
  cr_assert(prof_attn_window_context_ns(p, 128, DT_BF16, 1, 4096, 8, 1, 64, &win) && win > 30000 && win < 185000);
  cr_assert_eq(prof_window_tables(p, 128), 2);
  cr_assert_eq(prof_window_tables(p, 64), 0);
  prof_free(p);
  parse_bad(P2 ", \"attn_decode\": [{\"kv_dtype\": \"bf16\", \"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, "
               "\"window\": \"wide\", \"batch\": [1], \"kv_len\": [16], \"ns\": [[100]]}]}",
            "attn_decode[0].window", "");
  parse_bad(P2 ", \"attn_prefill\": [{\"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, \"window\": 128, \"chunk\": "
               "[16], \"ctx\": [0], \"ns\": [[100]]}]}",
            "attn_prefill[0]", "window");
  parse_bad(P2 ", \"attn_decode\": [{\"kv_dtype\": \"bf16\", \"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, "
               "\"window\": 128, \"batch\": [1], \"kv_len\": [16], \"ns\": [[100]]}, {\"kv_dtype\": \"bf16\", "
               "\"q_heads\": 8, \"kv_heads\": 1, \"head_dim\": 64, \"window\": 128, \"batch\": [1], \"kv_len\": [16], "
               "\"ns\": [[100]]}]}",
            "attn_decode[1]", "window 128");
}
