/* gemm_lt.cu: the GEMMs of a transformer layer through cuBLASLt, in bf16,
 * fp8 (E4M3 inputs with per-tensor scales, bf16 output, Hopper) and int8
 * (int32 accumulate and output): correctness check against the CPU reference,
 * timing over rotated random inputs, and the peak-rate probe.
 *
 * Y[M][N] = X[M][K] . W[N][K]^T, all row-major (X activations, W weights as
 * PyTorch's Linear holds them). The column-major argument is written once, at
 * the call site in kgemm_prepare. The last shape's descriptors and algorithm
 * are cached in the context (a sweep times one shape many times). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kern_internal.cuh"

static size_t dt_size(sim_dtype dt) { return dt == DT_BF16 ? 2 : 1; }
static size_t out_size(sim_dtype dt) { return dt == DT_INT8 ? 4 : 2; }

void kgemm_release(kern_ctx *k) {
  if (k->lt_desc) cublasLtMatmulDescDestroy(k->lt_desc);
  if (k->lt_a) cublasLtMatrixLayoutDestroy(k->lt_a);
  if (k->lt_b) cublasLtMatrixLayoutDestroy(k->lt_b);
  if (k->lt_c) cublasLtMatrixLayoutDestroy(k->lt_c);
  k->lt_desc = nullptr;
  k->lt_a = k->lt_b = k->lt_c = nullptr;
  k->lt_dt = -1;
  k->lt_ok = false;
}

int kgemm_prepare(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, sim_err *err) {
  if (k->lt_ok && k->lt_dt == (int)dt && k->lt_m == M && k->lt_n == N && k->lt_k == K) return SIM_OK;
  kgemm_release(k);
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  switch (dt) {
    case DT_BF16: ab = CUDA_R_16BF, cd = CUDA_R_16BF, scale = CUDA_R_32F, compute = CUBLAS_COMPUTE_32F; break;
    case DT_FP8: ab = CUDA_R_8F_E4M3, cd = CUDA_R_16BF, scale = CUDA_R_32F, compute = CUBLAS_COMPUTE_32F; break;
    case DT_INT8: ab = CUDA_R_8I, cd = CUDA_R_32I, scale = CUDA_R_32I, compute = CUBLAS_COMPUTE_32I; break;
    default: return sim_errf(err, SIM_EINPUT, "cuBLASLt GEMM: dtype %s is not calibrated", dtype_name(dt));
  }
  /* Row-major to column-major, once. cuBLASLt reads column-major matrices; a
   * row-major [R][C] array (leading dimension C) is the same memory as a
   * column-major [C][R] matrix. So our row-major Y[M][N] is the column-major
   * Y^T [N][M] (ld N), and Y^T = W . X^T:
   *   cuBLASLt A := W, stored column-major [K][N] (ld K), op(A) = T -> [N][K]
   *   cuBLASLt B := X, stored column-major [K][M] (ld K), op(B) = N -> [K][M]
   *   D = op(A) op(B) = [N][M] column-major (ld N)  ==  row-major Y[M][N]
   * i.e. cuBLAS m = N, n = M, k = K in the "TN" form, which is also the form
   * the FP8 and INT8 (IMMA) kernels require. */
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  KLT(cublasLtMatmulDescCreate(&k->lt_desc, compute, scale));
  KLT(cublasLtMatmulDescSetAttribute(k->lt_desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  KLT(cublasLtMatmulDescSetAttribute(k->lt_desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (dt == DT_FP8) {
    /* per-tensor scales: D = (scale_W * scale_X) * (W . X^T); fast accumulation
     * as inference engines run it */
    const float *sa = k->scales, *sb = k->scales + 1;
    int8_t fast = 1;
    KLT(cublasLtMatmulDescSetAttribute(k->lt_desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    KLT(cublasLtMatmulDescSetAttribute(k->lt_desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    KLT(cublasLtMatmulDescSetAttribute(k->lt_desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  KLT(cublasLtMatrixLayoutCreate(&k->lt_a, ab, K, N, K));
  KLT(cublasLtMatrixLayoutCreate(&k->lt_b, ab, K, M, K));
  KLT(cublasLtMatrixLayoutCreate(&k->lt_c, cd, N, M, N));
  cublasLtMatmulPreference_t pref = nullptr;
  KLT(cublasLtMatmulPreferenceCreate(&pref));
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &k->lt_ws_bytes, sizeof k->lt_ws_bytes);
  cublasLtMatmulHeuristicResult_t res;
  memset(&res, 0, sizeof res);
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(k->lt, k->lt_desc, k->lt_a, k->lt_b, k->lt_c, k->lt_c, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS) return klt_fail(k, err, s, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  if (found < 1)
    return sim_errf(err, SIM_EINPUT, "cuBLASLt has no %s algorithm for M=%u N=%u K=%u", dtype_name(dt), M, N, K);
  k->lt_algo = res.algo;
  k->lt_dt = (int)dt;
  k->lt_m = M;
  k->lt_n = N;
  k->lt_k = K;
  k->lt_ok = true;
  return SIM_OK;
}

int kgemm_launch(kern_ctx *k, const void *X, const void *W, void *Y, sim_err *err) {
  float fa = 1, fb = 0;
  int32_t ia = 1, ib = 0;
  bool integer = k->lt_dt == DT_INT8;
  /* A = W, B = X, C = D = Y: see the layout comment in kgemm_prepare */
  KLT(cublasLtMatmul(k->lt, k->lt_desc, integer ? (const void *)&ia : (const void *)&fa, W, k->lt_a, X, k->lt_b,
                     integer ? (const void *)&ib : (const void *)&fb, Y, k->lt_c, Y, k->lt_c, &k->lt_algo, k->lt_ws,
                     k->lt_ws_bytes, k->stream));
  return SIM_OK;
}

/* ---- check ------------------------------------------------------------------------------- */

static void quantize(sim_dtype dt, krng *r, size_t n, std::vector<float> &f, std::vector<uint8_t> &bytes) {
  f.resize(n);
  bytes.resize(n * dt_size(dt));
  for (size_t i = 0; i < n; i++) {
    double v = r->sym();
    if (dt == DT_BF16) {
      uint16_t h = kern_f32_to_bf16((float)v);
      memcpy(&bytes[2 * i], &h, 2);
      f[i] = kern_bf16_to_f32(h);
    } else if (dt == DT_FP8) {
      bytes[i] = kern_f32_to_fp8((float)v);
      f[i] = kern_fp8_to_f32(bytes[i]);
    } else {
      int q = (int)lrint(v * 127);
      bytes[i] = (uint8_t)(int8_t)q;
      f[i] = (float)q;
    }
  }
}

static int check_one(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, kern_check *c, bool *verified,
                     sim_err *err) {
  char name[96];
  snprintf(name, sizeof name, "gemm %s M=%u N=%u K=%u", dtype_name(dt), M, N, K);
  *verified = false;
  krng r = kern_check_rng(k);
  std::vector<float> xf, wf;
  std::vector<uint8_t> xb, wb;
  quantize(dt, &r, (size_t)M * K, xf, xb);
  quantize(dt, &r, (size_t)N * K, wf, wb);
  std::vector<double> ref((size_t)M * N);
  kern_ref_gemm(xf.data(), wf.data(), M, N, K, dt == DT_FP8 ? 0.75 * 0.5 : 1.0, ref.data());
  kdev x, w, y;
  size_t ybytes = (size_t)M * N * out_size(dt);
  int rc;
  if ((rc = kdev_upload(k, &x, xb.data(), xb.size(), err)) || (rc = kdev_upload(k, &w, wb.data(), wb.size(), err)) ||
      (rc = kdev_alloc(k, &y, ybytes, err)) || (rc = kdev_poison(k, y.p, ybytes, dt == DT_INT8 ? 0x7f : 0xff, err)))
    return rc;
  sim_err e2;
  rc = kgemm_prepare(k, dt, M, N, K, &e2);
  if (rc == SIM_EINPUT) { /* no algorithm for this shape here: not a wrong result */
    kcheck_set(c, name, 0, 0, 0, e2.msg);
    return SIM_OK;
  }
  if (rc) {
    *err = e2;
    return rc;
  }
  if ((rc = kgemm_launch(k, x.p, w.p, y.p, err))) return rc;
  std::vector<float> out((size_t)M * N);
  if (dt == DT_INT8) {
    std::vector<int32_t> yi((size_t)M * N);
    if ((rc = kdev_download(k, yi.data(), y.p, ybytes, err))) return rc;
    for (size_t i = 0; i < yi.size(); i++) out[i] = yi[i] == 0x7f7f7f7f ? NAN : (float)yi[i];
  } else {
    std::vector<uint16_t> yh((size_t)M * N);
    if ((rc = kdev_download(k, yh.data(), y.p, ybytes, err))) return rc;
    for (size_t i = 0; i < yh.size(); i++) out[i] = kern_bf16_to_f32(yh[i]);
  }
  size_t bad;
  double rel = kern_rel_err(out.data(), ref.data(), out.size(), &bad);
  double tol = dt == DT_BF16 ? KERN_TOL_BF16 : dt == DT_FP8 ? KERN_TOL_FP8 : KERN_TOL_INT8;
  kcheck_set(c, name, rel, tol, bad, nullptr);
  *verified = true;
  return SIM_OK;
}

int kgemm_check(kern_ctx *k, sim_dtype dt, kern_check *out, int max, int *n, sim_err *err) {
  /* a square-ish tile, a GEMV, and a ragged M */
  static const uint32_t shapes[][3] = {{64, 384, 512}, {1, 256, 1024}, {200, 640, 384}};
  int verified = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(shapes) && *n < max; i++) {
    bool v;
    int rc = check_one(k, dt, shapes[i][0], shapes[i][1], shapes[i][2], &out[*n], &v, err);
    if (rc) return rc;
    (*n)++;
    verified += v;
  }
  kgemm_release(k);
  if (!verified && *n < max) {
    kcheck_set(&out[*n], "gemm: no shape could be verified", INFINITY, 0, 0, "cuBLASLt ran no check shape");
    (*n)++;
  }
  return SIM_OK;
}

/* ---- timing ------------------------------------------------------------------------------ */

struct gemm_state {
  const uint8_t *x, *w;
  uint8_t *y;
  size_t xs, ws, ys; /* bytes between rotated sets */
};

static int gemm_call(kern_ctx *k, void *vs, uint32_t set, sim_err *err) {
  gemm_state *s = (gemm_state *)vs;
  return kgemm_launch(k, s->x + set * s->xs, s->w + set * s->ws, s->y + set * s->ys, err);
}

static size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

int kern_time_gemm(kern_ctx *k, sim_dtype dt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err) {
  memset(t, 0, sizeof *t);
  int rc = kcheck_gate(k, KF_GEMM, dt, err);
  if (rc) return rc;
  if ((rc = kgemm_prepare(k, dt, M, N, K, err))) return rc;
  gemm_state s;
  s.xs = align256((size_t)M * K * dt_size(dt));
  s.ws = align256((size_t)N * K * dt_size(dt));
  s.ys = align256((size_t)M * N * out_size(dt));
  double set_bytes = (double)(s.xs + s.ws + s.ys);
  uint32_t sets = ktime_sets(k, set_bytes);
  kfill fill = dt == DT_BF16 ? KFILL_BF16 : dt == DT_FP8 ? KFILL_FP8 : KFILL_INT8;
  if ((rc = kbuf_need(k, KB_X, sets * s.xs, fill, err)) || (rc = kbuf_need(k, KB_W, sets * s.ws, fill, err)) ||
      (rc = kbuf_need(k, KB_Y, sets * s.ys, KFILL_NONE, err)))
    return rc;
  s.x = (const uint8_t *)k->buf[KB_X].p;
  s.w = (const uint8_t *)k->buf[KB_W].p;
  s.y = (uint8_t *)k->buf[KB_Y].p;
  return ktime_run(k, gemm_call, &s, sets, set_bytes, t, err);
}

int kern_probe_gemm_peak(kern_ctx *k, sim_dtype dt, bool quick, double *flops, sim_err *err) {
  *flops = 0;
  char why[200];
  if (!kern_supported(k, KF_GEMM, dt, why, sizeof why)) return sim_errf(err, SIM_EINPUT, "%s", why);
  static const uint32_t sizes[] = {8192, 16384};
  int rc;
  /* each size twice: the first pass also brings the clocks up after the
   * (CPU-bound) correctness checks; the faster median counts */
  for (int i = 0; i < (quick ? 1 : 2); i++)
    for (int pass = 0; pass < 2; pass++) {
      uint32_t S = sizes[i];
      kern_time t;
      if ((rc = kern_time_gemm(k, dt, S, S, S, &t, err))) return rc;
      double f = 2.0 * S * S * S / (t.ns * 1e-9);
      if (f > *flops) *flops = f;
    }
  return SIM_OK;
}
