/* cmd_sweep.c: placeholder until the planning work lands. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_sweep(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim sweep: not available in this build yet\n");
  return 1;
}
