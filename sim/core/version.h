/* version.h: ordering release version strings ("0.14.0", "1.3.0rc20",
 * "0.14.1.dev1+gd68209402"), for choosing among engine versions (the
 * kernel-db import, --profile auto).
 *
 * A version is dot-separated numeric components, then optionally a
 * pre-release tag (a, b, rc + a number), a post-release (.postN) and a
 * development release (.devN), and a local part after '+' (ignored): PEP
 * 440's forms, as Python packages (vLLM, SGLang, TensorRT-LLM) are versioned.
 * Order: the numeric components first (missing ones count as 0: "1.0" ==
 * "1.0.0"), then the pre-release (1.0.dev1 < 1.0a1 < 1.0b1 < 1.0rc1 <
 * 1.0), then the post-release, then the development release:
 * 1.2.0rc6 < 1.2.0rc6.post1 < 1.2.0 < 1.2.0.post1.dev2 < 1.2.0.post1. Strings that are
 * not versions (no leading digit) sort before every version, among
 * themselves by strcmp. Pure functions, no allocation. */
#ifndef SIM_VERSION_H
#define SIM_VERSION_H

#include <stdbool.h>

/* <0, 0, >0 as a is older than, as old as, newer than b. */
int version_cmp(const char *a, const char *b);
/* True when s starts like a version (a digit). */
bool version_valid(const char *s);

#endif
