/* test_uncert.c: prediction intervals (docs/UNCERTAINTY.md): the stratum of a run, the residual file built
 * from a small validation set written here (quantiles checked by hand, written twice byte for byte, read back),
 * the merge of sparse strata, the leave-one-model-out coverage against hand-computed numbers, and the
 * combination of the model and workload parts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/stratum.h"
#include "runner/uncert.h"
#include "testutil.h"
#include "validate/validate.h"
#include "validate/vresid.h"

/* A held-out closed-loop point of `model` in `stratum` whose TTFT residual ln(measured / predicted) is r. */
static void add_point(vset *s, const char *model, const char *key, double r) {
  vpoint *p = vset_add(s);
  snprintf(p->id, sizeof p->id, "fx/%s/%zu", model, s->n);
  snprintf(p->where, sizeof p->where, "/tmp/fixture/validation/fx.csv:%zu", s->n + 1);
  snprintf(p->model, sizeof p->model, "%s", model);
  snprintf(p->stratum, sizeof p->stratum, "%s", key);
  p->shape = VSHAPE_CLOSED;
  p->osl = 100;
  p->ran = true;
  p->train = false;
  p->pred[VM_TTFT] = 100;
  p->meas[VM_TTFT] = 100 * exp(r);
}

static char *write_table(const vset *s, const unc_table *t, size_t *len) {
  char path[256];
  snprintf(path, sizeof path, "%s/resid.json", tu_tmpdir());
  FILE *f = fopen(path, "w");
  cr_assert(f);
  sim_err err = {0, ""};
  cr_assert_eq(vresid_write(s, t, "servesim validate --fixture", f, &err), SIM_OK, "%s", err.msg);
  fclose(f);
  return tu_slurp(path, len);
}

Test(uncert, residual_file_quantiles_by_hand_and_byte_identical) {
  vset s;
  vset_init(&s);
  /* three models with the same 21 residuals -1.0, -0.9, ..., 1.0 in one stratum: no shift between models, so a
     new model's residual is one of the 21 alike (random_effect_dist) */
  for (int m = 0; m < 3; m++)
    for (int i = 0; i <= 20; i++) add_point(&s, m == 0 ? "a" : m == 1 ? "b" : "c", "same/closed/dense", (i - 10) / 10.0);
  vpoint *trained = vset_add(&s); /* a training point: never in the table */
  *trained = s.pts[0];
  trained->train = true;
  trained->meas[VM_TTFT] = 1e6;
  unc_table t;
  vresid_build(&s, 20, 3, NULL, &t);
  const unc_entry *e = unc_table_find(&t, "same/closed/dense");
  cr_assert(e != NULL);
  const unc_dist *d = &e->d[UM_TTFT];
  cr_assert_eq(d->n, 63);
  cr_assert_eq(d->models, 3);
  /* quantiles of a uniform pick among -1..1 step 0.1 (21 values): within one step of the discrete quantile
     (the Monte Carlo draws), exactly the ends and the middle */
  for (int k = 0; k < UNC_NQ; k++) {
    double exact = -1 + 0.1 * ceil(21 * unc_levels[k] - 1 - 1e-9);
    cr_assert(fabs(d->q[k] - exact) <= 0.1 + 1e-9, "level %g: %g vs %g", unc_levels[k], d->q[k], exact);
  }
  cr_assert_float_eq(d->q[0], -1, 1e-9);
  cr_assert_float_eq(d->q[5], 0, 1e-9);
  cr_assert_float_eq(d->q[10], 1, 1e-9);
  /* E2E: TTFT + (osl - 1) TPOT needs a TPOT: none here */
  cr_assert_eq(d[UM_E2E - UM_TTFT].n, 0);
  /* the merged keys hold the same 21 */
  cr_assert(unc_table_find(&t, "same/closed/*") && unc_table_find(&t, "*/closed/*") && unc_table_find(&t, "*/*/*"));
  size_t la, lb;
  char *a = write_table(&s, &t, &la), *b = write_table(&s, &t, &lb);
  cr_assert_eq(la, lb);
  cr_assert_eq(memcmp(a, b, la), 0, "the residual file must be byte-identical when written again");
  cr_assert(strstr(a, "\"file\": \"fx.csv\"") && strstr(a, "\"rows\": 64"), "the data's identity: %s", a);
  cr_assert(strstr(a, "\"command\": \"servesim validate --fixture\""));
  unc_table back;
  sim_err err = {0, ""};
  cr_assert_eq(unc_table_parse(&back, a, "resid.json", &err), SIM_OK, "%s", err.msg);
  const unc_entry *eb = unc_table_find(&back, "same/closed/dense");
  cr_assert(eb && eb->d[UM_TTFT].n == 63 && eb->d[UM_TTFT].models == 3);
  for (int k = 0; k < UNC_NQ; k++) cr_assert_float_eq(eb->d[UM_TTFT].q[k], d->q[k], 1e-6);
  unc_table_free(&back);
  free(a);
  free(b);
  unc_table_free(&t);
  vset_free(&s);
}

Test(uncert, sparse_strata_merge_upward) {
  vset s;
  vset_init(&s);
  for (int i = 0; i < 30; i++) add_point(&s, i % 3 == 0 ? "a" : i % 3 == 1 ? "b" : "c", "version/closed/dense", 0.01 * i);
  for (int i = 0; i < 5; i++) add_point(&s, "d", "version/closed/moe", 1.0); /* 5 points, one model: too few */
  unc_table t;
  vresid_build(&s, 20, 3, NULL, &t);
  cr_assert(unc_table_find(&t, "version/closed/moe") == NULL, "a stratum of 5 points holds nothing of its own");
  stratum moe = {SC_VERSION, SL_CLOSED, SA_MOE}, dense = {SC_VERSION, SL_CLOSED, SA_DENSE};
  const char *key = NULL;
  const unc_dist *d = unc_lookup(&t, &moe, UM_TTFT, &key);
  cr_assert(d && !strcmp(key, "version/closed/*"), "merged into version/closed/*, got %s", key ? key : "none");
  cr_assert_eq(d->n, 35);
  d = unc_lookup(&t, &dense, UM_TTFT, &key);
  cr_assert(d && !strcmp(key, "version/closed/dense") && d->n == 30);
  stratum other = {SC_ROOFLINE, SL_OPEN, SA_DENSE};
  d = unc_lookup(&t, &other, UM_TTFT, &key);
  cr_assert(d && !strcmp(key, "*/*/*"), "a stratum without data borrows from all");
  cr_assert(unc_lookup(&t, &dense, UM_TPOT, &key) == NULL && key == NULL, "no TPOT anywhere: no data");
  unc_table_free(&t);
  vset_free(&s);
}

/* Models a and b (residuals 0 x 10 each) and c (5 x 10). Leaving a out, the table is b and c: shifts 0 and 5, a
 * new model's shift 2.5 + 3.54 sqrt(1.5) t1, wide enough to hold a's 0 at every level; b likewise. Leaving c out,
 * the table is a and b, all 0: the interval is [0, 0] and none of c's 5 is inside. All: 20/30 at every level. */
Test(uncert, leave_one_model_out_coverage_by_hand) {
  vset s;
  vset_init(&s);
  for (int i = 0; i < 10; i++) add_point(&s, "a", "same/closed/dense", 0);
  for (int i = 0; i < 10; i++) add_point(&s, "b", "same/closed/dense", 0);
  for (int i = 0; i < 10; i++) add_point(&s, "c", "same/closed/dense", 5);
  vcal c;
  vcal_compute(&s, 1, 1, &c);
  cr_assert_eq(c.groups, 3);
  cr_assert_eq(c.n, 2, "all, then the one stratum");
  const vcal_row *all = &c.rows[0];
  cr_assert_str_eq(all->key, "all");
  cr_assert_eq(all->n[0], 30);
  for (int l = 0; l < 3; l++) cr_assert_eq(all->in[0][l], 20, "level %d: %zu", l, all->in[0][l]);
  cr_assert_eq(all->n[1], 0, "no TPOT");
  cr_assert_str_eq(c.rows[1].key, "same/closed/dense");
  cr_assert_eq(c.rows[1].in[0][1], 20);
  /* median width of the 80% interval: 20 of the 30 points had the wide one, c's ten [0, 0] */
  cr_assert_gt(all->width80[0], 1.0);
  vcal_free(&c);
  vset_free(&s);
}

Test(uncert, stratum_keys_and_cost_classes) {
  engine_cfg e;
  memset(&e, 0, sizeof e);
  snprintf(e.name, sizeof e.name, "vllm");
  snprintf(e.version, sizeof e.version, "0.14.0");
  prof_sel ps;
  memset(&ps, 0, sizeof ps);
  cr_assert_eq(stratum_cost_of(&ps, &e), SC_ROOFLINE);
  ps.other = (const prof *)&ps; /* any non-NULL: measured on another GPU type */
  cr_assert_eq(stratum_cost_of(&ps, &e), SC_SCALED);
  ps.other = NULL;
  ps.own = (const prof *)&ps;
  snprintf(ps.own_path, sizeof ps.own_path, "configs/profiles/h100-sxm_vllm-0.14.0.json");
  cr_assert_eq(stratum_cost_of(&ps, &e), SC_SAME);
  snprintf(ps.own_path, sizeof ps.own_path, "configs/profiles/h100-sxm_vllm-0.24.0.json");
  cr_assert_eq(stratum_cost_of(&ps, &e), SC_VERSION);
  snprintf(ps.own_path, sizeof ps.own_path, "/home/me/h100-sxm_llama.json"); /* a calibrate run's */
  cr_assert_eq(stratum_cost_of(&ps, &e), SC_SAME);
  stratum st = {SC_VERSION, SL_OPEN, SA_MOE}, back;
  char k[32], chain[4][32];
  stratum_key(&st, k, sizeof k);
  cr_assert_str_eq(k, "version/open/moe");
  cr_assert(stratum_parse(k, &back) && back.cost == SC_VERSION && back.loop == SL_OPEN && back.arch == SA_MOE);
  cr_assert(!stratum_parse("version/open/*", &back));
  cr_assert_eq(stratum_chain(&st, chain), 4);
  cr_assert_str_eq(chain[1], "version/open/*");
  cr_assert_str_eq(chain[2], "*/open/*");
  cr_assert_str_eq(chain[3], "*/*/*");
}

Test(uncert, interval_contains_the_point_and_widens_with_the_spread) {
  unc_dist narrow, wide;
  double xn[21], xw[21];
  for (int i = 0; i <= 20; i++) xn[i] = 0.01 * (i - 10), xw[i] = 0.05 * (i - 10);
  unc_dist_from(&narrow, xn, 21);
  unc_dist_from(&wide, xw, 21);
  unc_interval a, b, c, none;
  double seeds[1] = {50};
  unc_combine(&narrow, "k", 50, seeds, 1, 0.8, &a);
  unc_combine(&wide, "k", 50, seeds, 1, 0.8, &b);
  cr_assert(a.have && a.lo <= 50 && 50 <= a.hi);
  cr_assert(b.lo < a.lo && b.hi > a.hi, "a wider stratum gives a wider interval");
  cr_assert_float_eq(a.lo, 50 * exp(-0.08), 1e-9, "no workload part: the residual quantiles themselves");
  cr_assert_float_eq(a.hi, 50 * exp(0.08), 1e-9);
  double vs[4] = {50, 55, 45, 52};
  unc_combine(&narrow, "k", 50, vs, 4, 0.8, &c);
  cr_assert(c.workload_sd > 0 && c.lo < a.lo && c.hi > a.hi, "the workload part widens it");
  unc_interval c2;
  unc_combine(&narrow, "k", 50, vs, 4, 0.8, &c2);
  cr_assert(c.lo == c2.lo && c.hi == c2.hi, "Monte Carlo of a fixed seed: deterministic");
  unc_combine(NULL, NULL, 50, seeds, 1, 0.8, &none);
  cr_assert(!none.have && isnan(none.lo));
}

Test(uncert, bad_residual_files_name_line_and_field) {
  const char *levels = "\"quantile_levels\": [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99]";
  struct {
    const char *body, *want;
  } cases[] = {
      {"\"min_points\": 20, \"strata\": {}", "quantile_levels"},
      {"\"min_points\": 20, \"quantile_levels\": [0.1], \"strata\": {}", "quantile_levels"},
      {"\"min_points\": 20, %s, \"strata\": {\"a/b/c\": {\"ttft\": {\"n\": 3, \"q\": [1, 2]}}}", "strata.a/b/c.ttft.q"},
      {"\"min_points\": 20, %s, \"strata\": {\"a/b/c\": {\"nope\": {}}}", "unknown metric"},
      {"\"min_points\": 20, %s, \"strata\": {\"x\": {\"ttft\": {\"n\": 3, \"q\": [0,0,0,0,0,0,0,0,0,0,-1]}}}",
       "must not decrease"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char body[1024], text[1200];
    snprintf(body, sizeof body, cases[i].body, levels);
    snprintf(text, sizeof text, "{%s}", body);
    unc_table t;
    sim_err err = {0, ""};
    cr_assert_eq(unc_table_parse(&t, text, "r.json", &err), SIM_EINPUT, "case %zu accepted", i);
    cr_assert(strstr(err.msg, "r.json:1") && strstr(err.msg, cases[i].want), "case %zu: %s", i, err.msg);
  }
}

Test(uncert, bundled_file_reads) {
  unc_table t;
  sim_err err = {0, ""};
  cr_assert_eq(unc_table_load(&t, NULL, &err), SIM_OK, "%s", err.msg);
  cr_assert(unc_table_find(&t, "*/*/*") != NULL);
  cr_assert(t.min_points >= 20);
  unc_table_free(&t);
}

/* The random-effects quantiles by hand. Models with one shift each and no spread within (a 0, b 0.1, c 0.2, d 0.3,
 * five points each): mean 0.15, spread over models sd = 0.1291, a new model's shift 0.15 + 0.1291 sqrt(1 + 1/4) t3,
 * t3 Student's t with 3 degrees of freedom: q(0.9) = 0.15 + 0.1443 x 1.638 = 0.3864, q(0.5) = 0.15. Models with
 * the same points (no shift between them): the pooled points themselves, each model weighing 1. */
Test(uncert, random_effects_quantiles_by_hand) {
  vset s;
  vset_init(&s);
  const char *m[4] = {"a", "b", "c", "d"};
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 5; i++) add_point(&s, m[j], "same/closed/dense", 0.1 * j);
  unc_table t;
  vresid_build(&s, 1, 1, NULL, &t);
  const unc_dist *d = &unc_table_find(&t, "same/closed/dense")->d[UM_TTFT];
  cr_assert_eq(d->n, 20);
  cr_assert_eq(d->models, 4);
  double sb = sqrt((0.15 * 0.15 * 2 + 0.05 * 0.05 * 2) / 3);
  cr_assert_float_eq(d->q[5], 0.15, 0.005, "median %g", d->q[5]);
  cr_assert_float_eq(d->q[7], 0.15 + sb * sqrt(1.25) * 1.638, 0.012, "q(0.9) %g", d->q[7]);
  cr_assert_float_eq(d->q[3], 0.15 - sb * sqrt(1.25) * 1.638, 0.012, "q(0.1) %g", d->q[3]);
  unc_table_free(&t);
  vset_free(&s);
  vset_init(&s);
  for (int j = 0; j < 3; j++) /* three models, each -0.3, -0.2, ..., 0.3 */
    for (int i = 0; i < 7; i++) add_point(&s, m[j], "same/closed/dense", 0.1 * (i - 3));
  vresid_build(&s, 1, 1, NULL, &t);
  d = &unc_table_find(&t, "same/closed/dense")->d[UM_TTFT];
  cr_assert_float_eq(d->q[0], -0.3, 1e-9);
  cr_assert_float_eq(d->q[5], 0, 1e-9);
  cr_assert_float_eq(d->q[10], 0.3, 1e-9);
  /* built twice: the same quantiles (a fixed seed) */
  unc_table t2;
  vresid_build(&s, 1, 1, NULL, &t2);
  cr_assert_eq(memcmp(unc_table_find(&t2, "same/closed/dense")->d, unc_table_find(&t, "same/closed/dense")->d,
                      sizeof(unc_dist) * UM_COUNT), 0);
  unc_table_free(&t2);
  unc_table_free(&t);
  vset_free(&s);
}
