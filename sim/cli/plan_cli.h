/* plan_cli.h: the command-line glue shared by `sweep` and `capacity`: the
 * run flags (cli/run_flags.h) with the grid axes (--gpu, --tp, --replicas,
 * --quantization, --kv-cache-dtype, --max-num-seqs, --max-num-batched-tokens,
 * --request-rate, --max-concurrency, --rate-scale) taking comma lists, plus
 * --grid FILE, --slo KEY=MS, --gpu-hour-price, --jobs; the output flags
 * (--json, --csv, --report, --report-md, --force, --quiet) and their files;
 * and the progress bar.
 * Lives here rather than in cli/ because both subcommands share it; it only
 * borrows cli.h's types. */
#ifndef SIM_PLAN_CLI_H
#define SIM_PLAN_CLI_H

#include "cli/cli.h"
#include "cli/run_flags.h"
#include "plan/grid.h"
#include "report/report_html.h"

typedef struct plan_flags {
  run_flags rf;
  const char *axis[AX_COUNT]; /* comma lists as given */
  const char *grid_file;
  cli_list slo;
  const char *price;
  uint32_t jobs;              /* 0 = all processors */
  bool progress;              /* --[no-]progress; default: when stderr is a terminal */
  bool seen_progress;
  double iv_level;            /* --interval P: intervals next to the headline figures (default 0.8; 0 = none) */
  const char *residuals;      /* --residuals FILE (NULL: the bundled residual file) */
  char help[AX_COUNT][200];   /* help texts of the list-valued axis flags */
  char names[AX_COUNT][48];   /* "--tp" etc., for messages */
  /* output flags (plan_flags_outputs) */
  const char *json, *csv;     /* result files (json: "-" = stdout) */
  const char *html, *md;      /* report files */
  bool force, quiet, show_help;
} plan_flags;

void plan_flags_init(plan_flags *f);
/* Fills opts[0..cap) with the run flags (axes as lists) and the grid flags
 * (--grid named `grid_name`, e.g. "grid" or "candidates"); returns the count. */
int plan_flags_table(plan_flags *f, const char *grid_name, cli_opt *opts, int cap);
/* Builds the base scenario and the grid: scenario_default, the spec file's
 * scenario, the run flags, then the axes from flags; SLOs and prices merged
 * (flags win). grid must be grid_init'ed. */
int plan_flags_apply(plan_flags *f, scenario *base, grid_spec *g, sim_err *err);
/* Appends the output flags to opts[0..n) (cap entries in all) and terminates
 * the table: --json (json_help), --csv (only when csv_help is not NULL),
 * --report, --report-md, --force, --quiet, --help. Returns the count. */
int plan_flags_outputs(plan_flags *f, const char *json_help, const char *csv_help, cli_opt *opts, int n, int cap);
/* --interval in [0, UNC_MAX_LEVEL] (runner/uncert.h). */
int plan_flags_check_interval(const plan_flags *f, sim_err *err);
/* Fails if an output file exists and --force is not given (before the runs). */
int plan_flags_check_outputs(const plan_flags *f, sim_err *err);
/* Writes the files asked for: JSON and CSV of `set` (json_fn, csv_fn), the
 * HTML and Markdown reports of doc. */
int plan_flags_write(const plan_flags *f, outfmt_write_fn json_fn, outfmt_write_fn csv_fn, const void *set,
                     const report_doc *doc, sim_err *err);
/* Where the text summary goes: stderr when the JSON goes to stdout. */
FILE *plan_flags_text_out(const plan_flags *f);
/* --jobs (default: all processors), put in effect for libuv's thread pool:
 * call before anything touches libuv (pool.h). */
unsigned plan_flags_jobs(const plan_flags *f);
/* Whether to draw the progress bar: --[no-]progress, else when stderr is a
 * terminal and --quiet is not given. */
bool plan_flags_progress(const plan_flags *f);

/* Progress bar on stderr: "[#####-----] 57/210 configs  12.3/s  ETA 13 s".
 * Throttled to 10 updates a second; a newline when done. ctx: a plan_progress. */
typedef struct plan_progress {
  const char *unit;   /* "configs", "candidates" */
  double t0_s;        /* wall clock at start */
  double last_s;      /* last update */
  bool enabled;
} plan_progress;
void plan_progress_start(plan_progress *p, const char *unit, bool enabled);
void plan_progress_cb(void *ctx, size_t done, size_t total);
double plan_wall_s(void);
/* "servesim <cmd> args..." (argv[0] = the subcommand), arguments with spaces quoted. */
void plan_command_line(int argc, char **argv, char *buf, size_t n);

/* A study's arguments without those that do not change its results (outputs, jobs, progress, the shard
 * itself), NUL-separated into buf: what a part carries and merge parses again. SIZE_MAX when they do not fit. */
size_t plan_shard_args(int argc, char **argv, char *buf, size_t cap);
/* capacity's half of `servesim merge` (cmd_capacity.c): the search rebuilt from its arguments, the parts'
 * candidates in, the recommendation made, out's outputs written. */
struct sweep_part;
int capacity_merge(int argc, char **argv, const plan_flags *out, const struct sweep_part *parts, int np);
/* "K/N" with 1 <= K <= N <= 100000. */
int plan_parse_shard(const char *v, size_t *k, size_t *n, sim_err *err);

#endif
