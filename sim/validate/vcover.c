/* vcover.c: how much of the measurements servesim answers: rows predicted,
 * failed and skipped, and the skip reasons by count. A reason's figures
 * (parallel sizes, batch sizes, concurrencies) are written N, so that rows
 * skipped for one missing piece count together whatever their numbers. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate.h"

/* reason with every parenthesized part that holds a digit dropped, and every run of digits that stands alone
 * (between spaces, '=', ',', ':' or the ends) written N; model names keep their digits (Qwen3-32B). */
static void reason_key(const char *r, char *out, size_t n) {
  size_t o = 0;
  for (const char *p = r; *p && o + 2 < n;) {
    if (*p == '(') {
      const char *e = strchr(p, ')');
      bool digit = false;
      for (const char *q = p; e && q < e; q++) digit |= isdigit((unsigned char)*q) != 0;
      if (e && digit) {
        p = e + 1;
        if (o && out[o - 1] == ' ' && *p == ' ') p++;
        continue;
      }
    }
    bool start = p == r || strchr(" =,:", p[-1]);
    if (isdigit((unsigned char)*p) && start) {
      const char *q = p;
      while (isdigit((unsigned char)*q) || *q == '.') q++;
      if (!*q || strchr(" ,:;)", *q)) {
        out[o++] = 'N';
        p = q;
        continue;
      }
    }
    out[o++] = *p++;
  }
  out[o] = 0;
}

typedef struct reason_count {
  char key[256];
  size_t n;
  const vpoint *first;
} reason_count;

static int by_count(const void *a, const void *b) {
  const reason_count *x = a, *y = b;
  if (x->n != y->n) return x->n > y->n ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first; /* the first seen first */
}

/* The skip reasons of s by count, most first (caller frees); *n_out gets how many. */
static reason_count *count_reasons(const vset *s, size_t *n_out) {
  reason_count *rc = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (!p->skip[0]) continue;
    char key[256];
    reason_key(p->skip, key, sizeof key);
    size_t k = 0;
    while (k < n && strcmp(rc[k].key, key)) k++;
    if (k == n) {
      SIM_GROW(rc, cap, n + 1);
      memset(&rc[n], 0, sizeof rc[n]);
      memcpy(rc[n].key, key, sizeof key);
      rc[n].first = p;
      n++;
    }
    rc[k].n++;
  }
  if (n) qsort(rc, n, sizeof *rc, by_count);
  *n_out = n;
  return rc;
}

void vcover_counts(const vset *s, size_t *predicted, size_t *failed, size_t *skipped) {
  *predicted = *failed = *skipped = 0;
  for (size_t i = 0; i < s->n; i++) {
    const vpoint *p = &s->pts[i];
    if (p->skip[0]) ++*skipped;
    else if (p->fail[0]) ++*failed;
    else if (p->ran) ++*predicted;
  }
}

void vcover_text(const vset *s, FILE *f) {
  size_t pr, fa, sk, n;
  vcover_counts(s, &pr, &fa, &sk);
  fprintf(f, "coverage: %zu of %zu rows predicted (%.1f%%), %zu failed, %zu skipped%s\n", pr, s->n,
          s->n ? 100.0 * (double)pr / (double)s->n : 0.0, fa, sk, sk ? "; skipped by reason:" : "");
  reason_count *rc = count_reasons(s, &n);
  for (size_t i = 0; i < n; i++) fprintf(f, "  %5zu x %s\n", rc[i].n, rc[i].key);
  free(rc);
}

void vcover_json(const vset *s, jw *j) {
  size_t pr, fa, sk, n;
  vcover_counts(s, &pr, &fa, &sk);
  jw_obj(j, "coverage");
  jw_u64(j, "rows", s->n);
  jw_u64(j, "predicted", pr);
  jw_u64(j, "failed", fa);
  jw_u64(j, "skipped", sk);
  jw_arr(j, "skip_reasons");
  reason_count *rc = count_reasons(s, &n);
  for (size_t i = 0; i < n; i++) {
    jw_obj(j, NULL);
    jw_str(j, "reason", rc[i].key);
    jw_u64(j, "rows", rc[i].n);
    jw_str(j, "example", rc[i].first->id);
    jw_end(j);
  }
  free(rc);
  jw_end(j);
  jw_end(j);
}
