/* fuzz_common.h: what every libFuzzer target shares: the parser contract
 * (SIM_OK, or an error code with a message; anything else aborts, so the
 * fuzzer reports it) and a NUL-terminated copy of the input (the parsers
 * take text). Built only with -DSERVESIM_FUZZ=ON and clang. */
#ifndef SERVESIM_FUZZ_COMMON_H
#define SERVESIM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* The parser's contract: success, or an input error with its message. */
static inline void fuzz_contract(int rc, const sim_err *err, const char *who) {
  if (rc == SIM_OK) return;
  if (rc != SIM_EINPUT || !err->msg[0]) {
    fprintf(stderr, "%s: rc %d with message '%s': the contract is SIM_OK or SIM_EINPUT with a message\n", who, rc,
            err->msg);
    abort();
  }
}

/* The input as text (owned by the caller). */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *t = malloc(size + 1);
  if (!t) abort();
  memcpy(t, data, size);
  t[size] = 0;
  return t;
}

#endif
