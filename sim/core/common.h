/* common.h: types, units and the two tiers of errors shared by every module.
 *
 * Units: virtual time is integer nanoseconds (sim_ns) everywhere inside the
 * engine; floating seconds or milliseconds appear only at the edges (trace
 * readers, reports). Suffixes name units: _ns, _tokens, _bytes, _blocks.
 *
 * Errors: bugs trip SIM_ASSERT (file:line, abort). Bad user input (configs,
 * traces, flags) and failed external calls return a non-zero code and fill a
 * sim_err with a message that names the file, line or field; only main()
 * prints it and exits (2 for bad input, 1 for internal errors). */
#ifndef SIM_COMMON_H
#define SIM_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_ns; /* virtual time, nanoseconds since the run's t=0 */

#define SIM_NS_PER_S 1000000000ull
#define SIM_NS_PER_MS 1000000ull
#define SIM_NS_PER_US 1000ull
#define SIM_NS_INF UINT64_MAX

/* exit codes / error classes */
enum { SIM_OK = 0, SIM_EINTERNAL = 1, SIM_EINPUT = 2 };

typedef struct sim_err {
  int code;       /* SIM_OK, SIM_EINPUT or SIM_EINTERNAL */
  char msg[1024]; /* "file:line: field: problem" style, no trailing newline */
} sim_err;

/* Sets err (if non-NULL) and returns code. printf-style message. */
int sim_errf(sim_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "prefix: " to an existing message (keeps the code). Returns code. */
int sim_err_prefix(sim_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one line (printf-style, then '\n') to the NUL-terminated text in
 * buf[0..cap); a line that does not fit is cut, nothing is written once the
 * buffer is full. For notes collected along a computation. */
void sim_append_line(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends a note (printf-style) to the NUL-terminated text in buf[0..cap), after "; " when buf is not empty;
 * cut where it does not fit, nothing written once the buffer is full. */
void sim_append_note(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void sim_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));
#define SIM_ASSERT(e) ((e) ? (void)0 : sim_assert_fail(#e, __FILE__, __LINE__))

/* Allocation that aborts with a message on out-of-memory (an internal error:
 * the simulator cannot continue meaningfully). Never returns NULL for n > 0. */
void *sim_malloc(size_t n);
void *sim_calloc(size_t n, size_t size);
/* sim_malloc and sim_calloc for a large array written whole at once (a run's request records, a trace's rows,
 * a file's text): from 256 KiB on, whole 2 MiB pages, aligned and marked for transparent huge pages (madvise;
 * THP "madvise" or "always"), so that filling it takes one page fault per 2 MiB instead of one per 4 KiB (a
 * fault costs microseconds on a virtual machine); freed (or grown) as any other block. sim_grow (SIM_GROW)
 * moves an array that grows past 256 KiB into such pages too. */
void *sim_malloc_huge(size_t bytes);
void *sim_calloc_huge(size_t n, size_t size);
void *sim_realloc(void *p, size_t n);
char *sim_strdup(const char *s);

/* The project's one sort of doubles (ascending; a NaN compares equal to
 * everything, infinities sort last) and one string comparator (qsort over an
 * array of char *). */
int sim_cmp_cstr(const void *a, const void *b);
void sim_sort_doubles(double *v, size_t n);
/* Stable LSD radix sort of n 64-bit keys (8 bits a pass, constant bytes skipped), carrying an optional
 * value of val_size bytes per key; tmp_key (and tmp_val with values) are scratch of n elements. */
void sim_radix_sort_u64(uint64_t *key, uint64_t *tmp_key, void *val, void *tmp_val, size_t val_size, size_t n);

/* Grow a dynamic array *pp of element size `elem` so it holds at least `need`
 * elements; *cap is updated (doubling). */
void sim_grow(void **pp, size_t *cap, size_t need, size_t elem);
/* The capacity test inline: most calls need nothing (an item pushed on a step: one call per request and step
 * was 3% of a 16-replica fleet run). `need` is evaluated twice: no side effects in it. */
#define SIM_GROW(p, cap, need)                                                                                    \
  do {                                                                                                            \
    if ((size_t)(need) > (cap)) sim_grow((void **)&(p), &(cap), (need), sizeof(*(p)));                          \
  } while (0)

/* Read a whole file into a NUL-terminated buffer (caller frees). A path that
 * names an embedded file ("configs/...", "traces/...") that does not exist on
 * disk is served from the binary (see core/embed.h). Refused (SIM_EINPUT,
 * naming the file): more than SIM_MAX_LINE_BYTES without a line break (an
 * endless or binary input such as /dev/zero), or more than the input size
 * limit, 4 GiB unless the environment's SERVESIM_MAX_INPUT_GIB says more. */
enum { SIM_MAX_LINE_BYTES = 64 << 20 };
int sim_read_file(const char *path, char **out, size_t *len, sim_err *err);

/* Strict number parsing for user input: whole string must be consumed. */
bool sim_parse_u64(const char *s, uint64_t *out);
bool sim_parse_double(const char *s, double *out); /* rejects nan; accepts inf only as "inf" */

static inline double sim_ns_to_ms(sim_ns t) { return (double)t / 1e6; }
static inline double sim_ns_to_s(sim_ns t) { return (double)t / 1e9; }
/* seconds -> ns, rounding to nearest; saturates outside [0, 1.8e10) s (negative
 * or NaN -> 0, later -> 1.8e19 ns, still below SIM_NS_INF): the plain
 * conversion of an out-of-range double is undefined (it gave 0 on x86, so a
 * replica "lost at 1e20 s" was lost at t = 0). */
static inline sim_ns sim_s_to_ns(double s) {
  double v = s * 1e9 + 0.5;
  if (!(v >= 1.0)) return 0;
  return v >= 1.8e19 ? (sim_ns)1.8e19 : (sim_ns)v;
}

#define SIM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SIM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SIM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* True when path names an existing directory / regular file (following links). */
bool sim_is_dir(const char *path);
bool sim_is_file(const char *path);

#endif
