/* test_traces.c: the traces the project ships are reproducible: running
#define _DEFAULT_SOURCE
 * scripts/make_traces.sh again gives byte-identical files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

Test(traces, bundled_chat_trace_regenerates_byte_identical) {
  const char *dir = tu_tmpdir(); /* removed with its files when the test exits */
  cr_assert(dir != NULL);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && SERVESIM='%s' TRACES_OUT_DIR='%s' ./scripts/make_traces.sh", SERVESIM_SOURCE_DIR,
           SERVESIM_BIN, dir);
  cr_assert_eq(system(cmd), 0);
  char path[512];
  snprintf(path, sizeof path, "%s/chat_default.csv", dir);
  size_t la, lb;
  char *a = tu_slurp(path, &la), *b = tu_slurp(tu_src("traces/chat_default.csv"), &lb);
  cr_assert(a && b);
  cr_assert_eq(la, lb);
  cr_assert(memcmp(a, b, la) == 0, "traces/chat_default.csv differs from what scripts/make_traces.sh generates");
  free(a);
  free(b);
}
