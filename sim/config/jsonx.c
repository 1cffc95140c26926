/* jsonx.c: strict JSON reading shared by the config, scenario and grid
 * readers (see jsonx.h).
 *
 * Invariant: a jx with a root holds a tree cJSON built from j->text, so a
 * pre-order walk of the tree meets values in text order; the line walker
 * below relies on it and gives up (line 0) if the text does not match. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE (Linux; the build defines only _POSIX_C_SOURCE) */
#include "config/jsonx.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the arena of jx_parse_big ------------------------------------------------------------ */

/* cJSON allocates through hooks installed once: from the calling thread's arena while jx_parse_big parses,
 * else malloc; free is a no-op for a pointer inside an arena block (the blocks go at once in jx_free). */
typedef struct jx_block {
  struct jx_block *next;
  size_t size, used; /* bytes, this header included */
} jx_block;
struct jx_arena {
  jx_block *head;
};
static _Thread_local struct jx_arena *cur_arena;

/* A block of whole 2 MiB pages, 2 MiB-aligned and marked for transparent huge pages: one page fault per 2 MiB
 * where the kernel grants them (THP "madvise" or "always"), else ordinary pages. */
static jx_block *block_new(size_t size) {
  const size_t huge = (size_t)2 << 20;
  size = (size + huge - 1) & ~(huge - 1);
  char *m = mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  size_t lead = (huge - (uintptr_t)m % huge) % huge; /* trim to a 2 MiB boundary */
  if (lead) munmap(m, lead);
  if (huge - lead) munmap(m + lead + size, huge - lead);
  m += lead;
  (void)madvise(m, size, MADV_HUGEPAGE);
  jx_block *b = (jx_block *)(void *)m;
  b->next = NULL, b->size = size, b->used = (sizeof *b + 15) & ~(size_t)15;
  return b;
}

static void *hook_malloc(size_t n) {
  struct jx_arena *a = cur_arena;
  if (!a) return malloc(n);
  n = (n + 15) & ~(size_t)15;
  jx_block *b = a->head;
  if (!b || b->size - b->used < n) {
    jx_block *nb = block_new(n + 64 > (size_t)2 << 20 ? n + 64 : (size_t)2 << 20);
    if (!nb) return NULL; /* cJSON reports a failed parse */
    nb->next = b, a->head = nb, b = nb;
  }
  void *p = (char *)b + b->used;
  b->used += n;
  return p;
}

static bool in_arena(const struct jx_arena *a, const void *p) {
  for (const jx_block *b = a ? a->head : NULL; b; b = b->next)
    if ((const char *)p >= (const char *)b && (const char *)p < (const char *)b + b->size) return true;
  return false;
}

static void hook_free(void *p) {
  if (p && !in_arena(cur_arena, p)) free(p);
}

static void hooks_install(void) {
  cJSON_Hooks h = {hook_malloc, hook_free};
  cJSON_InitHooks(&h);
}

static void jx_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, hooks_install);
}

int jx_parse_big(jx *j, const char *text, const char *what, sim_err *err) {
  /* below a few hundred kilobytes the heap is cheaper than a fresh 2 MiB block (a user's small profile, the
     fuzzer's inputs); above, the first block is sized for the whole tree (about ten bytes of nodes per byte of
     text), so one or two huge pages hold it */
  size_t len = strlen(text);
  if (len < ((size_t)256 << 10)) return jx_parse(j, text, what, err);
  jx_init();
  struct jx_arena *a = sim_calloc(1, sizeof *a);
  a->head = block_new(12 * len);
  cur_arena = a;
  int rc = jx_parse(j, text, what, err); /* a failed parse frees its nodes into the arena: no-ops */
  cur_arena = NULL;
  j->arena = a;
  if (rc) jx_free(j);
  return rc;
}

int jx_parse(jx *j, const char *text, const char *what, sim_err *err) {
  jx_init();
  j->text = text;
  j->what = what;
  j->err = err;
  j->root = NULL;
  j->arena = NULL;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, strlen(text) + 1, &end, 1);
  if (!root) {
    int line = 1, col = 1;
    const char *stop = end ? end : text;
    for (const char *s = text; *s && s < stop; s++) {
      if (*s == '\n') line++, col = 1;
      else col++;
    }
    return sim_errf(err, SIM_EINPUT, "%s:%d:%d: invalid JSON", what, line, col);
  }
  if (!cJSON_IsObject(root)) {
    int rc = sim_errf(err, SIM_EINPUT, "%s: (top level): expected a JSON object, got %s", what, jx_type_name(root));
    cJSON_Delete(root);
    return rc;
  }
  j->root = root;
  return SIM_OK;
}

void jx_free(jx *j) {
  if (j->arena) {
    for (jx_block *b = j->arena->head, *nx; b; b = nx) nx = b->next, munmap(b, b->size);
    free(j->arena);
    j->arena = NULL;
  } else {
    cJSON_Delete(j->root);
  }
  j->root = NULL;
}

const char *jx_type_name(const cJSON *v) {
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsObject(v)) return "an object";
  return "an invalid value";
}

/* ---- positions: the text walked alongside the tree ------------------------ */

typedef struct walk {
  const char *text, *p; /* the text, the cursor */
  int line;             /* line at p */
  const cJSON *target;
  int found_line;       /* the target's line, 0 until found */
  size_t begin, end;    /* the target value's byte span */
  bool broken;          /* the text did not match the tree */
} walk;

static void ws(walk *w) {
  for (;; w->p++) {
    char c = *w->p;
    if (c == '\n') w->line++;
    else if (c != ' ' && c != '\t' && c != '\r') return;
  }
}

static void skip_string(walk *w) { /* at the opening quote */
  const char *p = w->p + 1;
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1]) p++;
    if (*p == '\n') w->line++;
  }
  w->p = *p ? p + 1 : p;
}

/* Walks node's value at the cursor; key_line is the line of its key (0 for
 * an array element or the root). Returns false to stop: target found or the
 * text does not match. O(size of the text before the target). */
static bool walk_value(walk *w, const cJSON *node, int key_line) {
  ws(w);
  const char *begin = w->p;
  if (node == w->target) w->found_line = key_line ? key_line : w->line;
  if (cJSON_IsObject(node) || cJSON_IsArray(node)) {
    bool obj = cJSON_IsObject(node);
    if (*w->p != (obj ? '{' : '[')) return !(w->broken = true);
    w->p++;
    for (const cJSON *c = node->child; c; c = c->next) {
      int kl = 0;
      ws(w);
      if (obj) {
        if (*w->p != '"') return !(w->broken = true);
        kl = w->line;
        skip_string(w);
        ws(w);
        if (*w->p != ':') return !(w->broken = true);
        w->p++;
      }
      if (!walk_value(w, c, kl)) return false;
      ws(w);
      if (*w->p == ',') w->p++;
    }
    ws(w);
    if (*w->p != (obj ? '}' : ']')) return !(w->broken = true);
    w->p++;
  } else if (cJSON_IsString(node)) {
    if (*w->p != '"') return !(w->broken = true);
    skip_string(w);
  } else { /* number, true, false, null */
    while (*w->p && !strchr(",]} \t\r\n", *w->p)) w->p++;
  }
  if (node != w->target) return true;
  w->begin = (size_t)(begin - w->text);
  w->end = (size_t)(w->p - w->text);
  return false;
}

static bool find(const jx *j, const cJSON *at, walk *w) {
  *w = (walk){j->text, j->text, 1, at, 0, 0, 0, false};
  if (!at || !j->root || !j->text) return false;
  walk_value(w, j->root, 0);
  return !w->broken && w->found_line > 0;
}

int jx_line(const jx *j, const cJSON *at) {
  walk w;
  return find(j, at, &w) ? w.found_line : 0;
}

bool jx_span(const jx *j, const cJSON *at, size_t *begin, size_t *end) {
  walk w;
  if (!find(j, at, &w)) return false;
  *begin = w.begin;
  *end = w.end;
  return true;
}

void jx_where(const jx *j, const cJSON *at, const char *path, char *buf, size_t n) {
  int line = jx_line(j, at);
  if (line) snprintf(buf, n, "%s:%d: %s", j->what, line, path);
  else snprintf(buf, n, "%s: %s", j->what, path);
}

int jx_fail(const jx *j, const cJSON *at, const char *where, const char *key, const char *fmt, ...) {
  char msg[768], loc[24] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = jx_line(j, at);
  if (line) snprintf(loc, sizeof loc, ":%d", line);
  if (!where && !key) return sim_errf(j->err, SIM_EINPUT, "%s%s: %s", j->what, loc, msg);
  return sim_errf(j->err, SIM_EINPUT, "%s%s: %s%s%s: %s", j->what, loc, where ? where : "", where && key ? "." : "",
                  key ? key : "", msg);
}

/* ---- keys and typed values -------------------------------------------------- */

int jx_keys(const jx *j, const cJSON *obj, const char *where, const char *const *known, const cJSON **found) {
  size_t n = 0;
  while (known[n]) n++;
  if (found)
    for (size_t i = 0; i < n; i++) found[i] = NULL;
  for (const cJSON *it = obj->child; it; it = it->next) {
    size_t i = 0;
    while (i < n && strcmp(known[i], it->string) != 0) i++;
    if (i == n) {
      char list[640] = "";
      size_t len = 0;
      for (size_t k = 0; k < n && len + 2 < sizeof list; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", known[k]);
      return jx_fail(j, it, where, it->string, "unknown key (known keys: %s)", list);
    }
    for (const cJSON *prev = obj->child; prev != it; prev = prev->next)
      if (!strcmp(prev->string, it->string)) return jx_fail(j, it, where, it->string, "given twice");
    if (found) found[i] = it;
  }
  return SIM_OK;
}

static const cJSON *member(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static bool in_range(double x, double lo, double hi, unsigned flags) {
  return ((flags & JX_GT) ? x > lo : x >= lo) && x <= hi;
}

static int range_fail(const jx *j, const cJSON *v, const char *where, const char *key, double x, double lo, double hi,
                      unsigned flags) {
  bool gt = flags & JX_GT;
  if (isinf(hi)) return jx_fail(j, v, where, key, gt ? "must be > %g, got %g" : "must be >= %g, got %g", lo, x);
  if (isinf(lo)) return jx_fail(j, v, where, key, "must be <= %g, got %g", hi, x);
  return jx_fail(j, v, where, key, "must be in %c%g, %g], got %g", gt ? '(' : '[', lo, hi, x);
}

int jx_str(const jx *j, const cJSON *obj, const char *where, const char *key, char *dst, size_t n) {
  const cJSON *v = member(obj, key);
  if (!v) return SIM_OK;
  if (!cJSON_IsString(v)) return jx_fail(j, v, where, key, "expected a string, got %s", jx_type_name(v));
  size_t len = strlen(v->valuestring);
  if (len == 0) return jx_fail(j, v, where, key, "must not be empty");
  if (len >= n) return jx_fail(j, v, where, key, "longer than %zu characters", n - 1);
  memcpy(dst, v->valuestring, len + 1);
  return SIM_OK;
}

int jx_num(const jx *j, const cJSON *obj, const char *where, const char *key, double *dst, double lo, double hi,
           unsigned flags) {
  const cJSON *v = member(obj, key);
  if (!v) return SIM_OK;
  bool inf_ok = flags & JX_INF;
  double x;
  if (inf_ok && cJSON_IsString(v) && !strcmp(v->valuestring, "inf")) x = INFINITY;
  else if (cJSON_IsNumber(v)) x = v->valuedouble;
  else return jx_fail(j, v, where, key, "expected a number%s, got %s", inf_ok ? " or \"inf\"" : "", jx_type_name(v));
  if (!(inf_ok && x == INFINITY)) {
    if (!isfinite(x)) return jx_fail(j, v, where, key, "must be finite");
    if (!in_range(x, lo, hi, flags)) return range_fail(j, v, where, key, x, lo, hi, flags);
  }
  *dst = x;
  return SIM_OK;
}

int jx_u32(const jx *j, const cJSON *obj, const char *where, const char *key, uint32_t *dst, double lo, double hi,
           unsigned flags) {
  const cJSON *v = member(obj, key);
  if (!v) return SIM_OK;
  if (!cJSON_IsNumber(v)) return jx_fail(j, v, where, key, "expected an integer, got %s", jx_type_name(v));
  double x = v->valuedouble;
  if (!isfinite(x) || x != floor(x)) return jx_fail(j, v, where, key, "expected an integer, got %g", x);
  if (!in_range(x, lo, hi, flags)) return range_fail(j, v, where, key, x, lo, hi, flags);
  if (x < 0 || x > (double)UINT32_MAX) return jx_fail(j, v, where, key, "must be in [0, %u], got %g", UINT32_MAX, x);
  *dst = (uint32_t)x;
  return SIM_OK;
}

int jx_bool(const jx *j, const cJSON *obj, const char *where, const char *key, bool *dst) {
  const cJSON *v = member(obj, key);
  if (!v) return SIM_OK;
  if (!cJSON_IsBool(v)) return jx_fail(j, v, where, key, "expected a boolean (true or false), got %s", jx_type_name(v));
  *dst = cJSON_IsTrue(v);
  return SIM_OK;
}

int jx_obj(const jx *j, const cJSON *obj, const char *where, const char *key, const cJSON **dst) {
  const cJSON *v = member(obj, key);
  *dst = NULL;
  if (!v) return SIM_OK;
  if (!cJSON_IsObject(v)) return jx_fail(j, v, where, key, "expected an object, got %s", jx_type_name(v));
  *dst = v;
  return SIM_OK;
}

int jx_arr(const jx *j, const cJSON *obj, const char *where, const char *key, const cJSON **dst) {
  const cJSON *v = member(obj, key);
  *dst = NULL;
  if (!v) return SIM_OK;
  if (!cJSON_IsArray(v)) return jx_fail(j, v, where, key, "expected an array, got %s", jx_type_name(v));
  *dst = v;
  return SIM_OK;
}
