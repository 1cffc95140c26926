/* cmd_list.c: `servesim list`: the bundled models, GPUs, engines, scenarios, profiles;
 * `servesim list settings`: the deployment settings (config/settings.c's table). */
#include <string.h>

#include "cli/cli.h"
#include "config/cfg.h"
#include "config/engver.h"
#include "config/settings.h"

static const char *kind_text(const setting *s, char *buf, size_t n) {
  switch (s->kind) {
    case SK_U32: snprintf(buf, n, "integer %.10g..%.10g", s->lo, s->hi); break;
    case SK_F64: snprintf(buf, n, "number %s%g..%g", s->lo_open ? "(" : "", s->lo, s->hi); break;
    case SK_TRI:
    case SK_BOOL: snprintf(buf, n, "on/off"); break;
    case SK_CHOICE: snprintf(buf, n, "%s", s->choices); break;
  }
  return buf;
}

static int list_settings(void) {
  printf("Deployment settings: scenario key (\"deployment\": {...}), flag, values, default; 'sweep' marks a grid axis\n"
         "(sweep/capacity: --FLAG A,B,... or \"grid\": {KEY: [...]}). Every output echoes them under the key.\n\n");
  for (size_t i = 0; i < settings_count(); i++) {
    const setting *s = settings_at(i);
    char flag[96], values[96];
    snprintf(flag, sizeof flag, "--%s%s%s", s->flag, s->alias ? ", --" : "", s->alias ? s->alias : "");
    printf("%-30s %-34s %-5s %s\n", s->key, flag, s->use & SET_SWEEP ? "sweep" : "", kind_text(s, values, sizeof values));
    printf("%-30s default: %s\n", "", s->deflt);
  }
  return 0;
}

int cmd_list(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "settings")) {
    if (argc > 2) {
      fprintf(stderr, "servesim list settings: unexpected argument '%s'\n", argv[2]);
      return 2;
    }
    return list_settings();
  }
  bool help = false;
  cli_opt opts[] = {{"help", "h", CLI_FLAG, &help, NULL, "show this help", NULL},
                    {NULL, NULL, 0, NULL, NULL, NULL, NULL}};
  int rc = cli_start("list", "servesim list [settings]", "Lists the names usable with --model, --gpu (and the MIG slices --gpu GPU:PROFILE), --engine,\n"
                     "--scenario, --profile and capacity --instances, and the engine version facts that --engine\n"
                     "NAME@VERSION applies (what changed in which release, and the source).\n"
                     "`servesim list settings` lists the deployment settings: key, flag, values, default, sweepable.",
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
  printf("settings   every deployment setting: servesim list settings\n");
  printf("\nengine version facts (--engine NAME@VERSION; configs/README.md, Engine versions):\n");
  engver_print(stdout);
  return 0;
}
