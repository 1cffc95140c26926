/* test_cli_parse.c: the shared flag parser and the scenario flags. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cli/run_flags.h"

Test(cli_parse, forms_and_errors) {
  uint32_t n = 0;
  double x = 0;
  bool b = true, h = false;
  const char *s = NULL;
  cli_list l = {{0}, 0};
  cli_opt o[] = {{"num", "n", CLI_U32, &n, "N", "", NULL},      {"rate", NULL, CLI_F64, &x, "R", "", NULL},
                 {"thing", NULL, CLI_BOOL, &b, NULL, "", NULL},  {"name", NULL, CLI_STR, &s, "S", "", NULL},
                 {"slo", NULL, CLI_MULTI, &l, "K:V", "", NULL}, {"help", NULL, CLI_FLAG, &h, NULL, "", NULL},
                 {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  char *argv[] = {"x", "--num", "7", "--rate=inf", "--no-thing", "--name", "abc", "--slo", "a:1", "b:2", "--help"};
  sim_err err;
  cr_assert_eq(cli_parse(o, 11, argv, NULL, &err), 0, "%s", err.msg);
  cr_assert_eq(n, 7);
  cr_assert(isinf(x));
  cr_assert_not(b);
  cr_assert_str_eq(s, "abc");
  cr_assert_eq(l.n, 2);
  cr_assert_str_eq(l.items[1], "b:2");
  cr_assert(h);
  char *bad1[] = {"x", "--num", "-3"};
  cr_assert_eq(cli_parse(o, 3, bad1, NULL, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "--num"));
  char *bad2[] = {"x", "--rate"};
  cr_assert_eq(cli_parse(o, 2, bad2, NULL, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "needs a value"));
  char *bad3[] = {"x", "--nope"};
  cr_assert_eq(cli_parse(o, 2, bad3, NULL, &err), SIM_EINPUT);
  char *bad4[] = {"x", "stray"};
  cr_assert_eq(cli_parse(o, 2, bad4, NULL, &err), SIM_EINPUT);
  char *bad5[] = {"x", "--help=yes"};
  cr_assert_eq(cli_parse(o, 2, bad5, NULL, &err), SIM_EINPUT);
  char *bad6[] = {"x", "--rate", "nan"};
  cr_assert_eq(cli_parse(o, 3, bad6, NULL, &err), SIM_EINPUT);
}

static int apply(scenario *sc, int argc, char **argv, sim_err *err) {
  run_flags f;
  run_flags_init(&f);
  cli_opt o[160];
  int n = run_flags_table(&f, o, 159);
  o[n] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  int rc = cli_parse(o, argc, argv, NULL, err);
  if (rc) return rc;
  scenario_default(sc);
  return run_flags_apply(&f, sc, err);
}

Test(cli_parse, run_flags_build_the_scenario) {
  scenario sc;
  sim_err err;
  char *a1[] = {"run", "--tp", "8", "--quantization", "fp8", "--kv-cache-dtype", "fp8", "--max-num-seqs", "64",
                "--no-enable-prefix-caching", "--num-prompts", "50", "--request-rate", "3",
                "--goodput", "ttft:2000", "tpot:50", "--fail-replica", "1@30"};
  cr_assert_eq(apply(&sc, 19, a1, &err), 0, "%s", err.msg);
  cr_assert_eq(sc.deploy.tp, 8);
  cr_assert_eq(sc.deploy.weight_dtype, DT_FP8);
  cr_assert_eq(sc.deploy.kv_dtype, DT_FP8);
  cr_assert_eq(sc.deploy.max_num_seqs, 64);
  cr_assert_eq(sc.deploy.enable_prefix_caching, 0);
  cr_assert_eq(sc.trace_path[0], 0, "generator flags switch from the default trace to the generator");
  cr_assert_eq(sc.gen.num_prompts, 50);
  cr_assert_float_eq(sc.gen.request_rate, 3, 0);
  cr_assert_float_eq(sc.goodput.ttft_ms, 2000, 0);
  cr_assert_float_eq(sc.goodput.tpot_ms, 50, 0);
  cr_assert_eq(sc.n_failures, 1);
  cr_assert_float_eq(sc.failures[0].at_s, 30, 0);
  /* with a trace, --request-rate rescales it */
  char *a2[] = {"run", "--trace", "x.csv", "--request-rate", "12"};
  cr_assert_eq(apply(&sc, 5, a2, &err), 0, "%s", err.msg);
  cr_assert_float_eq(sc.target_rate, 12, 0);
  char *a3[] = {"run", "--window", "10:5"};
  cr_assert_eq(apply(&sc, 3, a3, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "--window"));
  char *a4[] = {"run", "--fail-replica", "one@5"};
  cr_assert_eq(apply(&sc, 3, a4, &err), SIM_EINPUT);
  /* a replica index that does not fit 32 bits is an error, not replica 0 */
  char *a4b[] = {"run", "--fail-replica", "4294967296@5"};
  cr_assert_eq(apply(&sc, 3, a4b, &err), SIM_EINPUT, "4294967296@5 accepted as replica %u", sc.failures[0].replica);
  char *a5[] = {"run", "--input-median", "500"};
  cr_assert_eq(apply(&sc, 3, a5, &err), SIM_EINPUT, "median without lognormal");
  char *a6[] = {"run", "--dtype", "int4"};
  cr_assert_eq(apply(&sc, 3, a6, &err), SIM_EINPUT);
}

/* The numbers applied from run_flags.c's table: each lands in its scenario
 * field converted to that field's type, and a value out of its range is
 * refused with the flag, the range and the value. */
Test(cli_parse, numeric_flags_from_the_table) {
  scenario sc;
  sim_err err;
  char *ok[] = {"run", "--random-input-len", "256", "--random-output-len", "32", "--max-concurrency", "4",
                "--gpu-memory-utilization", "0.5", "--rate-scale", "2", "--time-limit", "60", "--max-requests", "7",
                "--pp", "2", "--gpus-per-node", "4"};
  cr_assert_eq(apply(&sc, 19, ok, &err), 0, "%s", err.msg);
  cr_assert_float_eq(sc.gen.input.len, 256, 0, "a u32 flag into a double field");
  cr_assert_float_eq(sc.gen.output.len, 32, 0);
  cr_assert_eq(sc.max_concurrency, 4);
  cr_assert_float_eq(sc.deploy.gpu_memory_utilization, 0.5, 0);
  cr_assert_float_eq(sc.rate_scale, 2, 0);
  cr_assert_float_eq(sc.time_limit_s, 60, 0);
  cr_assert_eq(sc.max_requests, 7);
  cr_assert_eq(sc.deploy.pp, 2);
  cr_assert_eq(sc.deploy.gpus_per_node, 4);
  static const struct {
    const char *flag, *value, *msg;
  } bad[] = {{"--gpu-memory-utilization", "1.5", "--gpu-memory-utilization: '1.5' is not a number in (0, 1]"},
             {"--gpus-per-node", "0", "--gpus-per-node: '0' is not an integer in [1, 1024]"},
             {"--rate-scale", "inf", "--rate-scale must be a finite number > 0, got inf"},
             {"--output-scale", "0", "--output-scale must be a finite number > 0, got 0"},
             {"--duration", "2e9", "--duration must be a number of seconds in (0, 1e9], got 2e+09"},
             {"--max-requests", "0", "--max-requests must be >= 1, got 0"},
             {"--time-limit", "-1", "--time-limit must be a finite number of seconds > 0, got -1"}};
  for (size_t i = 0; i < SIM_ARRAY_LEN(bad); i++) {
    char *argv[] = {"run", (char *)bad[i].flag, (char *)bad[i].value};
    cr_assert_eq(apply(&sc, 3, argv, &err), SIM_EINPUT, "%s %s accepted", bad[i].flag, bad[i].value);
    cr_assert(strstr(err.msg, bad[i].msg), "%s", err.msg);
  }
}
