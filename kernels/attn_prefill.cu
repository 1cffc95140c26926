/* attn_prefill.cu: our flash-style causal prefill attention for chunked
 * prefill: a chunk of `chunk` new tokens (positions ctx .. ctx + chunk - 1)
 * attends to the `ctx` cached tokens and causally to itself, all read through
 * the paged KV cache (vLLM writes the chunk's K/V into the cache first).
 * bf16, head dim 128, GQA, online softmax in fp32 (FlashAttention-2 style).
 *
 * Grid over chunk x heads: block (tile of 128 query tokens, query head); 8
 * warps of 16 query rows each. KV is walked in tiles of 64 tokens (4 paged
 * blocks) staged in shared memory by cp.async, two stages deep so the next
 * tile loads while this one is computed; rows are padded to 272 bytes, which
 * with the lane -> chunk map of attn_common.cuh keeps the 16-byte shared
 * loads free of bank conflicts. A warp skips tiles entirely above its rows'
 * causal limit; only tiles crossing the diagonal are masked.
 * Layouts: Q, O [chunk][Hq][128] bf16; K/V cache [blocks][Hkv][16][128] bf16;
 * table [blocks of the sequence] int32. Compute-bound for long chunks:
 * FLOPs = 4 Hq 128 (chunk ctx + chunk (chunk + 1) / 2). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "attn_common.cuh"

extern "C" {
#include "hw/prof.h"
}

#define PRE_WARPS 8
#define PRE_QROWS (PRE_WARPS * 16)
#define PRE_TILE 64
#define PRE_STRIDE 136 /* bf16 per shared row: 256 bytes + 16 of padding */
#define PRE_SMEM_BYTES (2 * 2 * PRE_TILE * PRE_STRIDE * 2)

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__global__ void __launch_bounds__(PRE_WARPS * 32)
    prefill_kernel(const __nv_bfloat16 *__restrict__ Q, const __nv_bfloat16 *__restrict__ Kc,
                   const __nv_bfloat16 *__restrict__ Vc, const int32_t *__restrict__ table, uint32_t chunk,
                   uint32_t ctx, uint32_t Hq, uint32_t Hkv, float scale_log2, __nv_bfloat16 *__restrict__ O) {
  extern __shared__ uint4 smem[];
  __nv_bfloat16 *sk = reinterpret_cast<__nv_bfloat16 *>(smem); /* [2][PRE_TILE][PRE_STRIDE] */
  __nv_bfloat16 *sv = sk + 2 * PRE_TILE * PRE_STRIDE;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const uint32_t h = blockIdx.y, kh = h / (Hq / Hkv);
  const uint32_t qb = blockIdx.x * PRE_QROWS, q0 = qb + warp * 16;
  const uint32_t kv_end = ctx + min(chunk, qb + PRE_QROWS); /* tokens any row of this block may see */
  const int ntiles = (int)((kv_end + PRE_TILE - 1) / PRE_TILE);

  uint32_t qa[8][4];
  {
    uint4 lo[4], hi[4];
#pragma unroll
    for (int i = 0; i < 4; i++) lo[i] = hi[i] = make_uint4(0, 0, 0, 0);
    if (q0 + g < chunk) attn_load_row_bf16(Q + ((size_t)(q0 + g) * Hq + h) * ATTN_D, t, lo);
    if (q0 + g + 8 < chunk) attn_load_row_bf16(Q + ((size_t)(q0 + g + 8) * Hq + h) * ATTN_D, t, hi);
    attn_q_frags(lo, hi, qa);
  }
  attn_acc acc;
  attn_acc_init(&acc);

  /* 64 rows x 16 chunks of 16 bytes for K and for V; tokens past kv_end are zero-filled */
  auto load_tile = [&](int tile, int stage) {
    for (int c = tid; c < PRE_TILE * 16; c += PRE_WARPS * 32) {
      const int row = c >> 4, ch = c & 15;
      const uint32_t tok = (uint32_t)tile * PRE_TILE + row;
      const bool ok = tok < kv_end;
      const size_t off = ok ? (((size_t)table[tok >> 4] * Hkv + kh) * 16 + (tok & 15)) * ATTN_D + ch * 8 : 0;
      const size_t so = ((size_t)stage * PRE_TILE + row) * PRE_STRIDE + ch * 8;
      cp_async16(sk + so, Kc + off, ok ? 16 : 0);
      cp_async16(sv + so, Vc + off, ok ? 16 : 0);
    }
    cp_async_commit();
  };

  load_tile(0, 0);
  for (int it = 0; it < ntiles; it++) {
    if (it + 1 < ntiles) {
      load_tile(it + 1, (it + 1) & 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const uint32_t t0 = (uint32_t)it * PRE_TILE;
    if (q0 < chunk && t0 <= ctx + q0 + 15) { /* some row of this warp sees some token of the tile */
      const __nv_bfloat16 *ks = sk + (size_t)(it & 1) * PRE_TILE * PRE_STRIDE;
      const __nv_bfloat16 *vs = sv + (size_t)(it & 1) * PRE_TILE * PRE_STRIDE;
      float s[8][4];
#pragma unroll
      for (int j = 0; j < 8; j++) {
        uint4 kc[4];
        attn_load_row_bf16(ks + (8 * j + g) * PRE_STRIDE, t, kc);
#pragma unroll
        for (int i = 0; i < 4; i++) s[j][i] = 0.0f;
        attn_qk(s[j], qa, kc);
      }
      const bool diag = t0 + PRE_TILE - 1 > ctx + q0;
#pragma unroll
      for (int j = 0; j < 8; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
          const uint32_t tok = t0 + 8 * j + 2 * t + (i & 1), qi = q0 + g + 8 * (i >> 1);
          const bool masked = tok >= kv_end || (diag && tok > ctx + qi);
          s[j][i] = masked ? -INFINITY : s[j][i] * scale_log2;
        }
      attn_softmax<8>(&acc, s);
#pragma unroll
      for (int u = 0; u < 4; u++) {
        uint32_t v[4][8];
#pragma unroll
        for (int q = 0; q < 4; q++) attn_load_v_bf16(vs + (16 * u + 2 * t + (q & 1) + 8 * (q >> 1)) * PRE_STRIDE, g, v[q]);
        attn_pv(&acc, s[2 * u], s[2 * u + 1], v);
      }
    }
    __syncthreads(); /* the stage is reloaded next iteration */
  }
  attn_reduce_l(&acc);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const uint32_t qi = q0 + g + 8 * (i >> 1);
    if (qi >= chunk) continue;
    const float l = acc.l[i >> 1];
#pragma unroll
    for (int jj = 0; jj < 16; jj++)
      O[((size_t)qi * Hq + h) * ATTN_D + attn_dmap(jj, 2 * t + (i & 1))] =
          __float2bfloat16_rn(l > 0 ? acc.o[jj][i] / l : 0.0f);
  }
}

static int pre_attr(kern_ctx *k, sim_err *err) {
  KCK(cudaFuncSetAttribute(prefill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PRE_SMEM_BYTES));
  return SIM_OK;
}

struct pre_args {
  uint32_t chunk, ctx, Hq, Hkv;
  const __nv_bfloat16 *Q, *K, *V;
  const int32_t *table;
  __nv_bfloat16 *O;
};

static int pre_launch(kern_ctx *k, const pre_args *a, sim_err *err) {
  dim3 grid((a->chunk + PRE_QROWS - 1) / PRE_QROWS, a->Hq);
  float sl = ATTN_LOG2E / sqrtf((float)ATTN_D);
  prefill_kernel<<<grid, PRE_WARPS * 32, PRE_SMEM_BYTES, k->stream>>>(a->Q, a->K, a->V, a->table, a->chunk, a->ctx,
                                                                      a->Hq, a->Hkv, sl, a->O);
  KLAUNCHED();
  return SIM_OK;
}

/* ---- check ------------------------------------------------------------------------------------ */

static int pre_check_one(kern_ctx *k, uint32_t chunk, uint32_t ctx, uint32_t Hq, uint32_t Hkv, kern_check *c,
                         sim_err *err) {
  const uint32_t D = ATTN_D, nb = (ctx + chunk + 15) / 16, pool = nb + 5;
  char name[96];
  snprintf(name, sizeof name, "prefill bf16 chunk=%u ctx=%u Hq=%u Hkv=%u", chunk, ctx, Hq, Hkv);
  krng r = kern_check_rng(k);
  std::vector<int32_t> perm(pool);
  for (uint32_t i = 0; i < pool; i++) perm[i] = (int32_t)i;
  for (uint32_t i = pool - 1; i > 0; i--) std::swap(perm[i], perm[r.below(i + 1)]);
  std::vector<int32_t> table(perm.begin(), perm.begin() + nb);
  const size_t cache_n = (size_t)pool * Hkv * 16 * D;
  std::vector<float> kf(cache_n), vf(cache_n), qf((size_t)chunk * Hq * D);
  std::vector<uint16_t> kh(cache_n), vh(cache_n), qh(qf.size());
  for (size_t i = 0; i < cache_n; i++) {
    kh[i] = kern_f32_to_bf16((float)(2 * r.sym()));
    kf[i] = kern_bf16_to_f32(kh[i]);
    vh[i] = kern_f32_to_bf16((float)r.sym());
    vf[i] = kern_bf16_to_f32(vh[i]);
  }
  for (size_t i = 0; i < qf.size(); i++) {
    qh[i] = kern_f32_to_bf16((float)r.sym());
    qf[i] = kern_bf16_to_f32(qh[i]);
  }
  std::vector<double> ref(qf.size());
  kern_ref_attn_prefill(qf.data(), kf.data(), vf.data(), table.data(), chunk, ctx, Hq, Hkv, D, ref.data());
  kdev dq, dk, dv, dt, dout;
  int rc;
  const size_t osz = qf.size() * 2;
  if ((rc = kdev_upload(k, &dq, qh.data(), osz, err)) || (rc = kdev_upload(k, &dk, kh.data(), cache_n * 2, err)) ||
      (rc = kdev_upload(k, &dv, vh.data(), cache_n * 2, err)) ||
      (rc = kdev_upload(k, &dt, table.data(), table.size() * 4, err)) || (rc = kdev_alloc(k, &dout, osz, err)) ||
      (rc = kdev_poison(k, dout.p, osz, 0xff, err)) || (rc = pre_attr(k, err)))
    return rc;
  pre_args a = {chunk, ctx, Hq, Hkv, (const __nv_bfloat16 *)dq.p, (const __nv_bfloat16 *)dk.p,
                (const __nv_bfloat16 *)dv.p, (const int32_t *)dt.p, (__nv_bfloat16 *)dout.p};
  if ((rc = pre_launch(k, &a, err))) return rc;
  std::vector<uint16_t> oh(qf.size());
  if ((rc = kdev_download(k, oh.data(), dout.p, osz, err))) return rc;
  std::vector<float> out(oh.size());
  for (size_t i = 0; i < oh.size(); i++) out[i] = kern_bf16_to_f32(oh[i]);
  size_t bad;
  double rel = kern_rel_err(out.data(), ref.data(), out.size(), &bad);
  kcheck_set(c, name, rel, KERN_TOL_BF16, bad, nullptr);
  return SIM_OK;
}

int kprefill_check(kern_ctx *k, kern_check *out, int max, int *n, sim_err *err) {
  /* ragged chunk and context (not multiples of 16 / 64 / 128), G = 2, 8, 1,
   * one-token chunk, no context, several query tiles */
  static const uint32_t cases[][4] = {{150, 45, 4, 2}, {64, 0, 8, 1}, {1, 100, 4, 4}, {300, 1000, 2, 2}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(cases) && *n < max; i++) {
    int rc = pre_check_one(k, cases[i][0], cases[i][1], cases[i][2], cases[i][3], &out[*n], err);
    if (rc) return rc;
    (*n)++;
  }
  return SIM_OK;
}

/* ---- timing ------------------------------------------------------------------------------------ */

struct pre_state {
  pre_args a;
  const uint8_t *Q0;
  uint8_t *O0;
  const int32_t *T0;
  size_t qs, ts;
};

static int pre_call(kern_ctx *k, void *vs, uint32_t set, sim_err *err) {
  pre_state *s = (pre_state *)vs;
  pre_args a = s->a;
  a.Q = (const __nv_bfloat16 *)(s->Q0 + set * s->qs);
  a.O = (__nv_bfloat16 *)(s->O0 + set * s->qs);
  a.table = s->T0 + set * s->ts;
  return pre_launch(k, &a, err);
}

int kern_time_prefill(kern_ctx *k, uint32_t chunk, uint32_t ctx, uint32_t q_heads, uint32_t kv_heads,
                      uint32_t head_dim, kern_time *t, sim_err *err) {
  memset(t, 0, sizeof *t);
  if (head_dim != ATTN_D || !kv_heads || q_heads % kv_heads || !chunk)
    return sim_errf(err, SIM_EINPUT,
                    "prefill attention: needs head_dim 128, q_heads a multiple of kv_heads and chunk > 0 "
                    "(have %u/%u d%u chunk %u)",
                    q_heads, kv_heads, head_dim, chunk);
  int rc = kcheck_gate(k, KF_PREFILL, DT_BF16, err);
  if (rc) return rc;
  const uint32_t nb = (ctx + chunk + 15) / 16;
  const size_t tile = (size_t)kv_heads * 16 * ATTN_D * 2;
  const size_t qbytes = ((size_t)chunk * q_heads * ATTN_D * 2 + 255) & ~(size_t)255;
  prof_work w;
  prof_prefill_work(chunk, ctx, q_heads, kv_heads, head_dim, &w);
  uint32_t sets = ktime_sets(k, w.bytes);
  if ((rc = kbuf_need(k, KB_X, sets * qbytes, KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_W, (size_t)sets * nb * tile, KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_V, (size_t)sets * nb * tile, KFILL_BF16, err)) ||
      (rc = kbuf_need(k, KB_Y, sets * qbytes, KFILL_NONE, err)) ||
      (rc = kbuf_need(k, KB_T, (size_t)sets * nb * 4, KFILL_NONE, err)) || (rc = pre_attr(k, err)))
    return rc;
  {
    krng r = kern_check_rng(k);
    std::vector<int32_t> tab((size_t)sets * nb);
    for (uint32_t s = 0; s < sets; s++) {
      int32_t *p = tab.data() + (size_t)s * nb;
      for (uint32_t i = 0; i < nb; i++) p[i] = (int32_t)(s * nb + i);
      for (uint32_t i = nb - 1; i > 0; i--) std::swap(p[i], p[r.below(i + 1)]);
    }
    KCK(cudaMemcpyAsync(k->buf[KB_T].p, tab.data(), tab.size() * 4, cudaMemcpyHostToDevice, k->stream));
    KCK(cudaStreamSynchronize(k->stream));
  }
  pre_state s;
  memset(&s, 0, sizeof s);
  s.a.chunk = chunk, s.a.ctx = ctx, s.a.Hq = q_heads, s.a.Hkv = kv_heads;
  s.a.K = (const __nv_bfloat16 *)k->buf[KB_W].p;
  s.a.V = (const __nv_bfloat16 *)k->buf[KB_V].p;
  s.Q0 = (const uint8_t *)k->buf[KB_X].p;
  s.O0 = (uint8_t *)k->buf[KB_Y].p;
  s.T0 = (const int32_t *)k->buf[KB_T].p;
  s.qs = qbytes;
  s.ts = nb;
  return ktime_run(k, pre_call, &s, sets, w.bytes, t, err);
}
