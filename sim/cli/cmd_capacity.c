/* cmd_capacity.c: placeholder until the planning work lands. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_capacity(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim capacity: not available in this build yet\n");
  return 1;
}
