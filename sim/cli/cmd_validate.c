/* cmd_validate.c: `servesim validate`: servesim against published
 * measurements of real engines (sim/validate/), with the error table.
 *
 * Sources: the known files of the validation directory (--data DIR, default
 * $SERVESIM_SHARED_DIR/validation, else ../shared/validation from the cwd) and
 * any --measurements FILE in the user format (validate.h). With only
 * --measurements, the directory is not read unless --data is given too.
 * --fit refits the engine profiles' global parameters on the training subset
 * (fit.c) before validating with them, and prints the fitted values.
 * --save-traces DIR writes the rebuilt workload of every open-loop stage point
 * that ran (DIR/<id, '/' -> '_'>.csv, native format with prefix content ids),
 * which `servesim run --trace` replays to redo the point (docs/ACCURACY.md).
 * Exit: 0 when the validation ran (whatever the errors), 2 on bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/outfmt.h"
#include "report/report_valid.h"
#include "cli/cli.h"
#include "cli/run_flags.h"
#include "validate/validate.h"
#include "validate/vresid.h"

static const char *USAGE = "servesim validate [--data DIR] [--measurements FILE|DIR]... [--models DIR]... [options]";
static const char *SUMMARY =
    "Runs servesim on every published measurement in the validation directory (AIConfigurator closed-loop\n"
    "points of any model, GPU and engine, TensorRT-LLM offline and static-batch tables, MLPerf, inference-perf\n"
    "open-loop runs: one point per load stage; every file found by its content, whatever its name) and on your\n"
    "own runs (`vllm bench serve --save-result` or genai-perf/AIPerf results with their deployment), and prints measured vs predicted with the error per point, then median and mean\n"
    "absolute error per metric and per group, the saturation-cliff and kept-up/overloaded confusion counts.\n"
    "Points servesim cannot represent are listed with the reason. See docs/ACCURACY.md.";

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct out_arg {
  const vset *s;
  const vreport_opts *o;
} out_arg;

static int w_json(const void *a, FILE *f, sim_err *e) {
  const out_arg *x = a;
  return vreport_json(x->s, x->o, f, e);
}
static int w_html(const void *a, FILE *f, sim_err *e) {
  const out_arg *x = a;
  return report_validate_html(x->s, x->o, f, e);
}
static int w_csv(const void *a, FILE *f, sim_err *e) {
  const out_arg *o = a;
  return vreport_csv(o->s, o->o->ov, f, e);
}
static int w_trace(const void *t, FILE *f, sim_err *e) { return trace_write_native(t, f, e); }

/* --save-traces: one native trace per open-loop stage point that ran. */
static int save_traces(const vset *s, const char *dir, bool force, sim_err *err) {
  int rc = SIM_OK;
  for (size_t i = 0; i < s->n && !rc; i++) {
    const vpoint *p = &s->pts[i];
    if (!p->staged || !p->ran) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.csv", dir, p->id);
    for (char *c = path + strlen(dir) + 1; *c; c++)
      if (*c == '/') *c = '_';
    trace t;
    rc = vstage_trace(p, &t, err);
    if (!rc) rc = outfmt_write_file(path, force, w_trace, &t, err);
    trace_free(&t);
  }
  return rc;
}

/* "engine.param=value" */
static int parse_param(const char *s, voverrides *ov, sim_err *err) {
  const char *dot = strchr(s, '.'), *eq = strchr(s, '=');
  if (!dot || !eq || eq < dot || dot == s)
    return sim_errf(err, SIM_EINPUT, "--param %s: expected ENGINE.NAME=VALUE, e.g. vllm.step_overhead_us=250", s);
  char engine[32], name[64];
  snprintf(engine, sizeof engine, "%.*s", (int)(dot - s), s);
  snprintf(name, sizeof name, "%.*s", (int)(eq - dot - 1), dot + 1);
  double v;
  if (!sim_parse_double(eq + 1, &v) || !(v >= 0) || !isfinite(v))
    return sim_errf(err, SIM_EINPUT, "--param %s: expected a finite number >= 0 after '='", s);
  int k = 0;
  while (k < VP_COUNT && strcmp(vparam_name((vparam)k), name)) k++;
  if (k == VP_COUNT) {
    char known[512] = "";
    for (int i = 0; i < VP_COUNT; i++) {
      strncat(known, vparam_name((vparam)i), sizeof known - strlen(known) - 1);
      if (i + 1 < VP_COUNT) strncat(known, ", ", sizeof known - strlen(known) - 1);
    }
    return sim_errf(err, SIM_EINPUT, "--param %s: unknown parameter '%s' (known: %s)", s, name, known);
  }
  if (k == VP_CLOSED_OUTPUT_SPREAD && !(v < 0.5))
    return sim_errf(err, SIM_EINPUT, "--param %s: the spread must be in [0, 0.5)", s);
  if (k == VP_FRONTEND_LATENCY_US && v * 1e3 > CFG_MAX_FRONTEND_LATENCY_NS)
    return sim_errf(err, SIM_EINPUT, "--param %s: at most %.0f us (one hour)", s, CFG_MAX_FRONTEND_LATENCY_NS / 1e3);
  int i = 0;
  while (i < ov->n && strcmp(ov->e[i].engine, engine)) i++;
  if (i == ov->n) {
    if (ov->n >= (int)SIM_ARRAY_LEN(ov->e)) return sim_errf(err, SIM_EINPUT, "--param: too many engines");
    memset(&ov->e[i], 0, sizeof ov->e[i]);
    snprintf(ov->e[i].engine, sizeof ov->e[i].engine, "%s", engine);
    for (int j = 0; j < VP_COUNT; j++) ov->e[i].v[j] = NAN;
    ov->n++;
  }
  ov->e[i].v[k] = v;
  return SIM_OK;
}

static void describe_overrides(const voverrides *ov, char *buf, size_t n) {
  buf[0] = 0;
  for (int i = 0; i < ov->n_set; i++) {
    char one[128];
    snprintf(one, sizeof one, "%s%s=%s", buf[0] ? ", " : "", ov->set[i].key, ov->set[i].value);
    strncat(buf, one, n - strlen(buf) - 1);
  }
  for (int i = 0; i < ov->n; i++)
    for (int k = 0; k < VP_COUNT; k++) {
      if (isnan(ov->e[i].v[k])) continue;
      char one[128];
      snprintf(one, sizeof one, "%s%s.%s=%.4g", buf[0] ? ", " : "", ov->e[i].engine, vparam_name((vparam)k),
               ov->e[i].v[k]);
      strncat(buf, one, n - strlen(buf) - 1);
    }
}

/* --group-by G[,G] (repeatable); default source, gpu, engine, tp. */
static int parse_groups(const cli_list *groups, vreport_opts *ro, sim_err *err) {
  if (groups->n == 0) {
    ro->groups[VG_SOURCE] = ro->groups[VG_GPU] = ro->groups[VG_ENGINE] = ro->groups[VG_TP] = true;
    return SIM_OK;
  }
  for (int i = 0; i < groups->n; i++) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", groups->items[i]);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      vgroup_by g;
      if (!vgroup_parse(tok, &g))
        return sim_errf(err, SIM_EINPUT,
                        "--group-by: unknown group '%s' (source, gpu, engine, tp, shape, model, version, loop, split, stratum)", tok);
      ro->groups[g] = true;
    }
  }
  return SIM_OK;
}

/* --only TEXT: keeps the points whose id contains it (in their order). */
static int keep_only(vset *s, const char *only, sim_err *err) {
  size_t w = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (strstr(s->pts[i].id, only)) {
      vpoint tmp = s->pts[w];
      s->pts[w++] = s->pts[i];
      s->pts[i] = tmp;
    }
  }
  for (size_t i = w; i < s->n; i++) vpoint_release(&s->pts[i]);
  s->n = w;
  if (!w) return sim_errf(err, SIM_EINPUT, "--only %s: no point id contains it", only);
  return SIM_OK;
}

/* --fit: each engine with training points, then the fitted values on stdout. */
static int run_fit(vset *s, voverrides *ov, uint32_t rounds, sim_err *err) {
  vfit_opts fo = {(int)rounds, true, stderr};
  const char *engines[] = {"vllm", "trtllm"};
  int rc = SIM_OK;
  for (int i = 0; i < 2 && !rc; i++) {
    bool any = false;
    for (size_t k = 0; k < s->n; k++) any |= s->pts[k].train && !strcmp(s->pts[k].engine, engines[i]);
    if (any) rc = vfit_engine(s, ov, engines[i], &fo, err);
  }
  if (rc) return rc;
  printf("Fitted parameters (put them in configs/engines/<engine>.json; configs/README.md documents them):\n");
  for (int i = 0; i < ov->n; i++) {
    printf("  %s:", ov->e[i].engine);
    for (int k = 0; k < VP_COUNT; k++)
      if (!isnan(ov->e[i].v[k])) printf(" %s=%.4g", vparam_name((vparam)k), ov->e[i].v[k]);
    printf("\n");
  }
  printf("\n");
  return SIM_OK;
}

/* Every measurement the flags name: the model configs (each --models
 * directory, then the shared data's: a user's directory adds to the models
 * servesim knows, and an id found in two is the first one's), the data
 * directory (when --data is given or no --measurements), then each
 * --measurements path. */
static int load_all(vset *s, const cli_list *models, const char *data, const cli_list *meas, sim_err *err) {
  int rc = SIM_OK;
  char mdir[2048];
  for (int i = 0; i < models->n && !rc; i++) {
    size_t nm = 0;
    rc = vres_add_models_dir(vset_resolver(s), models->items[i], &nm, err);
    if (!rc) vset_note(s, "%s: %zu model configs (--models)", models->items[i], nm);
  }
  if (!rc && vdata_find_models_dir(mdir, sizeof mdir)) {
    size_t nm = 0;
    rc = vres_add_models_dir(vset_resolver(s), mdir, &nm, err);
    if (!rc) vset_note(s, "%s: %zu model configs", mdir, nm);
  }
  if (!rc && (data || meas->n == 0)) {
    char dir[2048];
    rc = vdata_find_dir(data, dir, sizeof dir, err);
    if (!rc) rc = vdata_load_dir(s, dir, err);
  }
  for (int i = 0; i < meas->n && !rc; i++) {
    outfmt_protect(meas->items[i]); /* no output replaces a measurement file */
    rc = vdata_load_path(s, meas->items[i], err);
  }
  return rc;
}

/* The title line of the summaries: the parameters the points ran with. */
static void run_title(const voverrides *ov, char *title, size_t n) {
  char desc[2048];
  describe_overrides(ov, desc, sizeof desc);
  snprintf(title, n,
           "engine files (configs/engines/*.json)%s%s; closed-loop output spread +-%g%% (vllm), +-%g%% (trtllm)%s%s%s",
           desc[0] ? " with " : "", desc, 100 * vclosed_spread(ov, "vllm"), 100 * vclosed_spread(ov, "trtllm"),
           !ov->allreduce_set || ov->allreduce == AR_AUTO ? ""
           : ov->allreduce == AR_LINK             ? "; all-reduces from each GPU file's link (--allreduce link)"
                                                  : "; all-reduces from the measured tables (--allreduce table)",
           ov->moe_routing_set ? "; mixture-of-experts routing " : "",
           ov->moe_routing_set ? moe_routing_name(ov->moe_routing) : "");
}

/* The overrides the flags give every point: --output-spread, --allreduce, --moe-routing, --param. */
static int overrides_of(voverrides *ov, double spread, const char *allreduce, const char *routing,
                        const cli_list *params, const cli_list *sets, sim_err *err) {
  memset(ov, 0, sizeof *ov);
  ov->closed_output_spread = spread;
  if (allreduce && !(ov->allreduce_set = cfg_parse_allreduce(allreduce, &ov->allreduce)))
    return sim_errf(err, SIM_EINPUT, "--allreduce: expected auto, table or link, got '%s'", allreduce);
  if (routing && !(ov->moe_routing_set = moe_routing_parse(routing, &ov->moe_routing)))
    return sim_errf(err, SIM_EINPUT, "--moe-routing: expected balanced, power_law_1.01 or power_law_1.2, got '%s'",
                    routing);
  for (int i = 0; i < params->n; i++) {
    int rc = parse_param(params->items[i], ov, err);
    if (rc) return rc;
  }
  for (int i = 0; i < sets->n; i++) {
    int rc = voverride_set_add(ov, sets->items[i], err);
    if (rc) return rc;
  }
  if (!isnan(spread) && !(spread >= 0 && spread < 0.5))
    return sim_errf(err, SIM_EINPUT, "--output-spread must be in [0, 0.5)");
  return SIM_OK;
}

/* Before any run: the --save-traces directory exists, and no output file is overwritten without --force. */
static int check_outputs(const char *traces, const char *json, const char *csv, const char *html, bool force,
                         sim_err *err) {
  if (traces) {
    struct stat st;
    if (stat(traces, &st) != 0 || !S_ISDIR(st.st_mode))
      return sim_errf(err, SIM_EINPUT, "--save-traces %s: no such directory", traces);
  }
  const char *outs[] = {json, csv, html};
  for (int i = 0; i < 3; i++) {
    FILE *t;
    if (outs[i] && strcmp(outs[i], "-") && !force && (t = fopen(outs[i], "r"))) {
      fclose(t);
      return sim_errf(err, SIM_EINPUT, "%s already exists: not overwriting it (pass --force to replace it)", outs[i]);
    }
  }
  return SIM_OK;
}

/* The text report (on stderr when JSON or CSV goes to stdout), then the JSON, CSV and traces asked for. */
static int write_reports(const vset *s, const vreport_opts *ro, const char *json, const char *csv, const char *html,
                         const char *traces, bool force, sim_err *err) {
  FILE *tf = (json && !strcmp(json, "-")) || (csv && !strcmp(csv, "-")) ? stderr : stdout;
  vreport_text(s, ro, tf);
  out_arg oa = {s, ro};
  int rc = SIM_OK;
  if (json) rc = outfmt_write_file(json, force, w_json, &oa, err);
  if (!rc && csv) rc = outfmt_write_file(csv, force, w_csv, &oa, err);
  if (!rc && html) rc = outfmt_write_file(html, force, w_html, &oa, err);
  if (!rc && traces) rc = save_traces(s, traces, force, err);
  return rc;
}

typedef struct resid_arg {
  const vset *s;
  const unc_table *t;
  const char *command;
} resid_arg;
static int w_resid(const void *a, FILE *f, sim_err *e) {
  const resid_arg *x = a;
  return vresid_write(x->s, x->t, x->command, f, e);
}

/* --residuals-out: the table of the held-out points; the command is the arguments that shape it (the output
 * path, --force and the report options left out, so that a regeneration elsewhere writes the same bytes). */
static int write_residuals(const vset *s, const char *path, int argc, char **argv, bool force, sim_err *err) {
  static const char *const drop_v[] = {"--residuals-out", "--json", "--csv", "--report", "--save-traces", "--min-points",
                                       "--group-by", NULL};
  static const char *const drop[] = {"--force", "--no-table", "--show-skipped", "--calibration", NULL};
  char cmd[2048] = "servesim validate";
  size_t k = strlen(cmd);
  for (int i = 1; i < argc; i++) {
    bool skip = false;
    for (int d = 0; drop_v[d] && !skip; d++) {
      size_t n = strlen(drop_v[d]);
      if (!strncmp(argv[i], drop_v[d], n) && (argv[i][n] == 0 || argv[i][n] == '=')) {
        skip = true;
        if (argv[i][n] == 0) i++; /* its value */
      }
    }
    for (int d = 0; drop[d] && !skip; d++) skip = !strcmp(argv[i], drop[d]);
    if (!skip && k < sizeof cmd) k += (size_t)snprintf(cmd + k, sizeof cmd - k, " %s", argv[i]);
  }
  unc_table t;
  vresid_build(s, VRESID_MIN_POINTS, VRESID_MIN_MODELS, NULL, &t);
  resid_arg a = {s, &t, cmd};
  int rc = outfmt_write_file(path, force, w_resid, &a, err);
  unc_table_free(&t);
  return rc;
}

int cmd_validate(int argc, char **argv) {
  const char *data = NULL, *json = NULL, *csv = NULL, *html = NULL, *only = NULL, *traces = NULL, *resid_out = NULL;
  bool calibration = false;
  uint32_t min_points = 5;
  cli_list meas = {{0}, 0}, groups = {{0}, 0}, params = {{0}, 0}, sets = {{0}, 0}, models = {{0}, 0};
  bool force = false, help = false, no_table = false, show_skipped = false, fit = false;
  uint32_t rounds = 4;
  double spread = NAN;
  const char *allreduce = NULL, *routing = NULL;
  cli_opt opts[] = {
      {"data", NULL, CLI_STR, &data, "DIR", "validation directory (default $SERVESIM_SHARED_DIR/validation, else ../shared/validation)", NULL},
      {"measurements", NULL, CLI_LIST, &meas, "FILE|DIR", "measurements, recognized by content (repeatable): AIConfigurator silicon CSVs, TensorRT-LLM tables, inference-perf result directories, {scenario, result} JSON with a vllm bench serve or genai-perf/AIPerf result; a directory is searched", NULL},
      {"json", NULL, CLI_STR, &json, "FILE", "write every point and the summaries as JSON (- = stdout)", NULL},
      {"csv", NULL, CLI_STR, &csv, "FILE", "write one CSV row per point", NULL},
      {"report", NULL, CLI_STR, &html, "FILE.html", "write an HTML page: errors per source, engine and GPU (signed beside absolute), the open-loop stages' TTFT stage by stage, closed-loop measured against predicted", NULL},
      {"save-traces", NULL, CLI_STR, &traces, "DIR", "write the rebuilt workload of each open-loop stage point as a trace (for servesim run --trace)", NULL},
      {"force", NULL, CLI_FLAG, &force, NULL, "overwrite existing output files", NULL},
      {"residuals-out", NULL, CLI_STR, &resid_out, "FILE", "write the residual file: per stratum and metric, the quantiles of ln(measured / predicted) over the held-out points (what `run --interval` reads; docs/UNCERTAINTY.md)", NULL},
      {"calibration", NULL, CLI_FLAG, &calibration, NULL, "report the leave-one-model-out coverage of the 50/80/95% intervals per stratum (text, and --json's \"calibration\")", NULL},
      {"group-by", NULL, CLI_LIST, &groups, "G[,G]", "per-group summaries: source, gpu, engine, tp, shape, model, version (engine@version), loop (closed, open, offline, static), split (training or held_out, dense or moe), stratum (what the prediction rests on: cost source/loop/arch, docs/UNCERTAINTY.md); default source,gpu,engine,tp", NULL},
      {"min-points", NULL, CLI_U32, &min_points, "N", "flag summaries of fewer than N points as too few to judge (default 5; 0 = off)", NULL},
      {"models", NULL, CLI_LIST, &models, "DIR", "Hugging Face config.json files named after their ids (org--name.json) for the models the measurements name (repeatable); added to the bundled models and to $SERVESIM_SHARED_DIR/models or ../shared/models when present, a file here taking precedence over one of the same id there", NULL},
      {"only", NULL, CLI_STR, &only, "TEXT", "validate only the points whose id contains TEXT", NULL},
      {"no-table", NULL, CLI_FLAG, &no_table, NULL, "print the summaries only, not one row per point", NULL},
      {"show-skipped", NULL, CLI_FLAG, &show_skipped, NULL, "list every skipped point (default: one line per reason)", NULL},
      {"output-spread", NULL, CLI_F64, &spread, "S", "closed-loop points of every engine: output lengths uniform in osl x [1-S, 1+S] (default: each engine's fitted spread; 0 = strictly fixed; docs/ACCURACY.md)", NULL},
      {"allreduce", NULL, CLI_STR, &allreduce, "auto|table|link", "all-reduce costs of every point: auto (default: the measured table unless it is below a third of the link), the profiles' measured tables, or each GPU file's link bandwidth and latency", NULL},
      {"moe-routing", NULL, CLI_STR, &routing, "R", "expert load of every mixture-of-experts point: balanced (default), power_law_1.01 or power_law_1.2 (the kernel database's routings; docs/ACCURACY.md)", NULL},
      {"param", NULL, CLI_LIST, &params, "E.NAME=V", "override an engine parameter, e.g. vllm.step_overhead_us=250 (repeatable)", NULL},
      {"set", NULL, CLI_LIST, &sets, "KEY=VALUE", "apply a deployment setting (a scenario key, e.g. enable_mixed_chunk=on) to every point after its source's own facts (repeatable); a point the setting does not fit is listed as failed with the reason", NULL},
      {"fit", NULL, CLI_FLAG, &fit, NULL, "refit the engines' global parameters on the training subset, then validate with them", NULL},
      {"fit-rounds", NULL, CLI_U32, &rounds, "N", "coordinate-search rounds of --fit (default 4)", NULL},
      {"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
      {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  sim_err err = {0, ""};
  if (cli_parse(opts, argc, argv, NULL, &err)) return cli_fail("validate", &err);
  if (help) {
    cli_print_help(stdout, USAGE, SUMMARY, opts);
    return 0;
  }
  vreport_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.table = !no_table;
  ro.show_skipped = show_skipped;
  ro.min_points = min_points;
  if (parse_groups(&groups, &ro, &err)) return cli_fail("validate", &err);
  voverrides ov;
  ro.ov = &ov;
  if (overrides_of(&ov, spread, allreduce, routing, &params, &sets, &err)) return cli_fail("validate", &err);
  if (fit && (rounds < 1 || rounds > 12)) {
    sim_errf(&err, SIM_EINPUT, "--fit-rounds must be in 1..12");
    return cli_fail("validate", &err);
  }
  if (check_outputs(traces, json, csv, html, force, &err) || check_outputs(NULL, resid_out, NULL, NULL, force, &err))
    return cli_fail("validate", &err);

  vset s;
  vset_init(&s);
  int rc = load_all(&s, &models, data, &meas, &err);
  if (!rc && only) rc = keep_only(&s, only, &err);
  if (rc) {
    vset_free(&s);
    return cli_fail("validate", &err);
  }
  vfit_mark_training(&s);
  double t0 = wall_now();
  if (fit) rc = run_fit(&s, &ov, rounds, &err);
  if (!rc) rc = vrun_all(&s, &ov, false, NULL, &err);
  ro.wall_s = wall_now() - t0;
  char title[2200];
  run_title(&ov, title, sizeof title);
  ro.title = title;
  vcal cal = {0};
  if (!rc && calibration) {
    vcal_compute(&s, VRESID_MIN_POINTS, VRESID_MIN_MODELS, &cal);
    ro.cal = &cal;
  }
  if (!rc) rc = write_reports(&s, &ro, json, csv, html, traces, force, &err);
  if (!rc && resid_out) rc = write_residuals(&s, resid_out, argc, argv, force, &err);
  vcal_free(&cal);
  vset_free(&s);
  if (rc) return cli_fail("validate", &err);
  return 0;
}
