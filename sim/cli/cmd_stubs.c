/* cmd_stubs.c: temporary entry points while the subcommands are written. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_gen_trace(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim gen-trace: not implemented yet\n");
  return 1;
}
int cmd_list(int argc, char **argv) {
  (void)argc, (void)argv;
  return 1;
}
