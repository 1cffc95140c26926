/* version.c: version ordering (see version.h). */
#include "core/version.h"

#include <ctype.h>
#include <string.h>

enum { MAX_PARTS = 8 };

typedef struct ver {
  long part[MAX_PARTS]; /* numeric components, 0 beyond the given ones */
  int rank;             /* dev 0, a 1, b 2, rc 3, release 4, post 5 */
  long tag_num;         /* the number after the tag */
} ver;

static int tag_rank(const char *s, size_t n) {
  static const struct {
    const char *tag;
    int rank;
  } tags[] = {{"dev", 0}, {"alpha", 1}, {"a", 1}, {"beta", 2}, {"b", 2}, {"rc", 3}, {"c", 3}, {"post", 5}};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (strlen(tags[i].tag) == n && !strncmp(s, tags[i].tag, n)) return tags[i].rank;
  return 1; /* an unknown tag: a pre-release */
}

static void parse(const char *s, ver *v) {
  memset(v, 0, sizeof *v);
  v->rank = 4;
  int k = 0;
  while (*s && *s != '+') {
    if (isdigit((unsigned char)*s)) {
      long x = 0;
      while (isdigit((unsigned char)*s)) x = x * 10 + (*s++ - '0');
      if (k < MAX_PARTS) v->part[k++] = x;
      continue;
    }
    if (*s == '.' || *s == '-' || *s == '_') {
      s++;
      continue;
    }
    const char *t = s;
    while (*s && isalpha((unsigned char)*s)) s++;
    if (s == t) { /* another character: stop */
      break;
    }
    v->rank = tag_rank(t, (size_t)(s - t));
    v->tag_num = 0;
    while (*s == '.' || *s == '-') s++;
    while (isdigit((unsigned char)*s)) v->tag_num = v->tag_num * 10 + (*s++ - '0');
    break; /* the tag ends the comparable part */
  }
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
  return 0;
}
