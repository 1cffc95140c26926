/* testutil.h: helpers shared by the Criterion tests. */
#ifndef SIM_TESTUTIL_H
#define SIM_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Runs `servesim <args>` (args is a shell-quoted string), captures stdout and
 * stderr (each truncated to cap-1 bytes, NUL-terminated) and returns the exit
 * status (or -1 if it did not exit normally, e.g. a crash). */
int tu_run_cli(const char *args, char *out, size_t out_cap, char *errout, size_t err_cap);
/* Path of a file under the source tree. */
const char *tu_src(const char *rel); /* static buffer: copy if needed */
/* Path of ../shared/<rel> beside the source tree if it exists, else NULL
 * (tests that need shared data skip when it is absent). */
const char *tu_shared(const char *rel);
/* Writes text to a fresh temp file and returns its path (static buffer rotation of 8). */
const char *tu_tmpfile(const char *suffix, const char *text);
/* Reads a whole file (malloc'd, NUL-terminated) or NULL. */
char *tu_slurp(const char *path, size_t *len);

#endif
