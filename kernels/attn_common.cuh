/* attn_common.cuh: the warp-level attention step shared by our decode and
 * prefill kernels: one warp, 16 query rows, head dim 128, bf16 tensor cores
 * (mma.sync m16n8k16), fp32 online softmax in base 2.
 *
 * Fragment layout (PTX ISA, mma.m16n8k16, lane = 4 g + t):
 *   A (16 x 16): a0a1 = (row g, cols 2t, 2t+1), a2a3 = (row g+8, same cols),
 *                a4a5 = (row g, cols 2t+8, 2t+9), a6a7 = (row g+8, same)
 *   B (16 x 8):  b0b1 = (rows 2t, 2t+1, col g), b2b3 = (rows 2t+8, 2t+9, col g)
 *   C (16 x 8):  c0c1 = (row g, cols 2t, 2t+1), c2c3 = (row g+8, same cols)
 * S = Q K^T: the k index is the head dimension d. A dot product does not care
 * in which order it visits d, so each lane reads whole 16-byte chunks: lane t
 * owns the 8-value chunks c(t, i) = 2t + (i & 1) + 8 (i >> 1), i = 0..3, and
 * k-step s = 2 i + h reads values 4h .. 4h+3 of chunk i; Q (A) and K (B) use
 * the same map. (For shared memory with a 272-byte row stride this map makes
 * a quarter-warp's 16-byte reads hit 8 different bank groups.)
 * O += P V: the k index is the token. P comes straight from S's C fragments
 * (the FlashAttention-2 register reuse); the n index is d: the lane with
 * g = n reads V chunks g and g + 8, whose 16 values feed the 16 n-tiles:
 * n-tile jj, column n  <->  d = 8 n + jj (jj < 8), 64 + 8 n + (jj - 8) (jj >= 8).
 * The B pairs (tokens 2t, 2t+1) come from two token rows and are packed with
 * byte permutes. */
#ifndef SIM_ATTN_COMMON_CUH
#define SIM_ATTN_COMMON_CUH

#include "kern_internal.cuh"

#define ATTN_D 128
#define ATTN_LOG2E 1.4426950408889634f

/* d of output n-tile jj, column n. */
__device__ __forceinline__ int attn_dmap(int jj, int n) { return jj < 8 ? 8 * n + jj : 64 + 8 * n + (jj - 8); }
/* first d of the lane's i-th K/Q chunk */
__device__ __forceinline__ int attn_kchunk(int t, int i) { return 8 * (2 * t + (i & 1) + 8 * (i >> 1)); }

/* The four 16-byte chunks (bf16) of one 128-wide row that lane t reads. */
__device__ __forceinline__ void attn_load_row_bf16(const __nv_bfloat16 *row, int t, uint4 c[4]) {
  const uint4 *p = reinterpret_cast<const uint4 *>(row);
#pragma unroll
  for (int i = 0; i < 4; i++) c[i] = p[attn_kchunk(t, i) / 8];
}

/* Same from an fp8 row (128 bytes): chunks 2t, 2t+1 are bytes 16t..16t+15,
 * chunks 2t+8, 2t+9 are bytes 64+16t..; converted exactly to bf16. */
__device__ __forceinline__ void attn_cvt_fp8x16(uint4 v, uint4 *lo, uint4 *hi) {
  lo->x = fp8x2_to_bf16x2((uint16_t)(v.x & 0xffff)), lo->y = fp8x2_to_bf16x2((uint16_t)(v.x >> 16));
  lo->z = fp8x2_to_bf16x2((uint16_t)(v.y & 0xffff)), lo->w = fp8x2_to_bf16x2((uint16_t)(v.y >> 16));
  hi->x = fp8x2_to_bf16x2((uint16_t)(v.z & 0xffff)), hi->y = fp8x2_to_bf16x2((uint16_t)(v.z >> 16));
  hi->z = fp8x2_to_bf16x2((uint16_t)(v.w & 0xffff)), hi->w = fp8x2_to_bf16x2((uint16_t)(v.w >> 16));
}
__device__ __forceinline__ void attn_load_row_fp8(const uint8_t *row, int t, uint4 c[4]) {
  const uint4 *p = reinterpret_cast<const uint4 *>(row);
  attn_cvt_fp8x16(p[t], &c[0], &c[1]);
  attn_cvt_fp8x16(p[4 + t], &c[2], &c[3]);
}
/* V chunks g and g+8 of one token row: 16 bf16 = 8 words (word w = n-tiles 2w, 2w+1). */
__device__ __forceinline__ void attn_load_v_bf16(const __nv_bfloat16 *row, int g, uint32_t w[8]) {
  const uint4 *p = reinterpret_cast<const uint4 *>(row);
  uint4 a = p[g], b = p[g + 8];
  w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
}
__device__ __forceinline__ void attn_load_v_fp8(const uint8_t *row, int g, uint32_t w[8]) {
  const uint2 *p = reinterpret_cast<const uint2 *>(row);
  uint2 a = p[g], b = p[g + 8];
  w[0] = fp8x2_to_bf16x2((uint16_t)(a.x & 0xffff)), w[1] = fp8x2_to_bf16x2((uint16_t)(a.x >> 16));
  w[2] = fp8x2_to_bf16x2((uint16_t)(a.y & 0xffff)), w[3] = fp8x2_to_bf16x2((uint16_t)(a.y >> 16));
  w[4] = fp8x2_to_bf16x2((uint16_t)(b.x & 0xffff)), w[5] = fp8x2_to_bf16x2((uint16_t)(b.x >> 16));
  w[6] = fp8x2_to_bf16x2((uint16_t)(b.y & 0xffff)), w[7] = fp8x2_to_bf16x2((uint16_t)(b.y >> 16));
}

/* Q A-fragments for the 8 k-steps from rows g (lo) and g+8 (hi) chunks. */
__device__ __forceinline__ void attn_q_frags(const uint4 lo[4], const uint4 hi[4], uint32_t qa[8][4]) {
#pragma unroll
  for (int s = 0; s < 8; s++) {
    const uint32_t *l = reinterpret_cast<const uint32_t *>(&lo[s >> 1]);
    const uint32_t *h = reinterpret_cast<const uint32_t *>(&hi[s >> 1]);
    int w = 2 * (s & 1);
    qa[s][0] = l[w], qa[s][1] = h[w], qa[s][2] = l[w + 1], qa[s][3] = h[w + 1];
  }
}

/* S(16 x 8) += Q K^T for one n-tile of 8 tokens; kc = the K chunks of token g of the tile. */
__device__ __forceinline__ void attn_qk(float s[4], const uint32_t qa[8][4], const uint4 kc[4]) {
#pragma unroll
  for (int st = 0; st < 8; st++) {
    const uint32_t *k = reinterpret_cast<const uint32_t *>(&kc[st >> 1]);
    int w = 2 * (st & 1);
    mma_bf16_16816(s, qa[st], k[w], k[w + 1]);
  }
}

/* Online softmax state of the warp's 16 rows (per lane: rows g and g+8). */
struct attn_acc {
  float o[16][4]; /* O (unnormalized) as C fragments of the 16 d n-tiles */
  float m[2];     /* running max of the scaled scores, rows g and g+8 (base 2) */
  float l[2];     /* running sum of exp2, this lane's columns only (reduce at the end) */
};

__device__ __forceinline__ void attn_acc_init(attn_acc *a) {
#pragma unroll
  for (int j = 0; j < 16; j++)
#pragma unroll
    for (int i = 0; i < 4; i++) a->o[j][i] = 0.0f;
  a->m[0] = a->m[1] = -INFINITY;
  a->l[0] = a->l[1] = 0.0f;
}

/* Softmax update for NTILE n-tiles of scores s (already scaled to base 2 and
 * masked with -inf); turns s into probabilities and rescales O. */
template <int NTILE>
__device__ __forceinline__ void attn_softmax(attn_acc *a, float s[NTILE][4]) {
#pragma unroll
  for (int r = 0; r < 2; r++) {
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < NTILE; j++) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    float mnew = fmaxf(a->m[r], mx);
    float muse = mnew == -INFINITY ? 0.0f : mnew; /* a row with nothing unmasked yet */
    float alpha = exp2f(a->m[r] - muse);
    a->m[r] = mnew;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < NTILE; j++) {
      s[j][2 * r] = exp2f(s[j][2 * r] - muse);
      s[j][2 * r + 1] = exp2f(s[j][2 * r + 1] - muse);
      sum += s[j][2 * r] + s[j][2 * r + 1];
    }
    a->l[r] = a->l[r] * alpha + sum;
#pragma unroll
    for (int jj = 0; jj < 16; jj++) {
      a->o[jj][2 * r] *= alpha;
      a->o[jj][2 * r + 1] *= alpha;
    }
  }
}

/* O += P V over 16 tokens: p0, p1 = probabilities of the two 8-token n-tiles
 * (C layout); v[q][8] = V words of tokens 2t, 2t+1, 2t+8, 2t+9 (q = 0..3). */
__device__ __forceinline__ void attn_pv(attn_acc *a, const float p0[4], const float p1[4], const uint32_t v[4][8]) {
  uint32_t pa[4] = {pack_bf16x2(p0[0], p0[1]), pack_bf16x2(p0[2], p0[3]), pack_bf16x2(p1[0], p1[1]),
                    pack_bf16x2(p1[2], p1[3])};
#pragma unroll
  for (int jj = 0; jj < 16; jj++) {
    uint32_t sel = (jj & 1) ? 0x7632u : 0x5410u; /* high or low halves of word jj / 2 */
    uint32_t b01 = __byte_perm(v[0][jj >> 1], v[1][jj >> 1], sel);
    uint32_t b23 = __byte_perm(v[2][jj >> 1], v[3][jj >> 1], sel);
    mma_bf16_16816(a->o[jj], pa, b01, b23);
  }
}

/* Final row sums: add the four lanes (t = 0..3) of each row. */
__device__ __forceinline__ void attn_reduce_l(attn_acc *a) {
#pragma unroll
  for (int r = 0; r < 2; r++) {
    a->l[r] += __shfl_xor_sync(0xffffffffu, a->l[r], 1);
    a->l[r] += __shfl_xor_sync(0xffffffffu, a->l[r], 2);
  }
}

#endif
