/* cmd_list.c: `servesim list`: the bundled models, GPUs, engines, scenarios, profiles. */
#include <string.h>

#include "cli/cli.h"
#include "config/cfg.h"
#include "config/engver.h"

int cmd_list(int argc, char **argv) {
  bool help = false;
  cli_opt opts[] = {{"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
                    {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  int rc = cli_start("list", "servesim list", "Lists the names usable with --model, --gpu, --engine, --scenario and --profile, and the engine version\n"
                     "facts that --engine NAME@VERSION applies (what changed in which release, and the source).",
                     opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;
  static const struct {
    cfg_kind k;
    const char *title;
  } kinds[] = {{CFG_MODEL, "models"}, {CFG_GPU, "gpus"}, {CFG_ENGINE, "engines"},
               {CFG_SCENARIO, "scenarios"}, {CFG_PROFILE, "profiles"}};
  char buf[4096];
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    cfg_list(kinds[i].k, buf, sizeof buf);
    printf("%-10s %s\n", kinds[i].title, buf[0] ? buf : "(none)");
  }
  printf("\nengine version facts (--engine NAME@VERSION; configs/README.md, Engine versions):\n");
  engver_print(stdout);
  return 0;
}
