/* plan_cli.c: flag glue shared by sweep and capacity, and the progress bar
 * (see plan_cli.h). The only wall clock of the planning code is here: it
 * times the progress bar and the "configs per second" line, never a result. */
#include "cli/plan_cli.h"

#include "core/outfmt.h"
#include "runner/uncert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void plan_flags_init(plan_flags *f) {
  memset(f, 0, sizeof *f);
  run_flags_init(&f->rf);
  f->iv_level = 0.8;
}

int plan_flags_check_interval(const plan_flags *f, sim_err *err) {
  if (!(f->iv_level == 0 || (f->iv_level > 0 && f->iv_level <= UNC_MAX_LEVEL)))
    return sim_errf(err, SIM_EINPUT, "--interval must be 0 (none) or in (0, %g], got %g", UNC_MAX_LEVEL, f->iv_level);
  return SIM_OK;
}

int plan_flags_table(plan_flags *f, const char *grid_name, cli_opt *o, int cap) {
  int n = run_flags_table(&f->rf, o, cap - 10);
  for (int i = 0; i < n; i++) {
    int a = grid_axis_of_flag(o[i].name);
    if (a < 0) continue;
    snprintf(f->help[a], sizeof f->help[a], "%.150s (a comma list sweeps it: A,B,...)", o[i].help);
    o[i].type = CLI_STR;
    o[i].dest = &f->axis[a];
    o[i].seen = NULL;
    o[i].help = f->help[a];
  }
  o[n++] = (cli_opt){grid_name, NULL, CLI_STR, &f->grid_file, "FILE",
                     "JSON spec: scenario, grid, configs, slo_ms, target_rate, gpu_hour_price (docs/planning.md)", NULL};
  o[n++] = (cli_opt){"slo", NULL, CLI_LIST, &f->slo, "KEY=MS",
                     "objective, repeatable: ttft_p99=2000, tpot_p99=50, e2el_p90=..., ttft_mean=...", NULL};
  o[n++] = (cli_opt){"gpu-hour-price", NULL, CLI_STR, &f->price, "USD|GPU=USD,...",
                     "USD per GPU-hour (default: the GPU config's price)", NULL};
  o[n++] = (cli_opt){"interval", NULL, CLI_F64, &f->iv_level, "P",
                     "prediction intervals at level P next to the headline figures (text, JSON, reports): the cost "
                     "model's validation error for each configuration's stratum, no extra runs (docs/UNCERTAINTY.md); "
                     "default 0.8, at most 0.98; 0 = none", NULL};
  o[n++] = (cli_opt){"residuals", NULL, CLI_STR, &f->residuals, "FILE",
                     "the residual file the intervals read (default: the bundled configs/uncertainty/residuals.json)",
                     NULL};
  o[n++] = (cli_opt){"jobs", "j", CLI_U32, &f->jobs, "N", "simulations in parallel on libuv's thread pool (default: all processors)", NULL};
  o[n++] = (cli_opt){"progress", NULL, CLI_BOOL, &f->progress, NULL, "progress bar on stderr (default: when it is a terminal)",
                     &f->seen_progress};
  return n;
}

/* The option name (for messages) a given axis was set by. */
static const char *flag_of(plan_flags *f, int a) {
  const char *al = grid_axis_alias((grid_axis_id)a);
  snprintf(f->names[a], sizeof f->names[a], "--%s%s%s", grid_axis_flag((grid_axis_id)a), al ? "/--" : "", al ? al : "");
  return f->names[a];
}

int plan_flags_apply(plan_flags *f, scenario *base, grid_spec *g, sim_err *err) {
  int rc;
  scenario_default(base);
  if (f->grid_file && (rc = grid_load(g, f->grid_file, err))) return rc;
  outfmt_protect(f->grid_file);
  if ((g->scenario_ref[0] || g->scenario_json) && f->rf.scenario)
    return sim_errf(err, SIM_EINPUT, "--scenario and the \"scenario\" of %s: give the base scenario once", g->file);
  if (g->scenario_ref[0]) {
    char path[1024];
    scenario_init(base);
    if ((rc = cfg_find(CFG_SCENARIO, g->scenario_ref, path, sizeof path, err))) return sim_err_prefix(err, "%s: scenario", g->file);
    if ((rc = scenario_load(base, path, err))) return rc;
  } else if (g->scenario_json) {
    scenario_init(base);
    /* scenario_json keeps the object's lines in the file (grid.c) */
    if ((rc = scenario_parse(base, g->scenario_json, g->file, err))) return rc;
  }
  if ((rc = run_flags_apply(&f->rf, base, err))) return rc;
  if (base->autoscale.on) /* a study varies fixed fleets; the autoscaled fleet is `run`'s */
    return sim_errf(err, SIM_EINPUT, "--autoscale (or a scenario's \"autoscale\"): `servesim run` only, not sweep or "
                    "capacity");
  /* MIG slices among the GPUs compared (--gpu h200:1g.18gb,...): without --tp every candidate is one GPU or slice
     per replica (TP1), not the default scenario's TP4 that no slice can run */
  int tp_axis = grid_axis_of_key("tensor_parallel_size");
  if (f->axis[AX_GPU] && strchr(f->axis[AX_GPU], ':') && !f->axis[tp_axis] && !run_flags_given(&f->rf, "tensor_parallel_size"))
    base->deploy.tp = 1;
  for (int a = 0; a < AX_COUNT; a++)
    if (f->axis[a] && (rc = grid_set_axis_list(g, (grid_axis_id)a, f->axis[a], flag_of(f, a), err))) return rc;
  if (g->n[AX_RATE] && g->n[AX_CONC])
    return sim_errf(err, SIM_EINPUT, "request_rate and max_concurrency: sweep one load axis at a time");
  for (int i = 0; i < f->slo.n; i++)
    if ((rc = slo_add(&g->slo, f->slo.items[i], "--slo", err))) return rc;
  if (f->price && (rc = price_parse(&g->price, f->price, "--gpu-hour-price", err))) return rc;
  if (!grid_size(g)) return sim_errf(err, SIM_EINPUT, "the grid has more than %d points", GRID_MAX_POINTS);
  return 0;
}

int plan_flags_outputs(plan_flags *f, const char *json_help, const char *csv_help, cli_opt *opts, int n, int cap) {
  const cli_opt out[] = {
      {"json", NULL, CLI_STR, &f->json, "FILE", json_help, NULL},
      {"csv", NULL, CLI_STR, &f->csv, "FILE", csv_help, NULL},
      {"report", NULL, CLI_STR, &f->html, "FILE.html", "write a self-contained HTML report", NULL},
      {"report-md", NULL, CLI_STR, &f->md, "FILE.md", "write a Markdown report", NULL},
      {"force", NULL, CLI_FLAG, &f->force, NULL, "overwrite existing output files", NULL},
      {"quiet", "q", CLI_FLAG, &f->quiet, NULL, "print nothing but errors", NULL},
      {"help", "h", CLI_FLAG, &f->show_help, NULL, "show this help", NULL}};
  cli_opt pick[SIM_ARRAY_LEN(out) + 1];
  int k = 0;
  for (size_t i = 0; i < SIM_ARRAY_LEN(out); i++)
    if (out[i].dest != &f->csv || csv_help) pick[k++] = out[i];
  pick[k] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  return cli_opts_append(opts, n, cap, pick);
}

int plan_flags_check_outputs(const plan_flags *f, sim_err *err) {
  const char *outs[] = {f->json, f->csv, f->html, f->md};
  return outfmt_refuse_existing(outs, 4, f->force, err);
}

static int w_html(const void *doc, FILE *f, sim_err *e) { return report_html(doc, f, e); }
static int w_md(const void *doc, FILE *f, sim_err *e) { return report_md(doc, f, e); }

int plan_flags_write(const plan_flags *f, outfmt_write_fn json_fn, outfmt_write_fn csv_fn, const void *set,
                     const report_doc *doc, sim_err *err) {
  int rc = 0;
  if (f->json && (rc = outfmt_write_file(f->json, f->force, json_fn, set, err))) return rc;
  if (f->csv && (rc = outfmt_write_file(f->csv, f->force, csv_fn, set, err))) return rc;
  if (f->html && (rc = outfmt_write_file(f->html, f->force, w_html, doc, err))) return rc;
  if (f->md && (rc = outfmt_write_file(f->md, f->force, w_md, doc, err))) return rc;
  return 0;
}

FILE *plan_flags_text_out(const plan_flags *f) { return f->json && !strcmp(f->json, "-") ? stderr : stdout; }

unsigned plan_flags_jobs(const plan_flags *f) {
  unsigned jobs = f->jobs ? f->jobs : pool_default_jobs();
  pool_set_threads(jobs);
  return jobs;
}

bool plan_flags_progress(const plan_flags *f) { return f->seen_progress ? f->progress : (!f->quiet && isatty(2)); }

double plan_wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void plan_progress_start(plan_progress *p, const char *unit, bool enabled) {
  p->unit = unit;
  p->t0_s = p->last_s = plan_wall_s();
  p->enabled = enabled;
}

void plan_progress_cb(void *ctx, size_t done, size_t total) {
  plan_progress *p = ctx;
  if (!p->enabled) return;
  double now = plan_wall_s();
  if (done < total && done > 0 && now - p->last_s < 0.1) return;
  p->last_s = now;
  enum { W = 30 };
  int fill = total ? (int)(W * done / total) : W;
  char bar[W + 1];
  for (int i = 0; i < W; i++) bar[i] = i < fill ? '#' : '-';
  bar[W] = 0;
  double el = now - p->t0_s, rate = el > 0 ? (double)done / el : 0;
  char eta[32] = "";
  if (done && done < total && rate > 0) snprintf(eta, sizeof eta, "  ETA %.0f s", (double)(total - done) / rate);
  fprintf(stderr, "\r[%s] %zu/%zu %s  %.1f/s%s   ", bar, done, total, p->unit, rate, eta);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

void plan_command_line(int argc, char **argv, char *buf, size_t n) {
  size_t o = (size_t)snprintf(buf, n, "servesim");
  for (int i = 0; i < argc && o < n; i++)
    o += (size_t)snprintf(buf + o, n - o, strpbrk(argv[i], " \"'") ? " '%s'" : " %s", argv[i]);
}

/* ---- shards (sweep and capacity --shard K/N --part FILE; merge) --------------- */

size_t plan_shard_args(int argc, char **argv, char *buf, size_t cap) {
  static const char *const with_value[] = {"--shard", "--part", "--json", "--csv", "--report", "--report-md", "--jobs",
                                           "-j", NULL};
  static const char *const alone[] = {"--force", "--quiet", "-q", "--progress", "--no-progress", NULL};
  size_t o = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool skip = false, skip_next = false;
    for (int k = 0; with_value[k] && !skip; k++) {
      size_t l = strlen(with_value[k]);
      if (!strcmp(a, with_value[k])) skip = skip_next = true;
      else if (!strncmp(a, with_value[k], l) && a[l] == '=') skip = true;
    }
    for (int k = 0; alone[k] && !skip; k++) skip = !strcmp(a, alone[k]);
    if (skip) {
      i += skip_next;
      continue;
    }
    size_t l = strlen(a) + 1;
    if (o + l > cap) return SIZE_MAX;
    memcpy(buf + o, a, l);
    o += l;
  }
  return o;
}

int plan_parse_shard(const char *v, size_t *k, size_t *n, sim_err *err) {
  unsigned long a, b;
  int used = 0;
  if (sscanf(v, "%lu/%lu%n", &a, &b, &used) != 2 || v[used] || a < 1 || a > b || b > 100000)
    return sim_errf(err, SIM_EINPUT, "--shard: expected K/N with 1 <= K <= N <= 100000, got '%s'", v);
  *k = a, *n = b;
  return SIM_OK;
}

