/* attn_decode.cu: our paged decode attention (one new token per sequence)
 * over a paged KV cache of 16-token blocks, GQA, head dim 128, bf16 or fp8
 * (E4M3, per-tensor k/v scales) KV cache; bf16 tensor cores, fp32 softmax.
 *
 * Grid over batch x KV length: block (split, kv head, sequence). A block
 * takes every query head of its KV head (G = q_heads / kv_heads <= 16 rows of
 * one MMA tile, so each KV token is read once for all of them) and a range of
 * the sequence's 16-token KV blocks; its 4 warps take every 4th KV block,
 * each with its own online softmax, merged through shared memory at the end.
 * The number of splits is chosen so that batch x kv_heads x splits fills the
 * GPU; with more than one split, partial (max, sum, O) go to a workspace and
 * a second kernel merges them (flash-decoding).
 *
 * Layouts: Q, O [B][Hq][128] bf16; K/V cache [blocks][Hkv][16][128];
 * table [B][max_blocks] int32 (physical block ids); lens [B] int32 tokens.
 * Memory-bound: the bytes are the K and V of every cached token (per KV head
 * B x L x 128 x 2 x bytes); each lane loads 16-byte chunks, 256 bytes of K and V
 * per 16-token block (bf16), all in flight before the MMAs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "attn_common.cuh"

extern "C" {
#include "hw/prof.h"
}

#define DEC_WARPS 4

template <bool FP8>
__global__ void __launch_bounds__(DEC_WARPS * 32)
    decode_kernel(const __nv_bfloat16 *__restrict__ Q, const uint8_t *__restrict__ Kc, const uint8_t *__restrict__ Vc,
                  const int32_t *__restrict__ table, const int32_t *__restrict__ lens, uint32_t max_blocks, uint32_t Hq,
                  uint32_t Hkv, uint32_t nsplit, uint32_t bps, float scale_log2, float v_scale,
                  __nv_bfloat16 *__restrict__ O, float *__restrict__ part_o, float *__restrict__ part_ml) {
  __shared__ float sm_o[DEC_WARPS][16][ATTN_D];
  __shared__ float sm_m[DEC_WARPS][16], sm_l[DEC_WARPS][16];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const uint32_t sp = blockIdx.x, kh = blockIdx.y, b = blockIdx.z, G = Hq / Hkv;
  const int32_t L = lens[b];
  const uint32_t nb = (uint32_t)(L + 15) / 16, blk0 = sp * bps, blk1 = min(nb, blk0 + bps);
  constexpr size_t ES = FP8 ? 1 : 2; /* bytes per cache element */

  /* Q rows g and g+8 of this KV head's query heads (zero beyond G) */
  uint32_t qa[8][4];
  {
    uint4 lo[4], hi[4];
    const __nv_bfloat16 *q0 = Q + ((size_t)b * Hq + kh * G) * ATTN_D;
#pragma unroll
    for (int i = 0; i < 4; i++) lo[i] = hi[i] = make_uint4(0, 0, 0, 0);
    if ((uint32_t)g < G) attn_load_row_bf16(q0 + (size_t)g * ATTN_D, t, lo);
    if ((uint32_t)g + 8 < G) attn_load_row_bf16(q0 + (size_t)(g + 8) * ATTN_D, t, hi);
    attn_q_frags(lo, hi, qa);
  }
  attn_acc acc;
  attn_acc_init(&acc);
  const int32_t *tab = table + (size_t)b * max_blocks;
  for (uint32_t blk = blk0 + warp; blk < blk1; blk += DEC_WARPS) {
    const size_t base = ((size_t)tab[blk] * Hkv + kh) * 16 * ATTN_D * ES; /* byte offset of the 16 x 128 tile */
    const int valid = min(16, L - (int)blk * 16);
    uint4 kc[2][4];
    uint32_t v[4][8];
#pragma unroll
    for (int j = 0; j < 2; j++) {
      const uint8_t *row = Kc + base + (size_t)(8 * j + g) * ATTN_D * ES;
      if (FP8) attn_load_row_fp8(row, t, kc[j]);
      else attn_load_row_bf16(reinterpret_cast<const __nv_bfloat16 *>(row), t, kc[j]);
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
      const int tok = 2 * t + (q & 1) + 8 * (q >> 1);
      const uint8_t *row = Vc + base + (size_t)tok * ATTN_D * ES;
      if (FP8) attn_load_v_fp8(row, g, v[q]);
      else attn_load_v_bf16(reinterpret_cast<const __nv_bfloat16 *>(row), g, v[q]);
    }
    float s[2][4];
#pragma unroll
    for (int j = 0; j < 2; j++) {
#pragma unroll
      for (int i = 0; i < 4; i++) s[j][i] = 0.0f;
      attn_qk(s[j], qa, kc[j]);
#pragma unroll
      for (int i = 0; i < 4; i++) {
        int tok = 8 * j + 2 * t + (i & 1);
        s[j][i] = tok < valid ? s[j][i] * scale_log2 : -INFINITY;
      }
    }
    attn_softmax<2>(&acc, s);
    attn_pv(&acc, s[0], s[1], v);
  }
  attn_reduce_l(&acc);
  /* merge the 4 warps */
#pragma unroll
  for (int jj = 0; jj < 16; jj++)
#pragma unroll
    for (int i = 0; i < 4; i++) sm_o[warp][g + 8 * (i >> 1)][attn_dmap(jj, 2 * t + (i & 1))] = acc.o[jj][i];
  if (t == 0) {
    sm_m[warp][g] = acc.m[0], sm_m[warp][g + 8] = acc.m[1];
    sm_l[warp][g] = acc.l[0], sm_l[warp][g + 8] = acc.l[1];
  }
  __syncthreads();
  const int d = threadIdx.x; /* 128 threads = 128 head dims */
  for (uint32_t r = 0; r < G; r++) {
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < DEC_WARPS; w++) M = fmaxf(M, sm_m[w][r]);
    float o = 0.0f, l = 0.0f;
    if (M != -INFINITY) {
#pragma unroll
      for (int w = 0; w < DEC_WARPS; w++) {
        float f = exp2f(sm_m[w][r] - M); /* 0 for a warp that saw no token */
        o += f * sm_o[w][r][d];
        l += f * sm_l[w][r];
      }
    }
    const size_t h = (size_t)b * Hq + kh * G + r;
    if (nsplit == 1) {
      O[h * ATTN_D + d] = __float2bfloat16_rn(l > 0 ? o / l * v_scale : 0.0f);
    } else {
      part_o[(h * nsplit + sp) * ATTN_D + d] = o * v_scale;
      if (d == 0) {
        part_ml[(h * nsplit + sp) * 2] = M;
        part_ml[(h * nsplit + sp) * 2 + 1] = l;
      }
    }
  }
}

/* Merge the splits of one (sequence, query head): block (head, sequence), 128 threads. */
__global__ void decode_combine(const float *__restrict__ part_o, const float *__restrict__ part_ml, uint32_t Hq,
                               uint32_t nsplit, __nv_bfloat16 *__restrict__ O) {
  const size_t h = (size_t)blockIdx.y * Hq + blockIdx.x;
  const int d = threadIdx.x;
  float M = -INFINITY;
  for (uint32_t s = 0; s < nsplit; s++)
    if (part_ml[(h * nsplit + s) * 2 + 1] > 0) M = fmaxf(M, part_ml[(h * nsplit + s) * 2]);
  float o = 0.0f, l = 0.0f;
  for (uint32_t s = 0; s < nsplit && M != -INFINITY; s++) {
    float ls = part_ml[(h * nsplit + s) * 2 + 1];
    if (ls <= 0) continue;
    float f = exp2f(part_ml[(h * nsplit + s) * 2] - M);
    o += f * part_o[(h * nsplit + s) * ATTN_D + d];
    l += f * ls;
  }
  O[h * ATTN_D + d] = __float2bfloat16_rn(l > 0 ? o / l : 0.0f);
}

struct dec_args {
  bool fp8;
  uint32_t B, Hq, Hkv, max_blocks, max_len, nsplit; /* nsplit 0 = choose */
  const __nv_bfloat16 *Q;
  const uint8_t *K, *V;
  const int32_t *table, *lens;
  float k_scale, v_scale;
  __nv_bfloat16 *O;
  float *part_o, *part_ml; /* [B][Hq][nsplit][128], [B][Hq][nsplit][2] */
};

#define DEC_MAX_SPLIT 64

static uint32_t dec_split(const kern_ctx *k, uint32_t B, uint32_t Hkv, uint32_t max_len) {
  uint32_t nb = (max_len + 15) / 16, ctas = B * Hkv, target = 2 * (uint32_t)k->info.sm_count;
  uint32_t split = (target + ctas - 1) / ctas;
  uint32_t most = (nb + 2 * DEC_WARPS - 1) / (2 * DEC_WARPS); /* >= 2 KV blocks per warp */
  split = std::min(split, std::min(most, (uint32_t)DEC_MAX_SPLIT));
  return split ? split : 1;
}

static int dec_launch(kern_ctx *k, const dec_args *a, sim_err *err) {
  uint32_t ns = a->nsplit ? a->nsplit : dec_split(k, a->B, a->Hkv, a->max_len);
  uint32_t nb = (a->max_len + 15) / 16, bps = (nb + ns - 1) / ns;
  float sl = ATTN_LOG2E / sqrtf((float)ATTN_D) * a->k_scale;
  dim3 grid(ns, a->Hkv, a->B);
  if (a->fp8)
    decode_kernel<true><<<grid, DEC_WARPS * 32, 0, k->stream>>>(a->Q, a->K, a->V, a->table, a->lens, a->max_blocks,
                                                                 a->Hq, a->Hkv, ns, bps, sl, a->v_scale, a->O,
                                                                 a->part_o, a->part_ml);
  else
    decode_kernel<false><<<grid, DEC_WARPS * 32, 0, k->stream>>>(a->Q, a->K, a->V, a->table, a->lens, a->max_blocks,
                                                                  a->Hq, a->Hkv, ns, bps, sl, a->v_scale, a->O,
                                                                  a->part_o, a->part_ml);
  KLAUNCHED();
  if (ns > 1) {
    decode_combine<<<dim3(a->Hq, a->B), ATTN_D, 0, k->stream>>>(a->part_o, a->part_ml, a->Hq, ns, a->O);
    KLAUNCHED();
  }
  return SIM_OK;
}

static const char *dec_shape_error(uint32_t Hq, uint32_t Hkv, uint32_t D) {
  if (D != ATTN_D) return "head_dim must be 128";
  if (!Hkv || Hq % Hkv) return "q_heads must be a multiple of kv_heads";
  if (Hq / Hkv > 16) return "at most 16 query heads per KV head";
  return nullptr;
}

/* ---- check -------------------------------------------------------------------------------- */

static int dec_check_one(kern_ctx *k, bool fp8, uint32_t Hq, uint32_t Hkv, const std::vector<int32_t> &lens,
                         uint32_t nsplit, kern_check *c, sim_err *err) {
  const uint32_t B = (uint32_t)lens.size(), D = ATTN_D;
  uint32_t max_len = 0;
  for (int32_t l : lens) max_len = std::max(max_len, (uint32_t)l);
  const uint32_t max_blocks = (max_len + 15) / 16, nblocks = B * max_blocks + 3;
  char name[96];
  snprintf(name, sizeof name, "decode %s B=%u Hq=%u Hkv=%u max_len=%u split=%s%u", fp8 ? "fp8" : "bf16", B, Hq, Hkv,
           max_len, nsplit ? "" : "auto:", nsplit ? nsplit : dec_split(k, B, Hkv, max_len));
  krng r = kern_check_rng(k);
  /* a shuffled pool of physical blocks: tables point anywhere */
  std::vector<int32_t> perm(nblocks), table((size_t)B * max_blocks);
  for (uint32_t i = 0; i < nblocks; i++) perm[i] = (int32_t)i;
  for (uint32_t i = nblocks - 1; i > 0; i--) std::swap(perm[i], perm[r.below(i + 1)]);
  for (size_t i = 0; i < table.size(); i++) table[i] = perm[i];
  const size_t cache_n = (size_t)nblocks * Hkv * 16 * D;
  const float ks = fp8 ? 0.8f : 1.0f, vs = fp8 ? 1.25f : 1.0f;
  std::vector<float> kf(cache_n), vf(cache_n), qf((size_t)B * Hq * D);
  std::vector<uint8_t> kb(cache_n * (fp8 ? 1 : 2)), vb(kb.size());
  std::vector<uint16_t> qh(qf.size());
  for (size_t i = 0; i < cache_n; i++) {
    for (int which = 0; which < 2; which++) {
      float x = (float)(r.sym() * (which ? 1.0 : 2.0));
      std::vector<float> &f = which ? vf : kf;
      std::vector<uint8_t> &bytes = which ? vb : kb;
      if (fp8) {
        bytes[i] = kern_f32_to_fp8(x);
        f[i] = kern_fp8_to_f32(bytes[i]) * (which ? vs : ks); /* the value the cache represents */
      } else {
        uint16_t h = kern_f32_to_bf16(x);
        memcpy(&bytes[2 * i], &h, 2);
        f[i] = kern_bf16_to_f32(h);
      }
    }
  }
  for (size_t i = 0; i < qf.size(); i++) {
    qh[i] = kern_f32_to_bf16((float)r.sym());
    qf[i] = kern_bf16_to_f32(qh[i]);
  }
  std::vector<double> ref(qf.size());
  kern_ref_attn_decode(qf.data(), kf.data(), vf.data(), table.data(), max_blocks, lens.data(), B, Hq, Hkv, D,
                       ref.data());
  kdev dq, dk, dv, dt, dl, dout, dpo, dpm;
  int rc;
  const size_t osz = qf.size() * 2;
  if ((rc = kdev_upload(k, &dq, qh.data(), osz, err)) || (rc = kdev_upload(k, &dk, kb.data(), kb.size(), err)) ||
      (rc = kdev_upload(k, &dv, vb.data(), vb.size(), err)) ||
      (rc = kdev_upload(k, &dt, table.data(), table.size() * 4, err)) ||
      (rc = kdev_upload(k, &dl, lens.data(), lens.size() * 4, err)) || (rc = kdev_alloc(k, &dout, osz, err)) ||
      (rc = kdev_alloc(k, &dpo, (size_t)B * Hq * DEC_MAX_SPLIT * D * 4, err)) ||
      (rc = kdev_alloc(k, &dpm, (size_t)B * Hq * DEC_MAX_SPLIT * 2 * 4, err)) ||
      (rc = kdev_poison(k, dout.p, osz, 0xff, err)))
    return rc;
  dec_args a = {fp8, B, Hq, Hkv, max_blocks, max_len, nsplit, (const __nv_bfloat16 *)dq.p, (const uint8_t *)dk.p,
                (const uint8_t *)dv.p, (const int32_t *)dt.p, (const int32_t *)dl.p, ks, vs, (__nv_bfloat16 *)dout.p,
                (float *)dpo.p, (float *)dpm.p};
  if ((rc = dec_launch(k, &a, err))) return rc;
  std::vector<uint16_t> oh(qf.size());
  if ((rc = kdev_download(k, oh.data(), dout.p, osz, err))) return rc;
  std::vector<float> out(oh.size());
  for (size_t i = 0; i < oh.size(); i++) out[i] = kern_bf16_to_f32(oh[i]);
  size_t bad;
  double rel = kern_rel_err(out.data(), ref.data(), out.size(), &bad);
  kcheck_set(c, name, rel, fp8 ? KERN_TOL_FP8 : KERN_TOL_BF16, bad, nullptr);
  return SIM_OK;
}

int kdecode_check(kern_ctx *k, sim_dtype kv, kern_check *out, int max, int *n, sim_err *err) {
  bool fp8 = kv == DT_FP8;
  struct {
    uint32_t Hq, Hkv, nsplit;
    std::vector<int32_t> lens;
  } cases[] = {
      {16, 2, 1, {1, 37, 300}},        /* G = 8, one split: partial blocks, a 1-token sequence */
      {16, 2, 3, {700, 16, 129}},      /* forced splits (some empty for short sequences) */
      {32, 2, 0, {1000, 5}},           /* G = 16, splits chosen */
      {12, 3, 0, {65, 2049, 17, 400}}, /* G = 4 */
  };
  for (size_t i = 0; i < SIM_ARRAY_LEN(cases) && *n < max; i++) {
    int rc = dec_check_one(k, fp8, cases[i].Hq, cases[i].Hkv, cases[i].lens, cases[i].nsplit, &out[*n], err);
    if (rc) return rc;
    (*n)++;
  }
  return SIM_OK;
}

/* ---- timing ----------------------------------------------------------------------------------- */

struct dec_state {
  dec_args a;
  const uint8_t *Q0, *K0, *V0;
  uint8_t *O0;
  const int32_t *T0;
  size_t qs, os, ts; /* per-set strides: bytes of Q/O, table entries */
};

static int dec_call(kern_ctx *k, void *vs, uint32_t set, sim_err *err) {
  dec_state *s = (dec_state *)vs;
  dec_args a = s->a;
  a.Q = (const __nv_bfloat16 *)(s->Q0 + set * s->qs);
  a.O = (__nv_bfloat16 *)(s->O0 + set * s->os);
  a.table = s->T0 + set * s->ts; /* each set's table points into its own part of the cache */
  return dec_launch(k, &a, err);
}

int kern_time_decode(kern_ctx *k, sim_dtype kv, uint32_t batch, uint32_t kv_len, uint32_t q_heads,
                     uint32_t kv_heads, uint32_t head_dim, kern_time *t, sim_err *err) {
  memset(t, 0, sizeof *t);
  if (kv != DT_BF16 && kv != DT_FP8)
    return sim_errf(err, SIM_EINPUT, "decode attention: KV cache dtype must be bf16 or fp8, not %s", dtype_name(kv));
  const char *why = dec_shape_error(q_heads, kv_heads, head_dim);
  if (why) return sim_errf(err, SIM_EINPUT, "decode attention: %s (have %u/%u d%u)", why, q_heads, kv_heads, head_dim);
  if (!batch || !kv_len) return sim_errf(err, SIM_EINPUT, "decode attention: batch and kv_len must be positive");
  int rc = kcheck_gate(k, KF_DECODE, kv, err);
  if (rc) return rc;
  const bool fp8 = kv == DT_FP8;
  const uint32_t mb = (kv_len + 15) / 16, es = fp8 ? 1 : 2;
  const size_t tile = (size_t)kv_heads * 16 * ATTN_D * es; /* bytes of one physical block (all KV heads) */
  const size_t qbytes = ((size_t)batch * q_heads * ATTN_D * 2 + 255) & ~(size_t)255;
  prof_work w;
  prof_decode_work(kv, batch, kv_len, q_heads, kv_heads, head_dim, &w);
  uint32_t sets = ktime_sets(k, w.bytes);
  const size_t blocks_per_set = (size_t)batch * mb;
  const uint32_t nsplit = dec_split(k, batch, kv_heads, kv_len);
  if ((rc = kbuf_need(k, KB_X, sets * qbytes, KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_W, sets * blocks_per_set * tile, fp8 ? KFILL_FP8 : KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_V, sets * blocks_per_set * tile, fp8 ? KFILL_FP8 : KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_Y, sets * qbytes, KFILL_NONE, err)) ||
      (rc = kbuf_need(k, KB_T, sets * blocks_per_set * 4, KFILL_NONE, err)) ||
      (rc = kbuf_need(k, KB_L, (size_t)batch * 4, KFILL_NONE, err)) ||
      (rc = kbuf_need(k, KB_P, (size_t)batch * q_heads * nsplit * (ATTN_D + 2) * 4, KFILL_NONE, err)))
    return rc;
  /* block tables: set s uses the physical blocks [s * B * mb, (s + 1) * B * mb), shuffled */
  {
    krng r = kern_check_rng(k);
    std::vector<int32_t> tab(sets * blocks_per_set), lens(batch, (int32_t)kv_len);
    for (uint32_t s = 0; s < sets; s++) {
      int32_t *p = tab.data() + s * blocks_per_set;
      for (size_t i = 0; i < blocks_per_set; i++) p[i] = (int32_t)(s * blocks_per_set + i);
      for (size_t i = blocks_per_set - 1; i > 0; i--) std::swap(p[i], p[r.below((uint32_t)i + 1)]);
    }
    KCK(cudaMemcpyAsync(k->buf[KB_T].p, tab.data(), tab.size() * 4, cudaMemcpyHostToDevice, k->stream));
    KCK(cudaMemcpyAsync(k->buf[KB_L].p, lens.data(), lens.size() * 4, cudaMemcpyHostToDevice, k->stream));
    KCK(cudaStreamSynchronize(k->stream)); /* the host vectors die here */
  }
  dec_state s;
  memset(&s, 0, sizeof s);
  s.a.fp8 = fp8;
  s.a.B = batch, s.a.Hq = q_heads, s.a.Hkv = kv_heads, s.a.max_blocks = mb, s.a.max_len = kv_len, s.a.nsplit = nsplit;
  s.a.K = (const uint8_t *)k->buf[KB_W].p;
  s.a.V = (const uint8_t *)k->buf[KB_V].p;
  s.a.lens = (const int32_t *)k->buf[KB_L].p;
  s.a.k_scale = fp8 ? 0.8f : 1.0f;
  s.a.v_scale = fp8 ? 1.25f : 1.0f;
  s.a.part_o = (float *)k->buf[KB_P].p;
  s.a.part_ml = s.a.part_o + (size_t)batch * q_heads * nsplit * ATTN_D;
  s.Q0 = (const uint8_t *)k->buf[KB_X].p;
  s.O0 = (uint8_t *)k->buf[KB_Y].p;
  s.T0 = (const int32_t *)k->buf[KB_T].p;
  s.qs = s.os = qbytes;
  s.ts = blocks_per_set;
  return ktime_run(k, dec_call, &s, sets, w.bytes, t, err);
}
