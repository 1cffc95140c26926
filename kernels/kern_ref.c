/* kern_ref.c: the host half of the kernels API that every build has: number
 * formats (bf16, fp8 E4M3), the packed layout of the weight-only kernels and
 * the CPU references the GPU kernels are checked against.
 *
 * References accumulate in double and read the exact values the GPU reads
 * (inputs already rounded to bf16 / fp8 / int by the caller), so the only
 * differences left are the GPU's accumulation order and output rounding. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern.h"

static const char *const fam_names[KF_COUNT] = {"gemm", "wq", "decode", "prefill"};

const char *kern_family_name(kern_family f) { return (unsigned)f < KF_COUNT ? fam_names[f] : "?"; }

bool kern_family_parse(const char *s, kern_family *out) {
  for (int i = 0; i < KF_COUNT; i++)
    if (!strcmp(s, fam_names[i])) {
      *out = (kern_family)i;
      return true;
    }
  return false;
}

/* ---- number formats ---------------------------------------------------------- */

uint16_t kern_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);                                           /* round to nearest even */
  return (uint16_t)(u >> 16);
}

float kern_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* E4M3: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities, S.1111.111
 * is NaN, so the largest finite value is 1.75 x 2^8 = 448. Subnormals have
 * exponent field 0 and step 2^-9. */
uint8_t kern_f32_to_fp8(float f) {
  if (isnan(f)) return 0x7f;
  uint8_t sign = signbit(f) ? 0x80 : 0;
  double a = fabs((double)f);
  if (a == 0) return sign;
  int ex;
  double fr = frexp(a, &ex); /* a = fr * 2^ex, fr in [0.5, 1) */
  int e = ex - 1;            /* a = (2 fr) * 2^e, 2 fr in [1, 2) */
  if (e < -6) {              /* subnormal range: multiples of 2^-9 */
    double m = rint(ldexp(a, 9));
    return (uint8_t)(sign | (uint8_t)m); /* m == 8 is the smallest normal, same bits */
  }
  double m = rint((2 * fr - 1) * 8); /* 0..8 */
  if (m == 8) {
    m = 0;
    e++;
  }
  if (e > 8 || (e == 8 && m > 6)) return (uint8_t)(sign | 0x7e); /* saturate to 448 */
  return (uint8_t)(sign | (uint8_t)((e + 7) << 3) | (uint8_t)m);
}

float kern_fp8_to_f32(uint8_t v) {
  int e = (v >> 3) & 0xf, m = v & 7;
  double a;
  if (e == 15 && m == 7) return NAN;
  if (e == 0) a = ldexp((double)m, -9);
  else a = ldexp(1.0 + m / 8.0, e - 7);
  return (float)((v & 0x80) ? -a : a);
}

/* ---- weight-only packed layout ---------------------------------------------------- */

bool kern_wq_shape_ok(uint32_t N, uint32_t K) { return N > 0 && K > 0 && N % 32 == 0 && K % 128 == 0; }

size_t kern_wq_packed_bytes(int bits, uint32_t N, uint32_t K) {
  return (size_t)N * K * (size_t)bits / 8;
}

/* Where q[n][k] lives: byte offset and bit shift of its field. Tile columns
 * C = 64 (int4) or 32 (int8); lane t of a row group owns tile columns
 * t*C/4 .. t*C/4 + C/4 - 1, walked as k-steps s of 4 columns (idx 0..3).
 * mma.m16n8k16 A fragment of lane (g, t): a0 a1 = row g, k-step columns 2t, 2t+1;
 * a2 a3 = row g+8, same columns; a4 a5 = row g, 2t+8, 2t+9; a6 a7 = row g+8,
 * 2t+8, 2t+9. We map the fragment's columns {2t, 2t+1, 2t+8, 2t+9} to the
 * lane's physical columns 4s + {0, 1, 2, 3}, and the activations use the same
 * map, so the k-step computes the right partial dot product. */
static void wq_loc(int bits, uint32_t K, uint32_t n, uint32_t k, size_t *byte, int *shift) {
  uint32_t C = bits == 4 ? 64 : 32, per_lane = C / 4;
  size_t tile = (size_t)(n / 16) * (K / C) + k / C;
  uint32_t r = n % 16, c = k % C;
  uint32_t t = c / per_lane, w = c % per_lane, s = w / 4, idx = w % 4;
  uint32_t g = r % 8, upper = r >= 8;
  /* fragment index a0..a7 of (row, idx) */
  static const int ai_lo[4] = {0, 1, 4, 5}, ai_hi[4] = {2, 3, 6, 7};
  int ai = upper ? ai_hi[idx] : ai_lo[idx];
  size_t lane_base = tile * 512 + (size_t)(4 * g + t) * 16;
  if (bits == 4) {
    /* word s; pair p = ai/2 holds a_{2p} at nibble p and a_{2p+1} at nibble p+4 */
    int p = ai / 2, hi = ai % 2;
    int nib = p + 4 * hi;
    *byte = lane_base + 4 * s + (size_t)(nib / 2);
    *shift = 4 * (nib % 2);
  } else {
    /* words 2s (a0..a3) and 2s+1 (a4..a7), one byte each */
    *byte = lane_base + 4 * (2 * s + (ai >= 4)) + (size_t)(ai % 4);
    *shift = 0;
  }
}

void kern_wq_pack(int bits, const int8_t *q, uint32_t N, uint32_t K, uint8_t *packed) {
  memset(packed, 0, kern_wq_packed_bytes(bits, N, K));
  for (uint32_t n = 0; n < N; n++)
    for (uint32_t k = 0; k < K; k++) {
      size_t b;
      int sh;
      wq_loc(bits, K, n, k, &b, &sh);
      int v = q[(size_t)n * K + k];
      uint8_t u = bits == 4 ? (uint8_t)((v + 8) & 0xf) : (uint8_t)(v + 128);
      packed[b] |= (uint8_t)(u << sh);
    }
}

int kern_wq_unpack(int bits, const uint8_t *packed, uint32_t N, uint32_t K, uint32_t n, uint32_t k) {
  (void)N;
  size_t b;
  int sh;
  wq_loc(bits, K, n, k, &b, &sh);
  if (bits == 4) return (int)((packed[b] >> sh) & 0xf) - 8;
  return (int)packed[b] - 128;
}

/* ---- references ------------------------------------------------------------------- */

void kern_ref_gemm(const float *X, const float *W, uint32_t M, uint32_t N, uint32_t K, double scale, double *Y) {
  for (uint32_t m = 0; m < M; m++)
    for (uint32_t n = 0; n < N; n++) {
      const float *x = X + (size_t)m * K, *w = W + (size_t)n * K;
      double acc = 0;
      for (uint32_t k = 0; k < K; k++) acc += (double)x[k] * (double)w[k];
      Y[(size_t)m * N + n] = acc * scale;
    }
}

/* Attention of one query vector q[D] over tokens 0..len-1 of a paged sequence. */
static void ref_attend(const float *q, const float *Kc, const float *Vc, const int32_t *table, uint32_t len,
                       uint32_t kh, uint32_t Hkv, uint32_t D, double *o, double *scores) {
  double scale = 1.0 / sqrt((double)D), mx = -INFINITY;
  for (uint32_t i = 0; i < len; i++) {
    size_t row = (((size_t)table[i / 16] * Hkv + kh) * 16 + i % 16) * D;
    double s = 0;
    for (uint32_t d = 0; d < D; d++) s += (double)q[d] * (double)Kc[row + d];
    scores[i] = s * scale;
    if (scores[i] > mx) mx = scores[i];
  }
  double sum = 0;
  for (uint32_t i = 0; i < len; i++) {
    scores[i] = exp(scores[i] - mx);
    sum += scores[i];
  }
  for (uint32_t d = 0; d < D; d++) o[d] = 0;
  for (uint32_t i = 0; i < len; i++) {
    size_t row = (((size_t)table[i / 16] * Hkv + kh) * 16 + i % 16) * D;
    double p = scores[i] / sum;
    for (uint32_t d = 0; d < D; d++) o[d] += p * (double)Vc[row + d];
  }
}

void kern_ref_attn_decode(const float *Q, const float *Kc, const float *Vc, const int32_t *table,
                          uint32_t max_blocks, const int32_t *lens, uint32_t B, uint32_t Hq, uint32_t Hkv,
                          uint32_t D, double *O) {
  uint32_t G = Hq / Hkv, maxlen = 0;
  for (uint32_t b = 0; b < B; b++)
    if ((uint32_t)lens[b] > maxlen) maxlen = (uint32_t)lens[b];
  double *scores = sim_malloc(sizeof(double) * (maxlen ? maxlen : 1));
  for (uint32_t b = 0; b < B; b++)
    for (uint32_t h = 0; h < Hq; h++)
      ref_attend(Q + ((size_t)b * Hq + h) * D, Kc, Vc, table + (size_t)b * max_blocks, (uint32_t)lens[b], h / G,
                 Hkv, D, O + ((size_t)b * Hq + h) * D, scores);
  free(scores);
}

void kern_ref_attn_prefill(const float *Q, const float *Kc, const float *Vc, const int32_t *table, uint32_t chunk,
                           uint32_t ctx, uint32_t Hq, uint32_t Hkv, uint32_t D, double *O) {
  uint32_t G = Hq / Hkv;
  double *scores = sim_malloc(sizeof(double) * (ctx + chunk));
  for (uint32_t i = 0; i < chunk; i++)
    for (uint32_t h = 0; h < Hq; h++)
      ref_attend(Q + ((size_t)i * Hq + h) * D, Kc, Vc, table, ctx + i + 1, h / G, Hkv, D,
                 O + ((size_t)i * Hq + h) * D, scores);
  free(scores);
}

double kern_rel_err(const float *out, const double *ref, size_t n, size_t *bad) {
  double num = 0, den = 0;
  size_t nb = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(out[i])) {
      nb++;
      continue;
    }
    double d = (double)out[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (bad) *bad = nb;
  if (nb) return INFINITY;
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return sqrt(num / den);
}
