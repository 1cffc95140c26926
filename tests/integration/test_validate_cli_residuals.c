/* test_validate_cli_residuals.c: the bundled residual file (configs/uncertainty/residuals.json) is what
 * `servesim validate --residuals-out` writes from ../shared/validation, byte for byte (docs/UNCERTAINTY.md).
 * Slow (the whole public set); skipped without ../shared. Its name keeps it in the suite's slow set
 * (ctest -R validate_cli). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char out[1 << 16], err[1 << 16];

Test(validate_cli_residuals, regenerates_the_bundled_file_byte_for_byte, .timeout = 1400) {
  const char *shared = tu_shared("validation");
  if (!shared) cr_skip_test("../shared/validation is absent");
  char root[1024], path[512], args[2048];
  snprintf(root, sizeof root, "%s", shared);
  *strrchr(root, '/') = 0; /* the shared directory: the command the file records names no path */
  setenv("SERVESIM_SHARED_DIR", root, 1);
  snprintf(path, sizeof path, "%s/residuals.json", tu_tmpdir());
  snprintf(args, sizeof args, "validate --no-table --residuals-out %s", path);
  int rc = tu_run_cli(args, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  size_t la, lb;
  char *a = tu_slurp(path, &la), *b = tu_slurp(tu_src("configs/uncertainty/residuals.json"), &lb);
  cr_assert(a && b);
  cr_assert(la == lb && !memcmp(a, b, la),
            "configs/uncertainty/residuals.json differs from what validate writes now: regenerate it "
            "(SERVESIM_SHARED_DIR=../shared servesim validate --residuals-out configs/uncertainty/residuals.json "
            "--force) and say why");
  free(a);
  free(b);
}
