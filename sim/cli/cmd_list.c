/* cmd_list.c: `servesim list`: the bundled models, GPUs, engines, scenarios, profiles. */
#include <string.h>

#include "cli/cli.h"
#include "config/cfg.h"
#include "config/engver.h"

int cmd_list(int argc, char **argv) {
  bool help = false;
  cli_opt opts[] = {{"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
                    {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  int rc = cli_start("list", "servesim list", "Lists the names usable with --model, --gpu (and the MIG slices --gpu GPU:PROFILE), --engine,\n"
                     "--scenario, --profile and capacity --instances, and the engine version facts that --engine\n"
                     "NAME@VERSION applies (what changed in which release, and the source).",
                     opts, &help, argc, argv);
  if (rc != CLI_GO) return rc;
  static const struct {
    cfg_kind k;
    const char *title;
  } kinds[] = {{CFG_MODEL, "models"}, {CFG_GPU, "gpus"}, {CFG_ENGINE, "engines"},
               {CFG_SCENARIO, "scenarios"}, {CFG_PROFILE, "profiles"}, {CFG_INSTANCE, "instances"}};
  char buf[4096];
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    cfg_list(kinds[i].k, buf, sizeof buf);
    printf("%-10s %s\n", kinds[i].title, buf[0] ? buf : "(none)");
  }
  printf("\nMIG slices (--gpu GPU:PROFILE; one GPU holds up to the count shown):\n");
  char names[1024], *save = NULL;
  cfg_list(CFG_GPU, names, sizeof names);
  for (char *t = strtok_r(names, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    gpu_cfg g;
    sim_err e;
    if (cfg_gpu_load(&g, t, &e) || !g.n_mig) continue;
    printf("%-14s", g.name);
    for (uint32_t k = 0; k < g.n_mig; k++) printf("%s %s (x%u)", k ? "," : "", g.mig[k].name, g.mig[k].max_instances);
    printf("\n");
  }
  printf("\nengine version facts (--engine NAME@VERSION; configs/README.md, Engine versions):\n");
  engver_print(stdout);
  return 0;
}
