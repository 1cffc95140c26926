/* main.c: the servesim command: dispatch to one file per subcommand. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "runner/profsel.h"

typedef struct subcmd {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} subcmd;

static const subcmd cmds[] = {
    {"run", cmd_run, "replay a trace or generated workload through a deployment; print TTFT, TPOT, throughput"},
    {"gen-trace", cmd_gen_trace, "generate a workload trace (vLLM bench serve semantics) as native CSV"},
    {"plan", cmd_plan, "memory plan and step times of one deployment, and which limit binds"},
    {"sweep", cmd_sweep, "run a grid of configurations in parallel; Pareto frontier, cost per million tokens"},
    {"merge", cmd_merge, "combine the parts of a sweep or capacity search run as shards (--shard K/N) into the unsplit outputs"},
    {"serve", cmd_serve, "an OpenAI-compatible HTTP endpoint in front of a simulated deployment, in real time"},
    {"capacity", cmd_capacity, "highest rate a replica sustains at given SLOs; replicas and GPUs for a target"},
    {"validate", cmd_validate, "compare predictions with published measurements of real engines"},
    {"calibrate", cmd_calibrate,
     "time GEMM and attention kernels on the local GPU (or import measured tables) and write a cost profile"},
    {"list", cmd_list, "list the bundled models, GPUs, engines, scenarios and profiles"},
};

static void usage(FILE *f) {
  fprintf(f,
          "servesim %s: LLM inference-server capacity simulator\n\n"
          "usage: servesim <command> [options]      (servesim <command> --help for its options)\n"
          "       servesim                          (same as `servesim run`: the bundled default scenario)\n\n"
          "commands:\n",
          SERVESIM_VERSION);
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
}

/* The command's exit status; every path goes through here. */
static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    char *args[] = {"run", NULL};
    return cmd_run(1, args);
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("servesim %s\n", SERVESIM_VERSION);
    return 0;
  }
  if (argv[1][0] == '-') { /* flags without a command: they belong to `run` */
    argv[0] = "run";
    return cmd_run(argc, argv);
  }
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "servesim: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}

int main(int argc, char **argv) {
  int rc = dispatch(argc, argv);
  profsel_cache_clear(); /* the profiles runs loaded: released for LeakSanitizer's sake */
  /* what went to standard output must have arrived (a full disk, a closed pipe): else exit 1, never a silent 0 */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "servesim: writing to standard output failed: %s\n", strerror(errno));
    if (!rc) rc = 1;
  }
  return rc;
}
