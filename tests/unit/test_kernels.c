/* test_kernels.c: the calibration kernels' host side (number formats, the
 * weight-only packed layout, the CPU references, the sweep plan and the timing
 * protocol) on every machine, and the kernels themselves on a GPU: each
 * family's correctness check must pass and a small point must time. Without a
 * GPU (cudaGetDeviceCount: 35 no driver, 100 no device) or without CUDA in
 * this build the GPU tests skip with a message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/prof.h"
#include "kern.h"
#include "testutil.h"

#ifdef SERVESIM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---- number formats ------------------------------------------------------------------ */

Test(kern_format, fp8_e4m3_all_codes_round_trip) {
  int finite = 0;
  for (int c = 0; c < 256; c++) {
    float f = kern_fp8_to_f32((uint8_t)c);
    if ((c & 0x7f) == 0x7f) {
      cr_assert(isnan(f), "code %#x is NaN", c);
      continue;
    }
    finite++;
    uint8_t back = kern_f32_to_fp8(f);
    cr_assert_eq(back, (uint8_t)c, "code %#x -> %g -> %#x", c, f, back);
  }
  cr_assert_eq(finite, 254);
  cr_assert_eq(kern_fp8_to_f32(0x7e), 448.0f);
  cr_assert_eq(kern_fp8_to_f32(0x38), 1.0f);
  cr_assert_eq(kern_fp8_to_f32(0x01), ldexpf(1, -9), "smallest subnormal");
  cr_assert_eq(kern_fp8_to_f32(0x08), ldexpf(1, -6), "smallest normal");
  cr_assert_eq(kern_f32_to_fp8(1000.0f), 0x7e, "saturates to 448");
  cr_assert_eq(kern_f32_to_fp8(-1000.0f), 0xfe);
  cr_assert_eq(kern_f32_to_fp8(1.0625f), 0x38, "tie rounds to even (1.0)");
  cr_assert_eq(kern_f32_to_fp8(1.1875f), 0x3a, "tie rounds to even (1.25)");
  cr_assert_eq(kern_f32_to_fp8(ldexpf(1, -10)), 0x00, "half the smallest subnormal ties to zero");
  cr_assert_eq(kern_f32_to_fp8(NAN), 0x7f);
}

Test(kern_format, bf16_rounding) {
  cr_assert_eq(kern_f32_to_bf16(1.0f), 0x3f80);
  cr_assert_eq(kern_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80, "tie to even");
  cr_assert_eq(kern_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82, "tie to even (up)");
  cr_assert_eq(kern_bf16_to_f32(0xc000), -2.0f);
  cr_assert(isnan(kern_bf16_to_f32(kern_f32_to_bf16(NAN))));
  for (int i = 0; i < 1000; i++) {
    float f = (float)(i - 500) * 0.37f;
    float r = kern_bf16_to_f32(kern_f32_to_bf16(f));
    cr_assert(fabsf(r - f) <= fabsf(f) * ldexpf(1, -8), "%g -> %g", f, r);
  }
}

/* ---- weight-only packed layout ------------------------------------------------------------- */

static void pack_roundtrip(int bits) {
  const uint32_t N = 64, K = 256;
  int8_t *q = malloc((size_t)N * K);
  uint32_t s = 12345;
  for (size_t i = 0; i < (size_t)N * K; i++) {
    s = s * 1103515245u + 12345u;
    q[i] = (int8_t)(bits == 4 ? (int)((s >> 16) % 16) - 8 : (int)((s >> 16) % 255) - 127);
  }
  size_t nb = kern_wq_packed_bytes(bits, N, K);
  cr_assert_eq(nb, (size_t)N * K * bits / 8);
  uint8_t *pk = malloc(nb);
  kern_wq_pack(bits, q, N, K, pk);
  for (uint32_t n = 0; n < N; n++)
    for (uint32_t k = 0; k < K; k++)
      cr_assert_eq(kern_wq_unpack(bits, pk, N, K, n, k), q[(size_t)n * K + k], "int%d (%u, %u)", bits, n, k);
  free(pk);
  free(q);
}

Test(kern_wq, pack_unpack_roundtrip) {
  pack_roundtrip(4);
  pack_roundtrip(8);
  cr_assert(kern_wq_shape_ok(1280, 8192));
  cr_assert(kern_wq_shape_ok(16032, 8192), "Llama-3.1-70B LM head at TP 8");
  cr_assert(!kern_wq_shape_ok(1290, 8192));
  cr_assert(!kern_wq_shape_ok(1280, 8000));
}

/* The documented tile layout, pinned: one value placed alone lands where the
 * mma.m16n8k16 A fragment of lane (g, t) expects it. */
Test(kern_wq, int4_fragment_positions) {
  const uint32_t N = 32, K = 128;
  int8_t *q = calloc((size_t)N * K, 1);
  uint8_t *pk = malloc(kern_wq_packed_bytes(4, N, K));
  /* row 3 (g = 3, lower half), column 21: t = 21 / 16 = 1, within 5 -> k-step 1, idx 1 -> a1:
   * pair 0 high half -> nibble 4 of word 1 of lane 4g + t = 13 */
  q[3 * K + 21] = 5;
  kern_wq_pack(4, q, N, K, pk);
  size_t off = (size_t)13 * 16 + 4 * 1;
  uint32_t w = (uint32_t)pk[off] | (uint32_t)pk[off + 1] << 8 | (uint32_t)pk[off + 2] << 16 | (uint32_t)pk[off + 3] << 24;
  cr_assert_eq((w >> 16) & 0xf, 5 + 8, "word %#x", w);
  /* every other nibble of the tile holds the offset zero (8) */
  cr_assert_eq(w & 0xffff, 0x8888);
  /* row 11 (g = 3, upper half), column 66 -> tile (0, 1), t = 0, k-step 0, idx 2 -> a6:
   * pair 3 low half -> nibble 3 of word 0 of lane 12, in the second tile */
  memset(q, 0, (size_t)N * K);
  q[11 * K + 66] = -3;
  kern_wq_pack(4, q, N, K, pk);
  off = 512 + (size_t)12 * 16;
  w = (uint32_t)pk[off] | (uint32_t)pk[off + 1] << 8 | (uint32_t)pk[off + 2] << 16 | (uint32_t)pk[off + 3] << 24;
  cr_assert_eq((w >> 12) & 0xf, (uint32_t)(-3 + 8), "word %#x", w);
  free(pk);
  free(q);
}

/* ---- references ---------------------------------------------------------------------------- */

Test(kern_ref, gemm_small) {
  const float X[2 * 3] = {1, 2, 3, -1, 0, 2};
  const float W[2 * 3] = {1, 0, 1, 2, 1, 0};
  double Y[4];
  kern_ref_gemm(X, W, 2, 2, 3, 0.5, Y);
  cr_assert_eq(Y[0], 2.0);  /* (1 + 3) / 2 */
  cr_assert_eq(Y[1], 2.0);  /* (2 + 2) / 2 */
  cr_assert_eq(Y[2], 0.5);  /* (-1 + 2) / 2 */
  cr_assert_eq(Y[3], -1.0); /* -2 / 2 */
}

/* Paged decode reference vs attention over the gathered dense sequence. */
Test(kern_ref, paged_decode_matches_dense) {
  enum { D = 128, Hq = 4, Hkv = 2, L = 37, NB = 3, POOL = 7 };
  static float Kc[POOL * Hkv * 16 * D], Vc[POOL * Hkv * 16 * D], Q[Hq * D];
  uint32_t s = 7;
  for (size_t i = 0; i < sizeof Kc / sizeof Kc[0]; i++) {
    s = s * 1664525u + 1013904223u;
    Kc[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
    s = s * 1664525u + 1013904223u;
    Vc[i] = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  for (int i = 0; i < Hq * D; i++) Q[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  const int32_t table[NB] = {5, 0, 3}, lens[1] = {L};
  double O[Hq * D];
  kern_ref_attn_decode(Q, Kc, Vc, table, NB, lens, 1, Hq, Hkv, D, O);
  for (int h = 0; h < Hq; h++) {
    int kh = h / (Hq / Hkv);
    double sc[L], mx = -1e300, z = 0;
    for (int i = 0; i < L; i++) {
      const float *k = Kc + (((size_t)table[i / 16] * Hkv + kh) * 16 + i % 16) * D;
      double d = 0;
      for (int j = 0; j < D; j++) d += (double)Q[h * D + j] * k[j];
      sc[i] = d / sqrt((double)D);
      mx = fmax(mx, sc[i]);
    }
    for (int i = 0; i < L; i++) z += exp(sc[i] - mx);
    for (int j = 0; j < D; j++) {
      double o = 0;
      for (int i = 0; i < L; i++)
        o += exp(sc[i] - mx) / z * Vc[(((size_t)table[i / 16] * Hkv + kh) * 16 + i % 16) * D + j];
      cr_assert(fabs(o - O[h * D + j]) < 1e-12, "head %d dim %d", h, j);
    }
  }
}

/* Prefill reference: query i of the chunk equals a decode over ctx + i + 1 tokens. */
Test(kern_ref, prefill_is_causal_decode) {
  enum { D = 128, Hq = 2, Hkv = 1, CTX = 20, CH = 5, NB = 2 };
  static float Kc[NB * Hkv * 16 * D], Vc[NB * Hkv * 16 * D], Q[CH * Hq * D];
  for (size_t i = 0; i < sizeof Kc / sizeof Kc[0]; i++) {
    Kc[i] = (float)sin(0.37 * (double)i);
    Vc[i] = (float)cos(0.11 * (double)i);
  }
  for (size_t i = 0; i < sizeof Q / sizeof Q[0]; i++) Q[i] = (float)sin(1.3 * (double)i);
  const int32_t table[NB] = {1, 0};
  double O[CH * Hq * D], Od[Hq * D];
  kern_ref_attn_prefill(Q, Kc, Vc, table, CH, CTX, Hq, Hkv, D, O);
  for (int i = 0; i < CH; i++) {
    const int32_t len[1] = {CTX + i + 1};
    kern_ref_attn_decode(Q + (size_t)i * Hq * D, Kc, Vc, table, NB, len, 1, Hq, Hkv, D, Od);
    for (int j = 0; j < Hq * D; j++) cr_assert(fabs(Od[j] - O[(size_t)i * Hq * D + j]) < 1e-12);
  }
}

Test(kern_ref, rel_err_counts_non_finite) {
  const float out[3] = {1, 2, NAN};
  const double ref[3] = {1, 2, 3};
  size_t bad;
  cr_assert(isinf(kern_rel_err(out, ref, 3, &bad)));
  cr_assert_eq(bad, 1);
  const float ok[2] = {1.0f, 2.0f};
  cr_assert_eq(kern_rel_err(ok, ref, 2, &bad), 0.0);
  cr_assert_eq(bad, 0);
  const float off[2] = {1.1f, 2.0f};
  cr_assert(fabs(kern_rel_err(off, ref, 2, &bad) - 0.1 / sqrt(5.0)) < 1e-6);
}

/* ---- plan and protocol ----------------------------------------------------------------------- */

static kern_model_shape llama70b(void) {
  kern_model_shape m = {"llama-3.1-70b", 8192, 28672, 64, 8, 128, 128256};
  return m;
}

static const kern_plan_gemm *find(const kern_plan *p, kern_family f, sim_dtype w, uint32_t n, uint32_t k) {
  for (int i = 0; i < p->ngemm; i++)
    if (p->gemm[i].fam == f && p->gemm[i].wdtype == w && p->gemm[i].n == n && p->gemm[i].k == k) return &p->gemm[i];
  return NULL;
}

Test(kern_plan, llama70b_shapes_grids_and_budget) {
  kern_model_shape m = llama70b();
  kern_plan_req req = {.tps = {1, 2, 4, 8}, .ntp = 4, .gemm_bf16 = true, .gemm_fp8 = true, .wq_int4 = true,
                       .kv_bf16 = true, .kv_fp8 = true, .prefill = true};
  kern_ceilings c;
  kern_ceilings_h200(&c);
  kern_opts o;
  kern_opts_default(&o, false);
  kern_plan p;
  sim_err err = {0};
  cr_assert_eq(kern_plan_build(&p, &m, &req, &c, &o, &err), SIM_OK, "%s", err.msg);
  /* per-GPU shapes of one layer */
  cr_assert(find(&p, KF_GEMM, DT_BF16, 10240, 8192), "qkv tp1");
  cr_assert(find(&p, KF_GEMM, DT_BF16, 1280, 8192), "qkv tp8");
  cr_assert(find(&p, KF_GEMM, DT_BF16, 8192, 1024), "o tp8");
  cr_assert(find(&p, KF_GEMM, DT_FP8, 57344, 8192), "gate_up tp1");
  cr_assert(find(&p, KF_GEMM, DT_FP8, 8192, 3584), "down tp8");
  cr_assert(find(&p, KF_WQ, DT_INT4, 16032, 8192), "lm_head tp8 weight-only");
  cr_assert_eq(p.ngemm, 3 * 5 * 4, "3 kinds x 5 layers x 4 TPs, no coincident shapes for this model");
  const kern_plan_gemm *lm = find(&p, KF_GEMM, DT_BF16, 128256, 8192);
  cr_assert(lm && lm->m[lm->nm - 1] <= 1024, "the LM head samples at most 1024 sequences");
  const kern_plan_gemm *o8 = find(&p, KF_GEMM, DT_BF16, 8192, 1024);
  cr_assert_eq(o8->m[0], 1);
  cr_assert_eq(o8->m[o8->nm - 1], 16384, "small shapes reach M = 16384");
  const kern_plan_gemm *wq = find(&p, KF_WQ, DT_INT4, 10240, 8192);
  cr_assert_eq(wq->m[wq->nm - 1], 64);
  for (int i = 0; i < p.ngemm; i++)
    for (int j = 1; j < p.gemm[i].nm; j++) cr_assert(p.gemm[i].m[j] > p.gemm[i].m[j - 1]);
  cr_assert_eq(p.nattn, 3 * 4, "decode bf16 + fp8 and prefill, per TP");
  for (int i = 0; i < p.nattn; i++) {
    const kern_plan_attn *a = &p.attn[i];
    cr_assert_eq(a->q_heads / a->kv_heads, 8);
    cr_assert(!a->skip[0][0], "the smallest point is always measured");
    /* skipped cells form a monotone region: a skipped cell's larger neighbours are skipped */
    for (int x = 0; x < a->nx; x++)
      for (int y = 0; y < a->ny; y++)
        if (a->skip[x][y]) {
          if (x + 1 < a->nx) cr_assert(a->skip[x + 1][y]);
          if (y + 1 < a->ny) cr_assert(a->skip[x][y + 1]);
        }
  }
  cr_assert(p.points > 1000 && p.kernel_calls > p.points);
  cr_assert(p.est_total_s > 10 && p.est_total_s < 300, "estimated %.0f s must fit the device budget", p.est_total_s);
  kern_plan_free(&p);
  /* quick is a fraction of full */
  req.quick = true;
  kern_opts_default(&o, true);
  kern_plan q;
  cr_assert_eq(kern_plan_build(&q, &m, &req, &c, &o, &err), SIM_OK);
  cr_assert(q.points < 1000);
  kern_plan_free(&q);
}

Test(kern_plan, bad_tp_is_an_input_error) {
  kern_model_shape m = llama70b();
  kern_plan_req req = {.tps = {3}, .ntp = 1, .gemm_bf16 = true};
  kern_ceilings c;
  kern_ceilings_h200(&c);
  kern_opts o;
  kern_opts_default(&o, false);
  kern_plan p;
  sim_err err = {0};
  cr_assert_eq(kern_plan_build(&p, &m, &req, &c, &o, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "--tp 3"), "%s", err.msg);
  req.ntp = 0;
  cr_assert_eq(kern_plan_build(&p, &m, &req, &c, &o, &err), SIM_EINPUT);
  /* TP 16 with 8 KV heads replicates them: one per GPU */
  req.tps[0] = 16;
  req.ntp = 1;
  req.kv_bf16 = true;
  cr_assert_eq(kern_plan_build(&p, &m, &req, &c, &o, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(p.attn[0].q_heads, 4);
  cr_assert_eq(p.attn[0].kv_heads, 1);
  cr_assert(find(&p, KF_GEMM, DT_BF16, (4 + 2) * 128, 8192), "qkv with replicated kv heads");
  kern_plan_free(&p);
}

Test(kern_plan, protocol_rotates_and_bounds_time) {
  kern_opts o;
  kern_opts_default(&o, false);
  kern_protocol p;
  /* a 1 MB call on a 125 MB footprint: 125 sets, the graph cycles through all */
  kern_protocol_for(&o, 2000, 1e6, 125e6, &p);
  cr_assert_eq(p.sets, 125);
  cr_assert_eq(p.calls, 125);
  cr_assert_eq(p.reps, o.reps);
  /* a 10 kB call: capped sets, still one replay per set */
  kern_protocol_for(&o, 2000, 1e4, 125e6, &p);
  cr_assert_eq(p.sets, KERN_MAX_SETS);
  cr_assert_eq(p.calls, KERN_MAX_CALLS);
  /* a 1 GB, 10 ms call: one set, one call per replay, repeats cut to the budget but >= 3 */
  kern_protocol_for(&o, 10e6, 1e9, 125e6, &p);
  cr_assert_eq(p.sets, 1);
  cr_assert_eq(p.calls, 1);
  cr_assert(p.reps >= 3 && p.reps * 10e6 <= o.point_budget_ns + 3 * 10e6);
  /* a 10 MB, 20 us call: 13 sets; replays of >= 200 us */
  kern_protocol_for(&o, 20e3, 10e6, 125e6, &p);
  cr_assert_eq(p.sets, 13);
  cr_assert(p.calls >= 13 && p.calls * 20e3 >= o.replay_min_ns);
  cr_assert(kern_protocol_wall_s(&p, 20e3) > (p.warmup + p.reps) * p.calls * 20e-6);
}

Test(kern_family, names_round_trip) {
  for (int f = 0; f < KF_COUNT; f++) {
    kern_family g;
    cr_assert(kern_family_parse(kern_family_name((kern_family)f), &g));
    cr_assert_eq((int)g, f);
  }
  kern_family g;
  cr_assert(!kern_family_parse("attention", &g));
}

/* ---- on a GPU ---------------------------------------------------------------------------------- */

/* Skips unless this build has CUDA and the machine a device. */
static void need_gpu(void) {
#ifdef SERVESIM_HAVE_CUDA
  int n = 0;
  cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice || (rc == cudaSuccess && n == 0))
    cr_skip_test("no GPU here (cudaGetDeviceCount returned %d, %d devices): kernel checks need one", (int)rc, n);
  cr_assert_eq(rc, cudaSuccess, "cudaGetDeviceCount failed: %s (%d)", cudaGetErrorString(rc), (int)rc);
#else
  cr_assert(!kern_built_with_cuda());
  kern_device_info d;
  sim_err err = {0};
  cr_assert_eq(kern_device_query(&d, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "without CUDA"), "%s", err.msg);
  cr_skip_test("this build has no CUDA (-DSERVESIM_CUDA=OFF): kernel checks need it");
#endif
}

static kern_ctx *open_ctx(void) {
  kern_opts o;
  kern_opts_default(&o, true);
  kern_ctx *k = NULL;
  sim_err err = {0};
  cr_assert_eq(kern_open(&k, &o, &err), SIM_OK, "%s", err.msg);
  return k;
}

static void check_family(kern_ctx *k, kern_family f, sim_dtype dt) {
  char why[400];
  if (!kern_supported(k, f, dt, why, sizeof why)) return; /* e.g. fp8 GEMM before Hopper */
  kern_check c[16];
  int n = 0;
  sim_err err = {0};
  cr_assert_eq(kern_check_family(k, f, dt, c, 16, &n, &err), SIM_OK, "%s", err.msg);
  cr_assert(n > 0);
  for (int i = 0; i < n; i++)
    cr_assert(c[i].ok, "%s: rel_err %g tol %g %s", c[i].name, c[i].rel_err, c[i].tol, c[i].note);
}

Test(kern_gpu, every_check_passes_and_a_point_times, .timeout = 300) {
  need_gpu();
  kern_ctx *k = open_ctx();
  sim_err err = {0};
  kern_time t;
  cr_assert_eq(kern_time_gemm(k, DT_BF16, 64, 1024, 1024, &t, &err), SIM_EINPUT, "timing before the check passes");
  check_family(k, KF_GEMM, DT_BF16);
  check_family(k, KF_GEMM, DT_FP8);
  check_family(k, KF_GEMM, DT_INT8);
  check_family(k, KF_WQ, DT_INT4);
  check_family(k, KF_WQ, DT_INT8);
  check_family(k, KF_DECODE, DT_BF16);
  check_family(k, KF_DECODE, DT_FP8);
  check_family(k, KF_PREFILL, DT_BF16);
  cr_assert_eq(kern_time_gemm(k, DT_BF16, 64, 1024, 1024, &t, &err), SIM_OK, "%s", err.msg);
  cr_assert(t.ns > 0 && t.min_ns <= t.ns && t.ns <= t.max_ns && t.reps >= 3);
  cr_assert_eq(kern_time_wq(k, DT_INT4, 1, 1024, 1024, &t, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(kern_time_decode(k, DT_BF16, 4, 1000, 16, 2, 128, &t, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(kern_time_prefill(k, 100, 300, 16, 2, 128, &t, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(kern_time_decode(k, DT_BF16, 4, 1000, 16, 2, 64, &t, &err), SIM_EINPUT, "head_dim 64 unsupported");
  double bw = 0;
  cr_assert_eq(kern_probe_copy(k, &bw, &err), SIM_OK, "%s", err.msg);
  cr_assert(bw > 1e11, "copy bandwidth %g", bw);
  cr_assert(kern_usable(k));
  kern_close(k);
}

/* ---- the calibrate command (no GPU needed) ------------------------------------------------------ */

static char out_buf[65536], err_buf[65536];

static int calib(const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "calibrate %s", args);
  return tu_run_cli(cmd, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

/* Skips until the lead wires cmd_calibrate into sim/cli/main.c. */
static void need_command(void) {
  int rc = calib("--help");
  if (rc != 0 && strstr(err_buf, "unknown command"))
    cr_skip_test("`servesim calibrate` is not wired into sim/cli/main.c in this build");
  cr_assert_eq(rc, 0, "calibrate --help: %s", err_buf);
  cr_assert(strstr(out_buf, "--dry-run") && strstr(out_buf, "--loo"));
}

static const char *hf_config(void) {
  return tu_tmpfile(".json",
                    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 8192, "
                    "\"intermediate_size\": 28672, \"num_attention_heads\": 64, \"num_hidden_layers\": 80, "
                    "\"num_key_value_heads\": 8, \"vocab_size\": 128256, \"max_position_embeddings\": 131072, "
                    "\"rms_norm_eps\": 1e-05, \"rope_theta\": 500000.0, \"tie_word_embeddings\": false, "
                    "\"attention_bias\": false, \"torch_dtype\": \"bfloat16\"}");
}

Test(calibrate_cli, without_a_gpu_exits_2_with_the_reason) {
  need_command();
  kern_device_info d;
  sim_err err = {0};
  if (kern_device_query(&d, &err) == SIM_OK) cr_skip_test("a GPU is present (%s): the no-GPU path is not testable", d.name);
  const char *out = tu_tmpfile(".json", "");
  cr_assert(out);
  unlink(out);
  char args[1024];
  snprintf(args, sizeof args, "--model %s --out %s", hf_config(), out);
  cr_assert_eq(calib(args), 2, "stderr: %s", err_buf);
  cr_assert(strstr(err_buf, "no usable CUDA GPU") || strstr(err_buf, "built without CUDA"), "%s", err_buf);
  cr_assert_eq(access(out, F_OK), -1, "no profile is written without a GPU");
  cr_assert_eq(calib("--check"), 2, "%s", err_buf);
}

Test(calibrate_cli, refuses_to_overwrite_without_force) {
  need_command();
  const char *out = tu_tmpfile(".json", "keep me");
  char args[1024];
  snprintf(args, sizeof args, "--model %s --out %s", hf_config(), out);
  cr_assert_eq(calib(args), 2);
  cr_assert(strstr(err_buf, "exists") && strstr(err_buf, "--force"), "%s", err_buf);
  char *s = tu_slurp(out, NULL);
  cr_assert_str_eq(s, "keep me");
  free(s);
}

Test(calibrate_cli, bad_flags_name_the_flag) {
  need_command();
  cr_assert_eq(calib("--model x --dry-run --dtypes bf16,fp9"), 2);
  cr_assert(strstr(err_buf, "--dtypes") && strstr(err_buf, "fp9"), "%s", err_buf);
  cr_assert_eq(calib("--model x --dry-run --skip attention"), 2);
  cr_assert(strstr(err_buf, "--skip"), "%s", err_buf);
  cr_assert_eq(calib("--model x --dry-run --tp 0"), 2);
  cr_assert(strstr(err_buf, "--tp"), "%s", err_buf);
  cr_assert_eq(calib("--out /tmp/whatever.json"), 2);
  cr_assert(strstr(err_buf, "--model"), "%s", err_buf);
}

Test(calibrate_cli, dry_run_prints_plan_and_estimate) {
  need_command();
  char args[1024];
  snprintf(args, sizeof args, "--model %s --dry-run --tp 1,8 --dtypes bf16,fp8,int4", hf_config());
  cr_assert_eq(calib(args), 0, "%s", err_buf);
  cr_assert(strstr(out_buf, "estimated GPU time"), "%s", out_buf);
  cr_assert(strstr(out_buf, "N=10240") && strstr(out_buf, "N=1280"), "qkv at tp1 and tp8: %s", out_buf);
  cr_assert(strstr(out_buf, "kernel calls"));
}

Test(calibrate_cli, loo_of_a_profile) {
  need_command();
  char args[1024];
  snprintf(args, sizeof args, "--loo %s", "tests/data/profiles/synthetic.json");
  cr_assert_eq(calib(args), 0, "%s", err_buf);
  cr_assert(strstr(out_buf, "attn_decode") && strstr(out_buf, "median"), "%s", out_buf);
  cr_assert_eq(calib("--loo tests/data/profiles/bad_m_order.json"), 2);
  cr_assert(strstr(err_buf, "gemm[0].m[2]"), "%s", err_buf);
}

Test(calibrate_cli, synthetic_profile_round_trips) {
  need_command();
  const char *out = tu_tmpfile(".json", "");
  char args[1024];
  snprintf(args, sizeof args, "--model %s --synthetic --quick --tp 1,8 --dtypes bf16,fp8,int4 --out %s --force --date 2026-01-01",
           hf_config(), out);
  cr_assert_eq(calib(args), 0, "%s", err_buf);
  cr_assert(strstr(out_buf, "SYNTHETIC"), "%s", out_buf);
  prof *p;
  sim_err err = {0};
  cr_assert_eq(prof_load(&p, out, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(prof_gpu_name(p), "synthetic");
  double ns;
  cr_assert(prof_gemm_ns(p, DT_BF16, DT_BF16, 100, 10240, 8192, &ns) && ns > 0, "qkv tp1 bf16");
  cr_assert(prof_gemm_ns(p, DT_FP8, DT_BF16, 100, 1280, 8192, &ns) && ns > 0, "qkv tp8 fp8 weights");
  cr_assert(prof_gemm_ns(p, DT_INT4, DT_BF16, 3, 8192, 3584, &ns) && ns > 0, "down tp8 int4");
  cr_assert(prof_attn_decode_ns(p, DT_FP8, 7, 3000, 8, 1, 128, &ns) && ns > 0, "tp8 fp8 KV");
  cr_assert(prof_attn_prefill_ns(p, 300, 5000, 64, 8, 128, &ns) && ns > 0, "tp1 prefill");
  cr_assert(!prof_gemm_ns(p, DT_BF16, DT_BF16, 100, 5120, 8192, &ns), "tp2 was not requested");
  prof_free(p);
  char *s = tu_slurp(out, NULL);
  cr_assert(strstr(s, "\"date\": \"2026-01-01\"") && strstr(s, "\"complete\": true"));
  free(s);
}
