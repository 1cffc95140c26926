/* cost_decstep.c: whole decode-only steps, memoized (cost_step's first look).
 *
 * A decode-only step's cost depends on its batch B (the GEMMs, the LM head,
 * the host work) and, through its one decode attention call, on the mean
 * context of its sequences. Where that call is answered by the own profile's
 * memo (cost_attn.c: by B and mean kv_len, the same value the table lookup
 * returns) and the bound it names is clear from the rates, two steps with the
 * same B and kv_len get the same bits from cost_step, whatever their exact
 * context totals: this table keeps those bits and the sources each op
 * counted, so a fleet's replicas, which ask the same few thousand shapes
 * again and again, pay a lookup instead of the sums. A miss computes the step
 * as before and stores it: the table changes how long cost_step takes, never
 * what it returns (tests/unit/test_cost.c compares the two).
 *
 * Not used where anything else enters: pipeline stages, a DP group's padding
 * or peers, sliding-window or MLA layers, a batch at or beyond the attention
 * memo's bounds, a roofline (not memoized) attention call.
 *
 * Direct-mapped, DEC_STEP_N entries of 192 bytes (1.5 MiB in huge pages: one page fault; 2,048 entries, 384 KiB,
 * missed a third of the decode steps of 20,000 requests on one replica, whose batches of ~46 ask ~15,000 shapes),
 * allocated with the attention memo and cleared with it (cost__memo_clear). Where misses prevail it is no longer asked
 * (DEC_STEP_TRIAL). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/cost_decstep.h"

#include "hw/cost_state.h"

/* DEC_STEP_TRIAL: after this many misses, a model whose misses outnumber its hits stops asking (a miss costs a
 * snapshot of the source counts and a store: a single replica on the Azure conversation trace took 1.07x the time
 * with the table asked throughout; a 1,000-replica fleet misses 236 times in 34M: docs/ARCHITECTURE.md) */
enum { DEC_STEP_N = 1 << 13, DEC_STEP_TRIAL = 4096, SRC_NONE = 0xff };

typedef struct cost_dec_step {
  uint64_t tag;           /* the key: batch | kv_len << 32; 0: empty */
  uint8_t bound;          /* the decode attention call's bound */
  uint8_t src[OP_COUNT];  /* the source each op counted (SRC_NONE: none) */
  double total_ns, gpu_ns, cpu_ns, stage_ns;
  double op_ns[OP_COUNT], bound_ns[BOUND_COUNT];
} cost_dec_step;

void cost__dec_step_init(cost_model *c) {
  for (uint32_t B = 1; B < COST_DEC_MEMO_B; B++) c->dec_inv[B] = ((1ull << 32) + B - 1) / B;
}

/* The key of a decode-only step the table may answer, batch | kv_len << 32 (0: none), and the bound of its
 * attention call. One word in a register: two 32-bit fields read back as one word from memory stalled the
 * lookup (a store cannot forward to a wider load). */
static uint64_t key_of(const cost_model *c, const batch_desc *b, uint8_t *bound) {
  uint32_t B = b->num_decode;
  if (!c->dec_step || !B || B >= COST_DEC_MEMO_B || b->num_prefill || b->num_tokens != B || b->num_seqs != B ||
      b->num_sample != B || b->dp_mode || b->dp_pad || b->moe_peer_tokens || c->pp != 1 ||
      c->model->sliding_layers > 0 || c->mla_module || c->shard.mla)
    return 0;
  uint64_t num = b->decode_ctx_tokens + B / 2;
  if (num >= (uint64_t)COST_DEC_MEMO_L * B) return 0; /* the mean length is beyond the attention memo */
  /* num / B (cost__attn_decode_eval's rounded mean) by the reciprocal ceil(2^32 / B), exact for num < 2^32 / B
     (num < 2^18 here): the 64-bit division stood out in this function's profile */
  uint64_t len = (num * c->dec_inv[B]) >> 32;
  /* the bound as cost__attn_decode_eval names it from the rates; too close to call there: not from the table */
  double C = (double)b->decode_ctx_tokens, tm = C * c->dec_rate[0] + (double)B * c->dec_rate[2], tc = C * c->dec_rate[1];
  bool mem = tm > tc * (1.0 + 1e-9), comp = tc > tm * (1.0 + 1e-9);
  if (!mem && !comp) return 0;
  *bound = (uint8_t)(mem ? BOUND_MEMORY : BOUND_COMPUTE);
  return (uint64_t)B | (len < 1 ? 1 : len) << 32;
}

static cost_dec_step *slot_of(const cost_model *c, uint64_t tag) {
  return &c->dec_step[((uint32_t)(tag >> 32) + (uint32_t)tag * 2531u) & (DEC_STEP_N - 1)];
}

bool cost__dec_step_get(cost_model *c, const batch_desc *b, step_cost *out, cost_dec_key *k) {
  if (c->dec_memo && !c->dec_step) c->dec_step = sim_calloc_huge(DEC_STEP_N, sizeof *c->dec_step); /* 1.5 MiB: huge pages */
  if (c->dec_misses >= DEC_STEP_TRIAL && c->dec_misses > c->dec_hits) { /* the table does not pay here: not asked */
    k->tag = 0;
    return false;
  }
  uint8_t bound = 0;
  uint64_t tag = key_of(c, b, &bound);
  k->tag = tag, k->bound = bound;
  if (!tag) return false;
  const cost_dec_step *ds = slot_of(c, tag);
  if (ds->tag != tag || ds->bound != bound) {
    c->dec_misses++;
    memcpy(k->before, c->src_count, sizeof k->before); /* cost__dec_step_put: which sources the step counts */
    return false;
  }
  /* the fields cost_step fills for one stage, element by element (no rep movs: cost.c) */
  out->total_ns = ds->total_ns, out->gpu_ns = ds->gpu_ns, out->cpu_ns = ds->cpu_ns;
  out->stage_ns[0] = ds->stage_ns, out->send_ns[0] = 0;
  for (int op = 0; op < OP_COUNT; op++) out->op_ns[op] = ds->op_ns[op];
  for (int bd = 0; bd < BOUND_COUNT; bd++) out->bound_ns[bd] = ds->bound_ns[bd];
  for (int op = 0; op < OP_COUNT; op++)
    if (ds->src[op] != SRC_NONE) c->src_count[op][ds->src[op]]++;
  c->dec_hits++;
  return true;
}

void cost__dec_step_put(cost_model *c, const cost_dec_key *k, const step_cost *out) {
  /* only a step whose attention call the memo now answers (not a roofline one, which depends on the exact total) */
  if (!k->tag || !cost__dec_filled(c->dec_memo[(size_t)(uint32_t)k->tag * COST_DEC_MEMO_L + (uint32_t)(k->tag >> 32)]))
    return;
  cost_dec_step *ds = slot_of(c, k->tag);
  ds->tag = k->tag, ds->bound = k->bound;
  ds->total_ns = out->total_ns, ds->gpu_ns = out->gpu_ns, ds->cpu_ns = out->cpu_ns, ds->stage_ns = out->stage_ns[0];
  for (int op = 0; op < OP_COUNT; op++) ds->op_ns[op] = out->op_ns[op];
  for (int bd = 0; bd < BOUND_COUNT; bd++) ds->bound_ns[bd] = out->bound_ns[bd];
  for (int op = 0; op < OP_COUNT; op++) {
    ds->src[op] = SRC_NONE;
    for (int s = 0; s < SRC_COUNT; s++) {
      uint64_t d = c->src_count[op][s] - k->before[op][s];
      SIM_ASSERT(d <= 1 && (d == 0 || ds->src[op] == SRC_NONE)); /* a decode-only step counts an op once at most */
      if (d) ds->src[op] = (uint8_t)s;
    }
  }
}
