/* cmd_calibrate.c: placeholder until the calibration work lands. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_calibrate(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "servesim calibrate: not available in this build yet\n");
  return 1;
}
