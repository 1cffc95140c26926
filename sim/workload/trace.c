/* trace.c: the in-memory trace's native writer, transforms and summary
 * statistics. Its storage and format names are in trace_rows.c, the readers
 * in trace_read.c (both below this file: neither calls it).
 *
 * Invariants kept by every function here (and by the readers):
 *   - reqs[0..n) are sorted by arrival_ns and reqs[0].arrival_ns == 0 (when n > 0);
 *   - every request's hash ids are hash_ids[hash_off .. hash_off + n_hash);
 *   - after the readers and the transforms, sessions are numbered 1..n_sessions
 *     in order of first appearance, which is what makes write -> parse lossless
 *     (the writer names session k `s<k>`, the reader numbers by first sight). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/trace.h"

/* ---- native writer: hand-formatted into a buffer (no floating point) ---- */

typedef struct wbuf {
  FILE *f;
  char b[1 << 16];
  size_t n;  /* bytes pending in b */
  bool fail; /* a write failed */
} wbuf;

static void wb_flush(wbuf *w) {
  if (w->n && fwrite(w->b, 1, w->n, w->f) != w->n) w->fail = true;
  w->n = 0;
}

static void wb_str(wbuf *w, const char *s) {
  size_t k = strlen(s);
  if (w->n + k > sizeof w->b) wb_flush(w);
  memcpy(w->b + w->n, s, k);
  w->n += k;
}

/* Unsigned decimal, zero-padded to at least `width` digits. */
static void wb_u64(wbuf *w, uint64_t v, int width) {
  char d[24];
  int k = 0;
  do {
    d[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (k < width) d[k++] = '0';
  if (w->n + (size_t)k > sizeof w->b) wb_flush(w);
  while (k) w->b[w->n++] = d[--k];
}

static void wb_ch(wbuf *w, char c) {
  if (w->n == sizeof w->b) wb_flush(w);
  w->b[w->n++] = c;
}

int trace_write_native(const trace *t, FILE *out, sim_err *err) {
  bool any_hash = false, any_sess = false;
  for (size_t i = 0; i < t->n; i++) {
    any_hash |= t->reqs[i].n_hash > 0;
    any_sess |= t->reqs[i].session > 0;
  }
  wbuf *w = sim_malloc(sizeof *w);
  w->f = out;
  w->n = 0;
  w->fail = false;
  if (any_hash) {
    wb_str(w, "# hash_block_tokens=");
    wb_u64(w, t->hash_block_tokens, 1);
    wb_ch(w, '\n');
  }
  wb_str(w, "arrival_s,prompt_tokens,output_tokens");
  if (any_sess) wb_str(w, ",session_id");
  if (any_hash) wb_str(w, ",hash_ids");
  wb_ch(w, '\n');
  for (size_t i = 0; i < t->n; i++) {
    const trace_req *q = &t->reqs[i];
    wb_u64(w, q->arrival_ns / SIM_NS_PER_S, 1);
    wb_ch(w, '.');
    wb_u64(w, q->arrival_ns % SIM_NS_PER_S, 9);
    wb_ch(w, ',');
    wb_u64(w, q->prompt_tokens, 1);
    wb_ch(w, ',');
    wb_u64(w, q->output_tokens, 1);
    if (any_sess) {
      wb_ch(w, ',');
      if (q->session) {
        wb_ch(w, 's');
        wb_u64(w, q->session, 1);
      }
    }
    if (any_hash) {
      wb_ch(w, ',');
      for (uint32_t k = 0; k < q->n_hash; k++) {
        if (k) wb_ch(w, '|');
        wb_u64(w, t->hash_ids[q->hash_off + k], 1);
      }
    }
    wb_ch(w, '\n');
  }
  wb_flush(w);
  bool fail = w->fail || fflush(out) != 0 || ferror(out);
  free(w);
  if (fail) return sim_errf(err, SIM_EINPUT, "writing the native trace: %s", strerror(errno));
  return SIM_OK;
}

/* ---- transforms ---- */

/* Keeps reqs[lo..hi), re-zeroes arrivals at the first kept request, compacts
 * hash ids and renumbers sessions by first appearance. O(n + n_hash). */
static void keep_range(trace *t, size_t lo, size_t hi) {
  SIM_ASSERT(lo <= hi && hi <= t->n);
  size_t n = hi - lo;
  sim_ns base = n ? t->reqs[lo].arrival_ns : 0;
  if (n && base) t->t0_s += (double)(base / SIM_NS_PER_S) + (double)(base % SIM_NS_PER_S) / 1e9;
  uint32_t *renum = t->n_sessions ? sim_calloc((size_t)t->n_sessions + 1, sizeof *renum) : NULL;
  uint32_t next_sess = 0;
  size_t nh = 0;
  for (size_t i = 0; i < n; i++) {
    trace_req q = t->reqs[lo + i];
    q.arrival_ns -= base;
    if (q.n_hash) {
      memmove(t->hash_ids + nh, t->hash_ids + q.hash_off, q.n_hash * sizeof *t->hash_ids);
      q.hash_off = (uint32_t)nh;
      nh += q.n_hash;
    } else {
      q.hash_off = (uint32_t)nh;
    }
    if (q.session) {
      SIM_ASSERT(q.session <= t->n_sessions);
      if (!renum[q.session]) renum[q.session] = ++next_sess;
      q.session = renum[q.session];
    }
    t->reqs[i] = q;
  }
  free(renum);
  t->n = n;
  t->n_hash = nh;
  t->n_sessions = next_sess;
}

void trace_window(trace *t, double start_s, double end_s) {
  SIM_ASSERT(!isnan(start_s) && !isnan(end_s));
  /* bounds in ns, rounded to nearest; arrival >= lo_ns and < hi_ns */
  sim_ns lo_ns = start_s <= 0 ? 0 : start_s >= 1.8e10 ? SIM_NS_INF : sim_s_to_ns(start_s);
  sim_ns hi_ns = end_s < 0 || end_s >= 1.8e10 ? SIM_NS_INF : sim_s_to_ns(end_s);
  size_t lo = 0, hi = t->n;
  while (lo < t->n && t->reqs[lo].arrival_ns < lo_ns) lo++;
  if (hi_ns != SIM_NS_INF)
    for (hi = lo; hi < t->n && t->reqs[hi].arrival_ns < hi_ns; hi++) {
    }
  keep_range(t, lo, hi);
}

void trace_scale_rate(trace *t, double factor) {
  SIM_ASSERT(factor > 0);
  for (size_t i = 0; i < t->n; i++) {
    double v = floor((double)t->reqs[i].arrival_ns / factor + 0.5); /* monotone in arrival_ns */
    t->reqs[i].arrival_ns = v >= 1.8e19 ? (sim_ns)1.8e19 : (sim_ns)v;
  }
}

static uint32_t scale_len(uint32_t len, double f) {
  double v = floor((double)len * f + 0.5);
  if (v < 1) return 1;
  if (v > (double)UINT32_MAX) return UINT32_MAX;
  return (uint32_t)v;
}

void trace_scale_lengths(trace *t, double prompt_factor, double output_factor) {
  SIM_ASSERT(prompt_factor >= 0 && output_factor >= 0);
  uint32_t bt = t->hash_block_tokens ? t->hash_block_tokens : 1;
  for (size_t i = 0; i < t->n; i++) {
    trace_req *q = &t->reqs[i];
    q->prompt_tokens = scale_len(q->prompt_tokens, prompt_factor);
    q->output_tokens = scale_len(q->output_tokens, output_factor);
    /* a shorter prompt covers fewer blocks: drop the ids past its end */
    uint64_t blocks = ((uint64_t)q->prompt_tokens + bt - 1) / bt;
    if (q->n_hash > blocks) q->n_hash = (uint32_t)blocks;
  }
}

void trace_truncate(trace *t, size_t n) { keep_range(t, 0, SIM_MIN(n, t->n)); }

/* A bijection of 64-bit values (splitmix64's finalizer). */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool trace_repeat(trace *t, double duration_s, bool share_prefixes) {
  if (!t->n) return true;
  sim_ns end = (sim_ns)llround(duration_s * 1e9), last = t->reqs[t->n - 1].arrival_ns;
  if (last >= end) { /* cut */
    size_t k = t->n;
    while (k > 0 && t->reqs[k - 1].arrival_ns >= end) k--;
    if (k == 0) k = 1; /* the first request arrives at 0 < end */
    keep_range(t, 0, k);
    return true;
  }
  if (last == 0) return false;
  sim_ns period = last + last / (sim_ns)(t->n > 1 ? t->n - 1 : 1);
  size_t n0 = t->n;
  uint32_t sessions = t->n_sessions;
  uint64_t *ids = NULL;
  size_t cap_ids = 0;
  for (uint64_t copy = 1;; copy++) {
    sim_ns shift = (sim_ns)copy * period;
    if (shift >= end) break;
    uint64_t salt = mix64(copy);
    for (size_t i = 0; i < n0; i++) {
      const trace_req q = t->reqs[i]; /* copied: trace_push may move the array */
      if (q.arrival_ns + shift >= end) break;
      SIM_GROW(ids, cap_ids, (size_t)q.n_hash + 1);
      for (uint32_t h = 0; h < q.n_hash; h++) {
        uint64_t id = t->hash_ids[q.hash_off + h];
        ids[h] = share_prefixes ? id : mix64(id ^ salt);
      }
      uint32_t sess = q.session && !share_prefixes ? q.session + (uint32_t)copy * sessions : q.session;
      trace_push(t, q.arrival_ns + shift, q.prompt_tokens, q.output_tokens, sess, ids, q.n_hash);
    }
  }
  free(ids);
  return true;
}

/* ---- statistics ---- */

/* LSD radix sort of 32-bit values, 4 passes of 8 bits. O(n). */
static void radix_sort_u32(uint32_t *a, uint32_t *tmp, size_t n) {
  for (int shift = 0; shift < 32; shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[((a[i] >> shift) & 255) + 1]++;
    if (count[1] == n) continue; /* every value has this byte 0: nothing moves */
    for (int b = 0; b < 256; b++) count[b + 1] += count[b];
    for (size_t i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 255]++] = a[i];
    memcpy(a, tmp, n * sizeof *a);
  }
}

/* numpy's default percentile: linear interpolation between closest ranks. */
static double pct(const uint32_t *sorted, size_t n, double p) {
  double h = (double)(n - 1) * p / 100.0;
  size_t lo = (size_t)h;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + (h - (double)lo) * ((double)sorted[lo + 1] - (double)sorted[lo]);
}

void trace_compute_stats(const trace *t, trace_stats *s) {
  memset(s, 0, sizeof *s);
  s->n = t->n;
  if (!t->n) return;
  s->span_s = sim_ns_to_s(t->reqs[t->n - 1].arrival_ns - t->reqs[0].arrival_ns);
  s->rate_per_s = s->span_s > 0 ? (double)t->n / s->span_s : 0;
  uint32_t *v = sim_malloc(t->n * sizeof *v), *tmp = sim_malloc(t->n * sizeof *tmp);
  for (int which = 0; which < 2; which++) {
    uint64_t total = 0;
    for (size_t i = 0; i < t->n; i++) {
      v[i] = which ? t->reqs[i].output_tokens : t->reqs[i].prompt_tokens;
      total += v[i];
    }
    radix_sort_u32(v, tmp, t->n);
    double mean = (double)total / (double)t->n;
    double p50 = pct(v, t->n, 50), p90 = pct(v, t->n, 90), p99 = pct(v, t->n, 99), mx = v[t->n - 1];
    if (which) {
      s->output_total = total, s->output_mean = mean, s->output_p50 = p50, s->output_p90 = p90;
      s->output_p99 = p99, s->output_max = mx;
    } else {
      s->prompt_total = total, s->prompt_mean = mean, s->prompt_p50 = p50, s->prompt_p90 = p90;
      s->prompt_p99 = p99, s->prompt_max = mx;
    }
  }
  free(v);
  free(tmp);
}
