/* version.h: ordering release version strings ("0.14.0", "1.3.0rc20",
 * "0.14.1.dev1+gd68209402"), for choosing among engine versions (the
 * kernel-db import, --profile auto).
 *
 * A version is dot-separated numeric components, the last of which may carry
 * a pre- or post-release tag (rc, b, a, dev, post + a number) and a local
 * part after '+' (ignored). Order: the numeric components first (missing ones
 * count as 0: "1.0" == "1.0.0"), then dev < a < b < rc < release < post,
 * then the tag's number: 1.3.0rc20 < 1.3.0 < 1.3.0.post1. Strings that are
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
