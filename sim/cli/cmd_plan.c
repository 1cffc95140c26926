/* cmd_plan.c: placeholder until the planning work lands. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_plan(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim plan: not available in this build yet\n");
  return 1;
}
