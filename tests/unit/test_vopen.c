/* test_vopen.c: inference-perf result directories as validation points
 * (validate/vopen.c, vstage.c) on the fixtures of tests/data/infperf
 * (make_fixtures.py there):
 *  - a run gives one point per load stage with the measured metrics in ms,
 *    the run as rebuilt (measured mean input length, timeout, server args)
 *    and a note of what profile.yaml asked for and config.yaml did not run;
 *  - directories are recognized by content and scanned in name order; runs
 *    servesim cannot rebuild stay as skipped points with the reason;
 *  - each kind of bad directory fails with the file, line and field;
 *  - the kept-up rule; a stage runs after the previous one has drained, on the
 *    same server, and its rebuilt trace extends the previous stage's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "validate/validate.h"

static char DIRBUF[1024];

static const char *fixture(const char *rel) {
  snprintf(DIRBUF, sizeof DIRBUF, "%s/tests/data/infperf/%s", SERVESIM_SOURCE_DIR, rel);
  return DIRBUF;
}

Test(vopen, a_run_gives_one_point_per_stage) {
  vset s;
  vset_init(&s);
  sim_err e = {0, ""};
  cr_assert_eq(vdata_read_infperf(&s, fixture("ok/llama-small"), &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(s.n, 2);
  const vpoint *p = &s.pts[1];
  cr_assert_str_eq(p->id, "infperf/llama-small/stage1");
  cr_assert(strstr(p->where, "llama-small/stage_1_lifecycle_metrics.json:1"), "%s", p->where);
  cr_assert_eq(p->src, VSRC_INFPERF);
  cr_assert_eq(p->shape, VSHAPE_STAGED);
  cr_assert_str_eq(p->model, "llama-2-7b");
  cr_assert_str_eq(p->gpu, "h100-sxm");
  cr_assert_str_eq(p->engine, "vllm");
  cr_assert_eq(p->tp, 1);
  cr_assert_eq(p->weight_dtype, DT_FP16, "dtype auto: the model's torch_dtype");
  cr_assert_eq(p->skip[0], 0, "%s", p->skip);
  cr_assert_float_eq(p->meas[VM_TTFT], 29.0, 1e-9);
  cr_assert_float_eq(p->meas[VM_TTFT_P99], 41.0, 1e-9);
  cr_assert_float_eq(p->meas[VM_TTFT_MED], 29.0, 1e-9); /* the file's median, 0.029 s */
  cr_assert_float_eq(p->meas[VM_E2E], 230.0, 1e-9);
  cr_assert(isnan(p->meas[VM_TPOT]) && isnan(p->meas[VM_TPUT]), "inference-perf's TPOT is not compared");
  cr_assert_eq(p->num_prompts, 20);
  cr_assert_float_eq(p->request_rate, 4.0, 1e-12);
  const vstaged *st = p->staged;
  cr_assert_not_null(st);
  cr_assert_eq(st->stage, 1);
  const vopen_run *r = &st->run;
  cr_assert_eq(r->n_stages, 2);
  cr_assert_float_eq(r->rate_per_s[0], 2.0, 1e-12);
  cr_assert_float_eq(r->duration_s[1], 5.0, 1e-12);
  cr_assert_eq(r->n_groups, 2);
  cr_assert_eq(r->prompts_per_group, 3, "config.yaml ran, not profile.yaml's 3 x 2");
  cr_assert_eq(r->system_prompt_tokens, 20);
  cr_assert_eq(r->question_tokens, 60);
  cr_assert_eq(r->output_tokens, 16);
  cr_assert_float_eq(r->meas_input_tokens, 84.5, 1e-9);
  cr_assert_eq(r->prompt_tokens, 85, "the measured mean, rounded");
  cr_assert_eq(r->shared_tokens, 21, "20 x 84.5 / 80, rounded");
  cr_assert_eq(p->isl, 85);
  cr_assert_float_eq(r->interval_s, 1.0, 1e-12);
  cr_assert_float_eq(r->timeout_s, 300.0, 1e-12, "request_timeout null: aiohttp's default");
  cr_assert_eq(r->max_num_seqs, 128);
  cr_assert_eq(r->max_num_batched_tokens, 2048);
  cr_assert_eq(r->max_model_len, 4096);
  cr_assert_str_eq(r->model_label, "meta-llama/Llama-2-7b-hf");
  cr_assert(strstr(r->profile_note, "num_unique_system_prompts=3") && strstr(r->profile_note, "dropped") &&
                strstr(r->profile_note, "enable_multi_turn_chat=true"),
            "%s", r->profile_note);
  cr_assert_eq(st->meas.sent, 20);
  cr_assert_eq(st->meas.ok, 20);
  cr_assert(st->meas.kept_up);
  cr_assert_float_eq(st->meas.mean_input_tokens, 84.5, 1e-9);
  vset_free(&s);
}

Test(vopen, directories_are_found_by_content_in_name_order) {
  cr_assert(vopen_is_result_dir(fixture("ok/llama-small")));
  cr_assert(!vopen_is_result_dir(fixture("ok")));
  cr_assert(vopen_is_result_dir(fixture("bad/no-config")), "profile.yaml and a stage file are enough to be one");
  vset s;
  vset_init(&s);
  sim_err e = {0, ""};
  size_t runs = 0;
  cr_assert_eq(vdata_scan_infperf(&s, fixture("ok"), 1, &runs, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(runs, 3);
  cr_assert_eq(s.n, 6);
  cr_assert_str_eq(s.pts[0].id, "infperf/llama-small/stage0");
  cr_assert_str_eq(s.pts[2].id, "infperf/mixtral-small/stage0");
  cr_assert_str_eq(s.pts[4].id, "infperf/poisson-small/stage0");
  cr_assert(strstr(s.pts[2].skip, "no servesim model config for mistralai/Mixtral-8x7B-v0.1"), "%s", s.pts[2].skip);
  cr_assert(strstr(s.pts[3].skip, "Mixtral"), "every stage of the run is listed");
  cr_assert(isfinite(s.pts[3].meas[VM_TTFT]), "a skipped point keeps its measured values");
  cr_assert(strstr(s.pts[4].skip, "load.type poisson"), "%s", s.pts[4].skip);
  vset_free(&s);
  vset_init(&s);
  cr_assert_eq(vdata_scan_infperf(&s, fixture(""), 0, &runs, &e), SIM_OK, "depth 0: the root only");
  cr_assert_eq(runs, 0);
  vset_free(&s);
}

Test(vopen, each_bad_directory_names_file_line_and_field) {
  static const struct {
    const char *dir, *a, *b;
  } t[] = {
      {"bad/truncated-json", "truncated-json/stage_1_lifecycle_metrics.json:37:16:", "invalid JSON"},
      {"bad/no-successes", "no-successes/stage_0_lifecycle_metrics.json:1:", "successes: missing"},
      {"bad/no-stages", "no-stages/config.yaml:16:", "load.stages: missing"},
      {"bad/yaml-indent", "yaml-indent/config.yaml:23:", "unexpected indentation"},
      {"bad/missing-stage-file", "missing-stage-file/stage_1_lifecycle_metrics.json: missing", "2 load stages"},
      {"bad/exp-unknown-key", "exp-unknown-key/exp-config.yaml:7:", "gpu_memory_utilization: unknown key"},
      {"bad/rate-mismatch", "rate-mismatch/stage_0_lifecycle_metrics.json:13:",
       "load_summary.requested_rate: 3, but config.yaml's load.stages[0].rate is 2"},
      {"bad/no-config", "no-config/config.yaml: missing", "expanded config"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    vset s;
    vset_init(&s);
    sim_err e = {0, ""};
    cr_assert_eq(vdata_read_infperf(&s, fixture(t[i].dir), &e), SIM_EINPUT, "%s accepted", t[i].dir);
    cr_assert(strstr(e.msg, t[i].a) && strstr(e.msg, t[i].b), "%s: '%s' lacks '%s' / '%s'", t[i].dir, e.msg, t[i].a,
              t[i].b);
    vset_free(&s);
  }
}

Test(vopen, kept_up_rule) {
  cr_assert(vstage_kept_up(9.97, 10, 51, 600), "a stage that answered 99.7% with p99 TTFT 51 ms kept up");
  cr_assert(!vstage_kept_up(3.22, 4, 261229, 1200), "a reasoning stage with minutes of TTFT did not");
  cr_assert(!vstage_kept_up(9.9, 10, 12000, 600), "p99 TTFT of 2% of the stage: a queue grew");
  cr_assert(vstage_kept_up(9.9, 10, 6000, 600), "1% of the stage is the limit");
  cr_assert(!vstage_kept_up(9.4, 10, 50, 600), "answered less than 95% of the offered rate");
  cr_assert(!vstage_kept_up(NAN, 10, 50, 600), "nothing answered");
  cr_assert(!vstage_kept_up(10, 10, NAN, 600));
}

Test(vopen, stages_run_one_after_the_other_on_one_server) {
  vset s;
  vset_init(&s);
  sim_err e = {0, ""};
  cr_assert_eq(vdata_read_infperf(&s, fixture("ok/llama-small"), &e), SIM_OK, "%s", e.msg);
  for (size_t i = 0; i < 2; i++) {
    cr_assert_eq(vrun_point(&s.pts[i], NULL, &e), SIM_OK, "%s", e.msg);
    cr_assert(s.pts[i].ran, "%s: %s", s.pts[i].id, s.pts[i].fail);
    for (int m = 0; m < VM_COUNT; m++)
      cr_assert_eq(isfinite(s.pts[i].pred[m]), m == VM_TTFT || m == VM_TTFT_MED || m == VM_TTFT_P99 || m == VM_E2E,
                   "metric %d", m);
    /* a median TTFT: positive, at most the p99 */
    cr_assert(s.pts[i].pred[VM_TTFT_MED] > 0 && s.pts[i].pred[VM_TTFT_MED] <= s.pts[i].pred[VM_TTFT_P99]);
    cr_assert_eq(s.pts[i].staged->pred.ok, 20, "every request answered");
    cr_assert(s.pts[i].staged->pred.kept_up);
    cr_assert(s.pts[i].pred[VM_E2E] > s.pts[i].pred[VM_TTFT]);
  }
  const vstaged *s1 = s.pts[1].staged;
  cr_assert_eq(s1->first_req, 20);
  cr_assert_float_eq(s1->start_s[0], 0.0, 1e-12);
  /* stage 0 sends its last request at 10 s, its responses take ~0.1 s, then 0.5 + 1 + 1 s */
  cr_assert(s1->start_s[1] > 12.5 && s1->start_s[1] < 13.5, "stage 1 starts at %g s", s1->start_s[1]);
  trace t0, t1;
  cr_assert_eq(vstage_trace(&s.pts[0], &t0, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(vstage_trace(&s.pts[1], &t1, &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(t0.n, 20);
  cr_assert_eq(t1.n, 40);
  for (size_t i = 0; i < 20; i++) {
    cr_assert_eq(t0.reqs[i].arrival_ns, t1.reqs[i].arrival_ns, "stage 1's run replays stage 0 as it was");
    cr_assert_eq(t1.reqs[i].prompt_tokens, 85);
    cr_assert_eq(t1.reqs[i].output_tokens, 16);
    cr_assert(!memcmp(t1.hash_ids + t1.reqs[i].hash_off, t1.hash_ids + t1.reqs[20 + i].hash_off,
                      t1.reqs[i].n_hash * sizeof(uint64_t)),
              "request %zu of each stage: the same prompt", i);
  }
  cr_assert_geq(sim_ns_to_s(t1.reqs[20].arrival_ns) + t1.t0_s, s1->start_s[1]);
  trace_free(&t0);
  trace_free(&t1);
  char m[2048];
  vstage_method(&s.pts[1], NULL, m, sizeof m);
  cr_assert(strstr(m, "2 groups x 3 prompts of 85 tokens (the first 21 shared") &&
                strstr(m, "1: 4 req/s x 5 s (requests 20..39)") && strstr(m, "--save-traces DIR") &&
                strstr(m, "servesim run --trace DIR/infperf_llama-small_stage1.csv --model llama-2-7b") &&
                strstr(m, "stage 1: rows of requests 20..39"),
            "%s", m);
  vset_free(&s);
}

Test(vopen, kept_up_counts_and_the_held_out_filter) {
  vset s;
  vset_init(&s);
  static const struct {
    bool ran, meas, pred;
  } t[] = {{true, true, true}, {true, true, true}, {true, false, false}, {true, true, false}, {true, false, true},
           {false, true, true}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    vpoint *p = vset_add(&s);
    p->shape = VSHAPE_STAGED;
    p->ran = t[i].ran;
    p->staged = sim_calloc(1, sizeof *p->staged);
    p->staged->meas.kept_up = t[i].meas;
    p->staged->pred.kept_up = t[i].pred;
    cr_assert(vfilter_held_out(p, NULL), "an open-loop stage outside the training set is held out");
  }
  vpoint *c = vset_add(&s);
  c->shape = VSHAPE_CLOSED;
  cr_assert(vfilter_held_out(c, NULL));
  c->train = true;
  cr_assert(!vfilter_held_out(c, NULL));
  vkept k;
  vkept_count(&s, &k);
  cr_assert_eq(k.both_up, 2);
  cr_assert_eq(k.both_over, 1);
  cr_assert_eq(k.false_over, 1, "measured kept up, predicted overloaded");
  cr_assert_eq(k.missed_over, 1, "measured overloaded, predicted kept up");
  cr_assert_eq(k.unclassified, 1, "a stage that did not run");
  vset_free(&s);
}
