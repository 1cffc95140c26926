/* version.c: version ordering (see version.h). */
#include "core/version.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

enum { MAX_PARTS = 8 };

typedef struct ver {
  long part[MAX_PARTS]; /* numeric components, 0 beyond the given ones */
  int rank;             /* dev-only 0, a 1, b 2, rc 3, release 4 (the pre-release key) */
  long tag_num;         /* the pre-release tag's number */
  long post;            /* the post-release number, -1 = none */
  long dev;             /* the development-release number, LONG_MAX = none */
} ver;

/* A tag's kind: 0 dev, 1 a, 2 b, 3 rc, 5 post. */
static int tag_rank(const char *s, size_t n) {
  static const struct {
    const char *tag;
    int rank;
  } tags[] = {{"dev", 0}, {"alpha", 1}, {"a", 1}, {"beta", 2}, {"b", 2}, {"rc", 3}, {"c", 3}, {"post", 5}};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (strlen(tags[i].tag) == n && !strncmp(s, tags[i].tag, n)) return tags[i].rank;
  return 1; /* an unknown tag: a pre-release */
}

/* PEP 440's order: the release numbers, then the pre-release (a development release of the version itself
 * precedes them all; none = the release), then the post-release, then the development release (before the
 * one it develops): 1.0.dev1 < 1.0a1 < 1.0rc1 < 1.0rc1.post1 < 1.0 < 1.0.post1.dev1 < 1.0.post1. */
static void parse(const char *s, ver *v) {
  memset(v, 0, sizeof *v);
  v->rank = 4;
  v->post = -1;
  v->dev = LONG_MAX;
  bool pre = false;
  int k = 0;
  while (*s && *s != '+') {
    if (isdigit((unsigned char)*s)) {
      long x = 0;
      while (isdigit((unsigned char)*s) && x < LONG_MAX / 10 - 9) x = x * 10 + (*s++ - '0');
      while (isdigit((unsigned char)*s)) s++;
      if (k < MAX_PARTS) v->part[k++] = x;
      continue;
    }
    if (*s == '.' || *s == '-' || *s == '_') {
      s++;
      continue;
    }
    const char *t = s;
    while (*s && isalpha((unsigned char)*s)) s++;
    if (s == t) break; /* another character: stop */
    int r = tag_rank(t, (size_t)(s - t));
    while (*s == '.' || *s == '-') s++;
    long num = 0;
    while (isdigit((unsigned char)*s) && num < LONG_MAX / 10 - 9) num = num * 10 + (*s++ - '0');
    while (isdigit((unsigned char)*s)) s++;
    if (r == 5) {
      v->post = num;
    } else if (r == 0) {
      v->dev = num;
      break; /* a development release ends the comparable part */
    } else if (!pre && v->post < 0) {
      pre = true;
      v->rank = r;
      v->tag_num = num;
    } else {
      break; /* a second pre-release tag: not a version form; the rest is ignored */
    }
    k = MAX_PARTS; /* numbers after a tag belong to tags */
  }
  if (!pre && v->post < 0 && v->dev != LONG_MAX) v->rank = 0; /* 1.0.dev1: before 1.0a1 */
}

bool version_valid(const char *s) { return s && isdigit((unsigned char)s[0]); }

int version_cmp(const char *a, const char *b) {
  bool va = version_valid(a), vb = version_valid(b);
  if (!va || !vb) return va == vb ? strcmp(a ? a : "", b ? b : "") : va ? 1 : -1;
  ver x, y;
  parse(a, &x);
  parse(b, &y);
  for (int i = 0; i < MAX_PARTS; i++)
    if (x.part[i] != y.part[i]) return x.part[i] < y.part[i] ? -1 : 1;
  if (x.rank != y.rank) return x.rank < y.rank ? -1 : 1;
  if (x.tag_num != y.tag_num) return x.tag_num < y.tag_num ? -1 : 1;
  if (x.post != y.post) return x.post < y.post ? -1 : 1;
  if (x.dev != y.dev) return x.dev < y.dev ? -1 : 1;
  return 0;
}
