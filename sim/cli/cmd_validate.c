/* cmd_validate.c: placeholder until the fidelity work lands. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_validate(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim validate: not available in this build yet\n");
  return 1;
}
