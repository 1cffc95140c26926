/* wq_gemm.cu: our weight-only quantized GEMM/GEMV for decode-sized M
 * (1..64): int4 (group 128, bf16 scales) or int8 weights, bf16 activations,
 * fp32 accumulation on the tensor cores (mma.sync m16n8k16 bf16).
 *
 * Y[M][N] = X[M][K] . W[N][K]^T,  W[n][k] = q[n][k] * scale[n][k / 128].
 *
 * Work split: a block is 4 warps; a warp owns 2 row tiles of 16 output
 * features (32 rows of W), a block 128 rows; blockIdx.x walks tiles of
 * 8 * NT tokens (NT n8 MMA tiles), blockIdx.z splits K when there are too few
 * blocks to fill the GPU (then partial sums go through fp32 atomics and a
 * second kernel converts to bf16). The weights are pre-shuffled (kern_wq_pack)
 * so that one 16-byte load per lane yields its MMA A fragments for a chunk of
 * 64 (int4) or 32 (int8) columns; the activations are read with the same
 * column permutation, two or one 16-byte loads per lane per token.
 * Dequantization: int4 nibble pairs become bf16 (128 + n) by masking into the
 * exponent of 128 (0x4300), minus 136 gives n - 8 exactly, times the scale
 * (one bf16 rounding); int8 bytes become floats 2^23 + u by byte permutation,
 * minus 2^23 + 128, times the scale, packed to bf16.
 *
 * Memory-bound at small M: the bytes are the packed weights (N K / 2 for
 * int4) plus scales; the next chunk's weights are loaded before the current
 * one is used, so each warp keeps two chunks (1 KiB) in flight. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "kern_internal.cuh"

#define WQ_WARPS 4
#define WQ_ROWS (WQ_WARPS * 32) /* rows of W per block */

/* int4: 4 bf16 pairs of one 32-bit word of nibbles, scaled (lo/hi rows alternate). */
__device__ __forceinline__ void dq_int4(uint32_t w, __nv_bfloat162 s_lo, __nv_bfloat162 s_hi, uint32_t a[4]) {
  const __nv_bfloat162 off = __floats2bfloat162_rn(136.0f, 136.0f);
#pragma unroll
  for (int p = 0; p < 4; p++) {
    uint32_t v = ((w >> (4 * p)) & 0x000f000fu) | 0x43004300u; /* bf16 pair 128 + nibble */
    __nv_bfloat162 q = __hsub2(*reinterpret_cast<__nv_bfloat162 *>(&v), off); /* nibble - 8, exact */
    __nv_bfloat162 d = __hmul2(q, (p & 1) ? s_hi : s_lo);
    a[p] = *reinterpret_cast<uint32_t *>(&d);
  }
}

/* int8: a k-step's fragments from two words (bytes a0..a3, a4..a7). */
__device__ __forceinline__ uint32_t dq_int8_pair(uint32_t w, int b0, float s) {
  const float magic = 8388608.0f + 128.0f; /* 2^23 + offset */
  float f0 = __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7650u | b0)) - magic;
  float f1 = __uint_as_float(__byte_perm(w, 0x4b000000u, 0x7650u | (b0 + 1))) - magic;
  return pack_bf16x2(f0 * s, f1 * s);
}

template <int BITS, int NT>
__global__ void __launch_bounds__(WQ_WARPS * 32)
    wq_kernel(const uint4 *__restrict__ Wp, const __nv_bfloat16 *__restrict__ S, const __nv_bfloat16 *__restrict__ X,
              __nv_bfloat16 *__restrict__ Y, float *__restrict__ Yacc, uint32_t M, uint32_t N, uint32_t K,
              uint32_t chunks_per_split) {
  constexpr int C = BITS == 4 ? 64 : 32; /* columns per chunk (one 512-byte tile per 16 rows) */
  constexpr int KS = C / 16;             /* MMA k-steps per chunk */
  constexpr int XW = C / 8;              /* 32-bit activation words per lane per token and chunk */
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const uint32_t rt0 = blockIdx.y * (WQ_ROWS / 16) + warp * 2; /* first of the warp's two row tiles */
  if (rt0 * 16 >= N) return;                                   /* N % 32 == 0: both tiles or none */
  const uint32_t nchunks = K / C;
  const uint32_t c0 = blockIdx.z * chunks_per_split;
  const uint32_t c1 = min(nchunks, c0 + chunks_per_split);
  const uint32_t m0 = blockIdx.x * 8 * NT;
  const uint32_t ngroups = K / 128;

  float acc[2][NT][4];
#pragma unroll
  for (int r = 0; r < 2; r++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[r][j][i] = 0.0f;

  /* token rows this lane reads (clamped; out-of-range tokens read row 0 and are zeroed) */
  const __nv_bfloat16 *xrow[NT];
  bool xok[NT];
#pragma unroll
  for (int j = 0; j < NT; j++) {
    uint32_t m = m0 + 8 * j + g;
    xok[j] = m < M;
    xrow[j] = X + (size_t)(xok[j] ? m : 0) * K + t * (C / 4);
  }

  uint4 wcur[2], wnext[2];
  if (c0 < c1) {
#pragma unroll
    for (int r = 0; r < 2; r++) wcur[r] = __ldcs(Wp + ((size_t)(rt0 + r) * nchunks + c0) * 32 + lane);
  }
  for (uint32_t c = c0; c < c1; c++) {
    if (c + 1 < c1) {
#pragma unroll
      for (int r = 0; r < 2; r++) wnext[r] = __ldcs(Wp + ((size_t)(rt0 + r) * nchunks + c + 1) * 32 + lane);
    }
    const uint32_t grp = c * C / 128;
    /* dequantize this chunk's A fragments: a[r][s][4] */
    uint32_t a[2][KS][4];
#pragma unroll
    for (int r = 0; r < 2; r++) {
      const uint32_t row = (rt0 + r) * 16 + g;
      __nv_bfloat16 slo = S[(size_t)row * ngroups + grp], shi = S[(size_t)(row + 8) * ngroups + grp];
      const uint32_t *wv = reinterpret_cast<const uint32_t *>(&wcur[r]);
      if (BITS == 4) {
        __nv_bfloat162 s2lo = __halves2bfloat162(slo, slo), s2hi = __halves2bfloat162(shi, shi);
#pragma unroll
        for (int s = 0; s < KS; s++) dq_int4(wv[s], s2lo, s2hi, a[r][s]);
      } else {
        float flo = __bfloat162float(slo), fhi = __bfloat162float(shi);
#pragma unroll
        for (int s = 0; s < KS; s++) {
          a[r][s][0] = dq_int8_pair(wv[2 * s], 0, flo);     /* a0 a1: row g */
          a[r][s][1] = dq_int8_pair(wv[2 * s], 2, fhi);     /* a2 a3: row g + 8 */
          a[r][s][2] = dq_int8_pair(wv[2 * s + 1], 0, flo); /* a4 a5: row g */
          a[r][s][3] = dq_int8_pair(wv[2 * s + 1], 2, fhi); /* a6 a7: row g + 8 */
        }
      }
    }
#pragma unroll
    for (int j = 0; j < NT; j++) {
      uint32_t xw[XW];
      const uint4 *xp = reinterpret_cast<const uint4 *>(xrow[j] + (size_t)c * C);
#pragma unroll
      for (int q = 0; q < XW / 4; q++) {
        uint4 v = xok[j] ? __ldg(xp + q) : make_uint4(0, 0, 0, 0);
        xw[4 * q] = v.x, xw[4 * q + 1] = v.y, xw[4 * q + 2] = v.z, xw[4 * q + 3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < KS; s++)
#pragma unroll
        for (int r = 0; r < 2; r++) mma_bf16_16816(acc[r][j], a[r][s], xw[2 * s], xw[2 * s + 1]);
    }
    if (c + 1 < c1) {
      wcur[0] = wnext[0];
      wcur[1] = wnext[1];
    }
  }
  /* C fragment: c0 c1 = (row g, tokens 2t, 2t+1), c2 c3 = (row g+8, same tokens) */
#pragma unroll
  for (int r = 0; r < 2; r++)
#pragma unroll
    for (int j = 0; j < NT; j++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        uint32_t m = m0 + 8 * j + 2 * t + (i & 1), n = (rt0 + r) * 16 + g + 8 * (i >> 1);
        if (m >= M) continue;
        if (Yacc) atomicAdd(Yacc + (size_t)m * N + n, acc[r][j][i]);
        else Y[(size_t)m * N + n] = __float2bfloat16_rn(acc[r][j][i]);
      }
}

__global__ void wq_finish(const float *__restrict__ Yacc, __nv_bfloat16 *__restrict__ Y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    Y[i] = __float2bfloat16_rn(Yacc[i]);
}

/* One call. ksplit 0 = choose; Yacc: fp32 [M][N] workspace when splitting. */
struct wq_args {
  int bits;
  uint32_t M, N, K, ksplit;
  const uint8_t *W;
  const __nv_bfloat16 *S, *X;
  __nv_bfloat16 *Y;
  float *Yacc;
};

static uint32_t wq_nt(uint32_t M) { return M <= 8 ? 1 : M <= 16 ? 2 : M <= 32 ? 4 : 8; }

static uint32_t wq_split(const kern_ctx *k, int bits, uint32_t M, uint32_t N, uint32_t K) {
  uint32_t nt = wq_nt(M), mtiles = (M + 8 * nt - 1) / (8 * nt), nblocks = (N + WQ_ROWS - 1) / WQ_ROWS;
  uint32_t chunks = K / (bits == 4 ? 64 : 32), blocks = mtiles * nblocks, target = 4 * (uint32_t)k->info.sm_count;
  uint32_t split = (target + blocks - 1) / blocks, most = chunks / 8 ? chunks / 8 : 1;
  if (split > most) split = most;
  return split ? split : 1;
}

template <int BITS>
static int wq_launch_bits(kern_ctx *k, const wq_args *a, uint32_t split, sim_err *err) {
  uint32_t nt = wq_nt(a->M), mtiles = (a->M + 8 * nt - 1) / (8 * nt);
  uint32_t chunks = a->K / (BITS == 4 ? 64 : 32), cps = (chunks + split - 1) / split;
  dim3 grid(mtiles, (a->N + WQ_ROWS - 1) / WQ_ROWS, split), block(WQ_WARPS * 32);
  float *acc = split > 1 ? a->Yacc : nullptr;
  if (acc) KCK(cudaMemsetAsync(acc, 0, (size_t)a->M * a->N * sizeof(float), k->stream));
  const uint4 *W = reinterpret_cast<const uint4 *>(a->W);
  switch (nt) {
    case 1: wq_kernel<BITS, 1><<<grid, block, 0, k->stream>>>(W, a->S, a->X, a->Y, acc, a->M, a->N, a->K, cps); break;
    case 2: wq_kernel<BITS, 2><<<grid, block, 0, k->stream>>>(W, a->S, a->X, a->Y, acc, a->M, a->N, a->K, cps); break;
    case 4: wq_kernel<BITS, 4><<<grid, block, 0, k->stream>>>(W, a->S, a->X, a->Y, acc, a->M, a->N, a->K, cps); break;
    default: wq_kernel<BITS, 8><<<grid, block, 0, k->stream>>>(W, a->S, a->X, a->Y, acc, a->M, a->N, a->K, cps); break;
  }
  KLAUNCHED();
  if (acc) {
    size_t n = (size_t)a->M * a->N;
    wq_finish<<<(unsigned)std::min<size_t>((n + 255) / 256, 4096), 256, 0, k->stream>>>(acc, a->Y, n);
    KLAUNCHED();
  }
  return SIM_OK;
}

static int wq_launch(kern_ctx *k, const wq_args *a, sim_err *err) {
  uint32_t split = a->ksplit ? a->ksplit : wq_split(k, a->bits, a->M, a->N, a->K);
  return a->bits == 4 ? wq_launch_bits<4>(k, a, split, err) : wq_launch_bits<8>(k, a, split, err);
}

/* ---- check ------------------------------------------------------------------------------ */

static int wq_check_one(kern_ctx *k, int bits, uint32_t M, uint32_t N, uint32_t K, uint32_t split, kern_check *c,
                        sim_err *err) {
  char name[96];
  snprintf(name, sizeof name, "wq int%d M=%u N=%u K=%u split=%s%u", bits, M, N, K, split ? "" : "auto:",
           split ? split : wq_split(k, bits, M, N, K));
  krng r = kern_check_rng(k);
  std::vector<int8_t> q((size_t)N * K);
  for (auto &v : q) /* int4: -8..7, int8: -127..127 */
    v = (int8_t)(bits == 4 ? (int)r.below(16) - 8 : (int)r.below(255) - 127);
  std::vector<uint16_t> sh((size_t)N * (K / 128)), xh((size_t)M * K);
  std::vector<float> xf((size_t)M * K), wf((size_t)N * K);
  for (auto &v : sh) v = kern_f32_to_bf16((float)(0.02 + 0.03 * r.uniform()));
  for (size_t i = 0; i < xh.size(); i++) {
    xh[i] = kern_f32_to_bf16((float)r.sym());
    xf[i] = kern_bf16_to_f32(xh[i]);
  }
  for (uint32_t n = 0; n < N; n++)
    for (uint32_t kk = 0; kk < K; kk++)
      wf[(size_t)n * K + kk] = (float)q[(size_t)n * K + kk] * kern_bf16_to_f32(sh[(size_t)n * (K / 128) + kk / 128]);
  std::vector<uint8_t> packed(kern_wq_packed_bytes(bits, N, K));
  kern_wq_pack(bits, q.data(), N, K, packed.data());
  std::vector<double> ref((size_t)M * N);
  kern_ref_gemm(xf.data(), wf.data(), M, N, K, 1.0, ref.data());
  kdev dw, ds, dx, dy, dacc;
  int rc;
  if ((rc = kdev_upload(k, &dw, packed.data(), packed.size(), err)) ||
      (rc = kdev_upload(k, &ds, sh.data(), sh.size() * 2, err)) ||
      (rc = kdev_upload(k, &dx, xh.data(), xh.size() * 2, err)) || (rc = kdev_alloc(k, &dy, (size_t)M * N * 2, err)) ||
      (rc = kdev_alloc(k, &dacc, (size_t)M * N * 4, err)) || (rc = kdev_poison(k, dy.p, (size_t)M * N * 2, 0xff, err)))
    return rc;
  wq_args a = {bits, M, N, K, split, (const uint8_t *)dw.p, (const __nv_bfloat16 *)ds.p,
               (const __nv_bfloat16 *)dx.p, (__nv_bfloat16 *)dy.p, (float *)dacc.p};
  if ((rc = wq_launch(k, &a, err))) return rc;
  std::vector<uint16_t> yh((size_t)M * N);
  if ((rc = kdev_download(k, yh.data(), dy.p, yh.size() * 2, err))) return rc;
  std::vector<float> out(yh.size());
  for (size_t i = 0; i < yh.size(); i++) out[i] = kern_bf16_to_f32(yh[i]);
  size_t bad;
  double rel = kern_rel_err(out.data(), ref.data(), out.size(), &bad);
  kcheck_set(c, name, rel, KERN_TOL_BF16, bad, nullptr);
  return SIM_OK;
}

int kwq_check(kern_ctx *k, sim_dtype wdt, kern_check *out, int max, int *n, sim_err *err) {
  int bits = wdt == DT_INT4 ? 4 : 8;
  /* every NT variant, a partial block of rows (N = 96, 160), ragged M, K
   * split automatically and forced (atomics + finish kernel) */
  static const uint32_t shapes[][4] = {
      {1, 256, 1024, 0}, {5, 96, 384, 1}, {16, 128, 1024, 3}, {33, 160, 512, 0}, {64, 256, 256, 2}, {3, 32, 128, 1}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(shapes) && *n < max; i++) {
    int rc = wq_check_one(k, bits, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], &out[*n], err);
    if (rc) return rc;
    (*n)++;
  }
  return SIM_OK;
}

/* ---- timing ---------------------------------------------------------------------------- */

struct wq_state {
  wq_args a;
  const uint8_t *W0, *S0, *X0;
  uint8_t *Y0;
  size_t ws, ss, xs, ys; /* bytes between rotated sets */
};

static int wq_call(kern_ctx *k, void *vs, uint32_t set, sim_err *err) {
  wq_state *s = (wq_state *)vs;
  wq_args a = s->a;
  a.W = s->W0 + set * s->ws;
  a.S = (const __nv_bfloat16 *)(s->S0 + set * s->ss);
  a.X = (const __nv_bfloat16 *)(s->X0 + set * s->xs);
  a.Y = (__nv_bfloat16 *)(s->Y0 + set * s->ys);
  return wq_launch(k, &a, err);
}

int kern_time_wq(kern_ctx *k, sim_dtype wdt, uint32_t M, uint32_t N, uint32_t K, kern_time *t, sim_err *err) {
  memset(t, 0, sizeof *t);
  if (wdt != DT_INT4 && wdt != DT_INT8)
    return sim_errf(err, SIM_EINPUT, "weight-only kernel: weights must be int4 or int8, not %s", dtype_name(wdt));
  int rc = kcheck_gate(k, KF_WQ, wdt, err);
  if (rc) return rc;
  if (!kern_wq_shape_ok(N, K) || M == 0)
    return sim_errf(err, SIM_EINPUT, "weight-only kernel: N=%u K=%u M=%u (needs N %% 32 == 0, K %% 128 == 0, M > 0)", N,
                    K, M);
  int bits = wdt == DT_INT4 ? 4 : 8;
  auto al = [](size_t b) { return (b + 255) & ~(size_t)255; };
  wq_state s;
  memset(&s, 0, sizeof s);
  s.ws = al(kern_wq_packed_bytes(bits, N, K));
  s.ss = al((size_t)N * (K / 128) * 2);
  s.xs = al((size_t)M * K * 2);
  s.ys = al((size_t)M * N * 2);
  double set_bytes = (double)(s.ws + s.ss + s.xs + s.ys);
  uint32_t sets = ktime_sets(k, set_bytes);
  if ((rc = kbuf_need(k, KB_W, sets * s.ws, KFILL_BYTES, err)) ||
      (rc = kbuf_need(k, KB_S, sets * s.ss, KFILL_SCALE, err)) ||
      (rc = kbuf_need(k, KB_X, sets * s.xs, KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_Y, sets * s.ys, KFILL_NONE, err)) ||
      (rc = kbuf_need(k, KB_P, (size_t)M * N * 4, KFILL_NONE, err)))
    return rc;
  s.W0 = (const uint8_t *)k->buf[KB_W].p;
  s.S0 = (const uint8_t *)k->buf[KB_S].p;
  s.X0 = (const uint8_t *)k->buf[KB_X].p;
  s.Y0 = (uint8_t *)k->buf[KB_Y].p;
  s.a.bits = bits;
  s.a.M = M;
  s.a.N = N;
  s.a.K = K;
  s.a.ksplit = 0;
  s.a.Yacc = (float *)k->buf[KB_P].p;
  return ktime_run(k, wq_call, &s, sets, set_bytes, t, err);
}
