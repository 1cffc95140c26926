/* cli.h: subcommands of the servesim binary and the shared flag parser.
 *
 * Every subcommand is `int cmd_<name>(int argc, char **argv)` where argv[0] is
 * the subcommand name; it returns the process exit code: 0 success, 2 bad
 * input (message on stderr naming the flag, file, line or field), 1 internal
 * error. Only subcommands print; library modules return errors.
 *
 * Flag parser: a table of cli_opt; accepts `--name value`, `--name=value`,
 * and for booleans `--name` / `--no-name`. Unknown flags, missing values and
 * malformed numbers are errors naming the flag. */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "core/common.h"
#include "core/outfmt.h" /* outfmt_write_file: every command writes its files through it */

typedef enum cli_type {
  CLI_STR = 0,  /* const char * (borrowed from argv) */
  CLI_U32,      /* uint32_t */
  CLI_U64,      /* uint64_t */
  CLI_F64,      /* double (accepts "inf") */
  CLI_BOOL,     /* bool: --x sets true, --no-x sets false (if negatable) */
  CLI_LIST,     /* repeated string flag: appends to a cli_list */
  CLI_FLAG,     /* bool set true, no --no- form (e.g. --help) */
  CLI_MULTI     /* like CLI_LIST, and also takes the following arguments up to the next --flag */
} cli_type;

typedef struct cli_list {
  const char *items[64];
  int n;
} cli_list;

typedef struct cli_opt {
  const char *name;  /* without leading dashes, e.g. "tensor-parallel-size" */
  const char *alias; /* second name or NULL, e.g. "tp" */
  cli_type type;
  void *dest;
  const char *metavar; /* e.g. "N" (NULL for flags) */
  const char *help;
  bool *seen;          /* optional: set true when given */
} cli_opt;

/* Parses argv[1..argc). Positional arguments are an error unless `pos` is
 * non-NULL (then they are collected there). Returns 0 or SIM_EINPUT (err says
 * which flag and why). */
int cli_parse(const cli_opt *opts, int argc, char **argv, cli_list *pos, sim_err *err);
/* Prints "usage" then one line per option. */
void cli_print_help(FILE *f, const char *usage, const char *summary, const cli_opt *opts);

/* Prints "servesim <cmd>: <msg>" and a hint to stderr; returns code. */
int cli_fail(const char *cmd, const sim_err *err);

/* Building option tables: appends the NULL-terminated add[] to opts[0..n)
 * and terminates opts (cap entries in all); returns the count without the
 * terminator. */
int cli_opts_append(cli_opt *opts, int n, int cap, const cli_opt *add);

/* The start of every subcommand: parses argv against opts. A bad flag is
 * reported (cli_fail) and its exit status returned; --help (the table's
 * flag behind `help`) prints the help and returns 0; else CLI_GO: go on. */
enum { CLI_GO = -1 };
int cli_start(const char *cmd, const char *usage, const char *summary, const cli_opt *opts, const bool *help, int argc,
              char **argv);


int cmd_run(int argc, char **argv);
int cmd_gen_trace(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif
