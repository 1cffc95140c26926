/* test_metrics.c: vLLM/numpy statistics: percentiles with linear
 * interpolation, population std, ITL run-length entries giving exactly the
 * statistics of the expanded samples, goodput, TPOT definition. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "metrics/metrics.h"

Test(metrics, numpy_percentiles_and_std) {
  /* numpy: np.percentile([1,2,3,4,10], [50,90,99]) = [3, 7.6, 9.76]; np.std = 3.1622776601683795 */
  double v[] = {10, 2, 4, 1, 3};
  dist_stats d;
  metrics_dist(v, 5, &d);
  cr_assert_float_eq(d.median, 3.0, 1e-12);
  cr_assert_float_eq(d.p90, 7.6, 1e-12);
  cr_assert_float_eq(d.p99, 9.76, 1e-12);
  cr_assert_float_eq(d.mean, 4.0, 1e-12);
  cr_assert_float_eq(d.std, 3.1622776601683795, 1e-12);
  cr_assert_float_eq(d.min, 1.0, 0);
  cr_assert_float_eq(d.max, 10.0, 0);
  dist_stats e;
  metrics_dist(NULL, 0, &e);
  cr_assert_eq(e.n, 0);
  cr_assert_float_eq(e.mean, 0.0, 0);
  double one = 5;
  metrics_dist(&one, 1, &e);
  cr_assert_float_eq(e.p99, 5.0, 0);
  cr_assert_float_eq(e.std, 0.0, 0);
}

Test(metrics, sort_handles_negative_and_duplicate_values) {
  double v[] = {3, -1, 0, -0.5, 3, 2, -7, 1e9, 1e-9};
  double want[] = {-7, -1, -0.5, 0, 1e-9, 2, 3, 3, 1e9};
  dist_stats d;
  metrics_dist(v, 9, &d);
  for (int i = 0; i < 9; i++) cr_assert_float_eq(v[i], want[i], 0, "index %d", i);
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

Test(metrics, itl_runs_equal_expanded_samples) {
  /* random run-length entries vs the same samples expanded, summarized by a
   * naive qsort-based reference */
  rng r;
  rng_seed(&r, 3);
  metrics_rec m;
  metrics_init(&m, 0);
  size_t total = 0;
  itl_run pend = {0, 0};
  double *ref = malloc(200000 * sizeof *ref);
  for (int i = 0; i < 3000; i++) {
    sim_ns gap = 1000000 + rng_below(&r, 50) * 250000; /* repeats on purpose */
    uint64_t cnt = 1 + rng_below(&r, 40);
    for (uint64_t k = 0; k < cnt; k++) {
      metrics_itl(&m, &pend, gap);
      ref[total++] = (double)gap / 1e6;
    }
  }
  metrics_itl_flush(&m, &pend);
  cr_assert_lt(m.n_itl, total / 5, "run-length storage must be compact");
  metrics_summary s;
  metrics_summarize(&m, metrics_times_of_array, NULL, 0, NULL, &s);
  qsort(ref, total, sizeof *ref, cmpd);
  double sum = 0, ss = 0;
  for (size_t i = 0; i < total; i++) sum += ref[i];
  double mean = sum / total;
  for (size_t i = 0; i < total; i++) ss += (ref[i] - mean) * (ref[i] - mean);
  cr_assert_eq(s.itl_ms.n, total);
  cr_assert_float_eq(s.itl_ms.mean, mean, 1e-9);
  cr_assert_float_eq(s.itl_ms.std, sqrt(ss / total), 1e-9);
  cr_assert_float_eq(s.itl_ms.median, metrics_percentile_sorted(ref, total, 50), 1e-12);
  cr_assert_float_eq(s.itl_ms.p90, metrics_percentile_sorted(ref, total, 90), 1e-12);
  cr_assert_float_eq(s.itl_ms.p99, metrics_percentile_sorted(ref, total, 99), 1e-12);
  free(ref);
  metrics_deinit(&m);
}

Test(metrics, request_metrics_follow_vllm_definitions) {
  req_times rq[4];
  memset(rq, 0, sizeof rq);
  /* r0: sent at 1 s, first token at 1.2 s, 11 tokens, last at 2.2 s -> TTFT 200, TPOT 100, E2EL 1200 */
  /* (its frontend took 10 ms: queued at 1.01 s, scheduled at 1.05 s -> 40 ms in the queue) */
  rq[0] = (req_times){.outcome = REQ_FINISHED, .prompt_tokens = 100, .generated = 11, .send_ns = 1000000000,
                    .queued_ns = 1010000000, .first_sched_ns = 1050000000, .first_token_ns = 1200000000,
                    .finish_ns = 2200000000};
  /* r1: one output token: TTFT 300, no TPOT sample (tpot 0 for goodput) */
  rq[1] = (req_times){.outcome = REQ_FINISHED, .prompt_tokens = 50, .generated = 1, .send_ns = 0,
                    .first_sched_ns = 0, .first_token_ns = 300000000, .finish_ns = 300000000};
  rq[2] = (req_times){.outcome = REQ_REJECTED, .reject = 1, .prompt_tokens = 999999};
  rq[3] = (req_times){.outcome = REQ_UNFINISHED, .reject = 4, .prompt_tokens = 10};
  metrics_rec m;
  metrics_init(&m, 0);
  slo_cfg slo = {250, 50, -1};
  metrics_summary s;
  metrics_summarize(&m, metrics_times_of_array, rq, 4, &slo, &s);
  cr_assert_eq(s.completed, 2);
  cr_assert_eq(s.rejected, 1);
  cr_assert_eq(s.unfinished, 1);
  cr_assert_eq(s.rejected_by_reason[1], 1);
  cr_assert_eq(s.rejected_by_reason[4], 1, "unfinished requests are counted under their reason too");
  cr_assert_eq(s.total_input_tokens, 150);
  cr_assert_eq(s.total_output_tokens, 12);
  cr_assert_float_eq(s.duration_s, 2.2, 1e-12);
  cr_assert_float_eq(s.request_throughput, 2 / 2.2, 1e-12);
  cr_assert_float_eq(s.output_throughput, 12 / 2.2, 1e-12);
  cr_assert_float_eq(s.total_token_throughput, 162 / 2.2, 1e-12);
  cr_assert_float_eq(s.ttft_ms.mean, 250, 1e-9);
  cr_assert_eq(s.tpot_ms.n, 1);
  cr_assert_float_eq(s.tpot_ms.mean, 100, 1e-9);
  cr_assert_float_eq(s.e2el_ms.mean, (1200 + 300) / 2.0, 1e-9);
  cr_assert_float_eq(s.queue_ms.mean, 20, 1e-9, "the queue starts after the frontend: (40 + 0) / 2");
  /* TTFT term by term: frontend (send -> queued) + queue + prefill (first scheduled -> first token) */
  cr_assert_float_eq(s.frontend_ms.mean, (10 + 0) / 2.0, 1e-9);
  cr_assert_float_eq(s.prefill_ms.mean, (150 + 300) / 2.0, 1e-9);
  cr_assert_float_eq(s.frontend_ms.mean + s.queue_ms.mean + s.prefill_ms.mean, s.ttft_ms.mean, 1e-9);
  /* goodput: r0 has TTFT 200 <= 250 but TPOT 100 > 50; r1 TTFT 300 > 250 -> none good */
  cr_assert(s.has_goodput);
  cr_assert_eq(s.good_requests, 0);
  slo_cfg loose = {400, 150, -1};
  metrics_summarize(&m, metrics_times_of_array, rq, 4, &loose, &s);
  cr_assert_eq(s.good_requests, 2);
  cr_assert_float_eq(s.request_goodput, 2 / 2.2, 1e-12);
  metrics_deinit(&m);
}

Test(metrics, level_integrals) {
  metrics_rec m;
  metrics_init(&m, 0);
  metrics_level(&m, 0, 2, 1);
  metrics_level(&m, 1000, 3, 0);
  metrics_level(&m, 3000, 0, 0);
  cr_assert(m.area_in_system == 2 * 1000 + 3 * 2000);
  cr_assert(m.area_waiting == 1000);
  cr_assert_eq(m.peak_in_system, 3);
  metrics_deinit(&m);
}

/* The peak is a level that lasts: transient levels inside one nanosecond
 * (events of the same instant in some order) do not count, the last level of
 * the run does (once summarized). */
Test(metrics, peak_counts_lasting_levels) {
  metrics_rec m;
  metrics_init(&m, 0);
  metrics_level(&m, 0, 4, 0);
  metrics_level(&m, 10, 5, 0); /* an arrival, then a completion at the same ns */
  metrics_level(&m, 10, 4, 0);
  metrics_level(&m, 20, 3, 0);
  cr_assert_eq(m.peak_in_system, 4, "5 never lasted");
  cr_assert(m.area_in_system == 4 * 10 + 4 * 10);
  metrics_level(&m, 30, 6, 0);
  metrics_summary s;
  metrics_summarize(&m, metrics_times_of_array, NULL, 0, NULL, &s);
  cr_assert_eq(s.peak_in_system, 6, "the level the run ended with lasts");
  metrics_deinit(&m);
}

/* Step times are summed per replica, then in replica order. */
Test(metrics, step_sums_per_replica) {
  metrics_rec m;
  metrics_init(&m, 0);
  step_sums a = {0}, b = {0};
  batch_desc bd = {0};
  bd.num_tokens = bd.num_seqs = bd.num_decode = 1;
  step_cost c = {0};
  c.total_ns = 3.0;
  c.op_ns[OP_ATTN_DECODE] = 2.0;
  c.bound_ns[BOUND_MEMORY] = 3.0;
  metrics_step(&m, &a, &bd, &c);
  metrics_step(&m, &b, &bd, &c);
  metrics_step(&m, &a, &bd, &c);
  cr_assert_float_eq(a.busy_ns, 6.0, 0);
  cr_assert_float_eq(m.busy_ns, 0.0, 0, "nothing in the record before the sums are added");
  metrics_add_sums(&m, &a);
  metrics_add_sums(&m, &b);
  cr_assert_float_eq(m.busy_ns, 9.0, 0);
  cr_assert_float_eq(m.op_ns[OP_ATTN_DECODE], 6.0, 0);
  cr_assert_float_eq(m.bound_ns[BOUND_MEMORY], 9.0, 0);
  cr_assert_float_eq(a.busy_ns, 0.0, 0, "moved");
  cr_assert_eq(m.n_steps, 3);
  metrics_deinit(&m);
}

/* Within the histogram's bound of the exact value (relative, or exact below 2048 ns). */
static void near(double got, double want, const char *what) {
  cr_assert(fabs(got - want) <= HDR_REL_ERR * fabs(want) + 1e-12, "%s: %.9g, exact %.9g (bound %.3g%%)", what, got,
            want, 100 * HDR_REL_ERR);
}

Test(metrics, histogram_percentiles_within_bound_and_exact_moments) {
  rng r;
  rng_seed(&r, 8);
  size_t n = 200000;
  double *ref = malloc(n * sizeof *ref);
  hdr_hist h = {0};
  for (size_t i = 0; i < n; i++) {
    /* log-uniform from 1 ns to 100 s: every octave of the histogram */
    uint64_t v = (uint64_t)exp((double)rng_below(&r, 1000000) / 1000000.0 * log(1e11));
    hdr_add(&h, v, 1);
    ref[i] = (double)v;
  }
  dist_stats d, e;
  hdr_dist(&h, 1.0, &d);
  metrics_dist(ref, n, &e);
  cr_assert_eq(d.n, n);
  cr_assert_float_eq(d.mean, e.mean, 1e-9 * e.mean, "mean exact");
  cr_assert_float_eq(d.std, e.std, 1e-9 * e.std, "std exact");
  cr_assert_eq(d.min, e.min);
  cr_assert_eq(d.max, e.max);
  near(d.median, e.median, "median");
  near(d.p90, e.p90, "p90");
  near(d.p95, e.p95, "p95");
  near(d.p99, e.p99, "p99");
  hdr_free(&h);
  free(ref);
}

/* A recorder whose exact records outgrow their limit spills into the
 * histogram: the summary says so, keeps every count, and stays within the bound. */
Test(metrics, itl_and_steps_spill_past_their_limits) {
  metrics_rec m, x;
  metrics_init(&m, 0);
  metrics_init(&x, 0);
  m.itl_exact_max = 64;
  m.steps_exact_max = 100;
  rng r;
  rng_seed(&r, 4);
  itl_run pm = {0, 0}, px = {0, 0};
  for (int i = 0; i < 5000; i++) {
    sim_ns gap = 9000000 + (sim_ns)rng_below(&r, 4000000);
    uint64_t cnt = 1 + rng_below(&r, 8);
    for (uint64_t k = 0; k < cnt; k++) {
      metrics_itl(&m, &pm, gap);
      metrics_itl(&x, &px, gap);
    }
    batch_desc b = {0};
    b.num_tokens = b.num_seqs = b.num_decode = (uint32_t)cnt;
    step_cost c = {0};
    c.total_ns = (double)gap + 0.25;
    step_sums sm = {0}, sx = {0};
    metrics_step(&m, &sm, &b, &c);
    metrics_step(&x, &sx, &b, &c);
  }
  metrics_itl_flush(&m, &pm);
  metrics_itl_flush(&x, &px);
  cr_assert_null(m.itl, "the runs were handed to the histogram");
  cr_assert_null(m.step_ms);
  cr_assert_not_null(x.itl, "the default limits keep this run exact");
  metrics_summary s, t;
  metrics_summarize(&m, metrics_times_of_array, NULL, 0, NULL, &s);
  metrics_summarize(&x, metrics_times_of_array, NULL, 0, NULL, &t);
  cr_assert(s.itl_from_histogram && s.steps_from_histogram);
  cr_assert(!t.itl_from_histogram && !t.steps_from_histogram);
  cr_assert_eq(s.itl_ms.n, t.itl_ms.n);
  cr_assert_eq(s.steps, 5000);
  cr_assert_float_eq(s.itl_ms.mean, t.itl_ms.mean, 1e-9);
  cr_assert_float_eq(s.itl_ms.min, t.itl_ms.min, 1e-12);
  cr_assert_float_eq(s.itl_ms.max, t.itl_ms.max, 1e-12);
  near(s.itl_ms.median, t.itl_ms.median, "ITL median");
  near(s.itl_ms.p99, t.itl_ms.p99, "ITL p99");
  near(s.median_step_ms, t.median_step_ms, "step median");
  near(s.p99_step_ms, t.p99_step_ms, "step p99");
  cr_assert_float_eq(s.mean_step_ms, t.mean_step_ms, 1e-6 * t.mean_step_ms);
  metrics_deinit(&m);
  metrics_deinit(&x);
}

/* Each replica keeps its own run of equal gaps: the record gets the same runs
 * whether the replicas' tokens interleave or come one replica after another,
 * so the summary, and whether it spilled, are the same (a fleet simulated
 * apart, serve/fleet.h). */
Test(metrics, itl_runs_do_not_depend_on_interleaving) {
  enum { R = 3, N = 400 };
  sim_ns gaps[R][N];
  rng r;
  rng_seed(&r, 11);
  for (int q = 0; q < R; q++)
    for (int i = 0; i < N; i++) gaps[q][i] = i && rng_below(&r, 3) ? gaps[q][i - 1] : 1000 + (sim_ns)rng_below(&r, 9) * 7;
  for (size_t limit = 40; limit <= 4000; limit *= 100) {
    metrics_rec a, b;
    metrics_init(&a, 0);
    metrics_init(&b, 0);
    a.itl_exact_max = b.itl_exact_max = limit;
    itl_run pa[R] = {{0, 0}}, pb[R] = {{0, 0}};
    for (int i = 0; i < N; i++) /* interleaved */
      for (int q = 0; q < R; q++) metrics_itl(&a, &pa[q], gaps[q][i]);
    for (int q = 0; q < R; q++) /* one replica after another */
      for (int i = 0; i < N; i++) metrics_itl(&b, &pb[q], gaps[q][i]);
    for (int q = 0; q < R; q++) {
      metrics_itl_flush(&a, &pa[q]);
      metrics_itl_flush(&b, &pb[q]);
    }
    metrics_summary sa, sb;
    metrics_summarize(&a, metrics_times_of_array, NULL, 0, NULL, &sa);
    metrics_summarize(&b, metrics_times_of_array, NULL, 0, NULL, &sb);
    cr_assert_eq(sa.itl_from_histogram, limit == 40, "limit %zu", limit);
    cr_assert_eq(sa.itl_from_histogram, sb.itl_from_histogram);
    cr_assert(!memcmp(&sa.itl_ms, &sb.itl_ms, sizeof sa.itl_ms), "limit %zu: the same ITL statistics", limit);
    metrics_deinit(&a);
    metrics_deinit(&b);
  }
}
