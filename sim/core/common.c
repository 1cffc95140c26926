/* common.c: errors, checked allocation, file reading, strict number parsing. */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE (Linux; the build defines only _POSIX_C_SOURCE) */
#include "core/common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/embed.h"

int sim_errf(sim_err *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

int sim_err_prefix(sim_err *err, const char *fmt, ...) {
  if (!err) return SIM_EINTERNAL;
  char pre[512], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  size_t np = strlen(pre);
  if (np + 2 >= sizeof err->msg) np = sizeof err->msg - 3;
  memcpy(err->msg, pre, np);
  memcpy(err->msg + np, ": ", 2);
  size_t room = sizeof err->msg - np - 3, no = strlen(old);
  if (no > room) no = room;
  memcpy(err->msg + np + 2, old, no);
  err->msg[np + 2 + no] = 0;
  return err->code;
}

void sim_append_line(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 2 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n - 1, fmt, ap);
  va_end(ap);
  n = strlen(buf);
  if (n + 1 < cap) {
    buf[n] = '\n';
    buf[n + 1] = 0;
  }
}

void sim_append_note(char *buf, size_t cap, const char *fmt, ...) {
  size_t k = strlen(buf);
  if (k && k + 2 < cap) memcpy(buf + k, "; ", 3), k += 2;
  if (k + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + k, cap - k, fmt, ap);
  va_end(ap);
}

void sim_assert_fail(const char *expr, const char *file, int line) {
  fprintf(stderr, "servesim: internal error: assertion `%s` failed at %s:%d\n", expr, file, line);
  abort();
}

static void oom(size_t n) {
  fprintf(stderr, "servesim: internal error: out of memory allocating %zu bytes\n", n);
  abort();
}

void *sim_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom(n);
  return p;
}

void *sim_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom(n * size);
  return p;
}

/* From this size on an array goes to huge pages: zeroing a 2 MiB page at its one fault costs less than the 64
 * faults of 256 KiB in 4 KiB pages on this project's virtual machines (all three [speed] cases ran 1.25x-1.30x
 * the time with every block in 4 KiB pages: docs/PERFORMANCE.md) */
#define HUGE_FROM ((size_t)256 << 10)

void *sim_malloc_huge(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  if (bytes < HUGE_FROM) return sim_malloc(bytes);
  bytes = (bytes + huge - 1) & ~(huge - 1); /* whole huge pages */
  void *p = NULL;
  if (posix_memalign(&p, huge, bytes)) oom(bytes);
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void *sim_calloc_huge(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) oom(SIZE_MAX);
  size_t bytes = n * size;
  if (bytes < HUGE_FROM) return sim_calloc(n, size);
  void *p = sim_malloc_huge(bytes);
  memset(p, 0, bytes);
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int sim_cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

void sim_sort_doubles(double *v, size_t n) {
  if (n > 1) qsort(v, n, sizeof *v, cmp_double);
}

void *sim_realloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) oom(n);
  return q;
}

/* LSD radix sort on 64-bit keys, 8 bits per pass; passes whose byte is the
 * same for every key are skipped. O(n), stable; used instead of qsort, which
 * dominated the summary of million-request runs. */
void sim_radix_sort_u64(uint64_t *key, uint64_t *tmp_key, void *val, void *tmp_val, size_t val_size, size_t n) {
  size_t count[256];
  for (int shift = 0; shift < 64; shift += 8) {
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) count[(key[i] >> shift) & 0xff]++;
    if (n == 0 || count[(key[0] >> shift) & 0xff] == n) continue;
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
      size_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) {
      size_t dst = count[(key[i] >> shift) & 0xff]++;
      tmp_key[dst] = key[i];
      if (val) memcpy((char *)tmp_val + dst * val_size, (char *)val + i * val_size, val_size);
    }
    memcpy(key, tmp_key, n * sizeof *key);
    if (val) memcpy(val, tmp_val, n * val_size);
  }
}

char *sim_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = sim_malloc(n);
  memcpy(d, s, n);
  return d;
}

void sim_grow(void **pp, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  if (c * elem >= HUGE_FROM && *cap * elem < HUGE_FROM) { /* an array turning large (a run's step times, its time
                                                              series): into huge pages, once; later growths
                                                              realloc (mremap: no copy, no second block at the
                                                              peak), the mapping's huge-page flag kept */
    void *q = sim_malloc_huge(c * elem);
    if (*cap) memcpy(q, *pp, *cap * elem);
    free(*pp);
    *pp = q;
  } else {
    *pp = sim_realloc(*pp, c * elem);
  }
  *cap = c;
}

const sim_embedded_file *sim_embed_find(const char *path) {
  for (const sim_embedded_file *f = sim_embedded_files; f->path; f++)
    if (strcmp(f->path, path) == 0) return f;
  return NULL;
}

const sim_embedded_file *sim_image_find(const char *path) {
  for (const sim_embedded_file *f = sim_profile_images; f->path; f++)
    if (strcmp(f->path, path) == 0) return f;
  return NULL;
}

int sim_read_file(const char *path, char **out, size_t *len, sim_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    const sim_embedded_file *ef = sim_embed_find(path);
    if (ef) {
      *out = sim_malloc(ef->len + 1);
      memcpy(*out, ef->data, ef->len + 1);
      if (len) *len = ef->len;
      return SIM_OK;
    }
    return sim_errf(err, SIM_EINPUT, "%s: cannot open: %s", path, strerror(e));
  }
  /* endless or binary inputs (/dev/zero, a disk image) are refused as soon as they show themselves: a line
     longer than SIM_MAX_LINE_BYTES, or more than the size limit (SERVESIM_MAX_INPUT_GIB, default 4) */
  double gib = 4.0;
  const char *env = getenv("SERVESIM_MAX_INPUT_GIB");
  if (env && *env) {
    char *end;
    double v = strtod(env, &end);
    if (*end || !(v > 0) || v > 1e6) {
      fclose(f);
      return sim_errf(err, SIM_EINPUT, "SERVESIM_MAX_INPUT_GIB: expected a number of GiB in (0, 1e6], got '%s'", env);
    }
    gib = v;
  }
  double limit = gib * 1073741824.0;
  size_t cap = 1 << 16, n = 0, line_start = 0;
  struct stat st; /* a regular file's size known: one buffer of it (+1 for the read that meets its end) */
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (double)st.st_size <= limit)
    cap = (size_t)st.st_size + 2;
  char *buf = sim_malloc_huge(cap); /* a large file: a few huge pages rather than a page fault per 4 KiB */
  int rc = SIM_OK;
  for (;;) {
    if (cap - n < 2) {
      cap *= 2;
      buf = sim_realloc(buf, cap);
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    for (size_t k = n + r; k > n; k--) /* the last line break of what came in */
      if (buf[k - 1] == '\n') {
        line_start = k;
        break;
      }
    n += r;
    if (n - line_start > SIM_MAX_LINE_BYTES) {
      rc = sim_errf(err, SIM_EINPUT, "%s: more than %d MiB without a line break: not a text file servesim reads",
                    path, SIM_MAX_LINE_BYTES >> 20);
      break;
    }
    if ((double)n > limit) {
      rc = sim_errf(err, SIM_EINPUT, "%s: larger than %g GiB, the input size limit (set SERVESIM_MAX_INPUT_GIB to "
                    "raise it)", path, gib);
      break;
    }
    if (r == 0) break;
  }
  if (rc) {
    fclose(f);
    free(buf);
    return rc;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return sim_errf(err, SIM_EINPUT, "%s: read error", path);
  }
  buf[n] = 0;
  *out = buf;
  if (len) *len = n;
  return SIM_OK;
}

bool sim_parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

bool sim_parse_double(const char *s, double *out) {
  if (!s || !*s || *s == ' ') return false;
  if (strcmp(s, "inf") == 0 || strcmp(s, "Inf") == 0) {
    *out = INFINITY;
    return true;
  }
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool sim_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool sim_is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
