/* jsonx.h: strict reading of servesim's own JSON files (GPU and engine
 * configs, Hugging Face model configs, scenarios, sweep and capacity specs)
 * on top of cJSON. One discipline for all of them:
 *   - the text is exactly one JSON value, an object (nothing after it);
 *   - keys are exact (case-sensitive); an object's keys are checked against
 *     the list its reader knows: unknown or repeated keys are errors;
 *   - every value has its documented type and range.
 *
 * Errors are SIM_EINPUT with "<what>:<line>: <where>.<key>: <problem>":
 * <what> names the file, <line> is the line of the offending key (or array
 * element) in the text, <where> the dotted path of the enclosing object
 * ("deployment", "grid.tensor_parallel_size[1]"), absent at the top level.
 * Parse errors give line and column: "<what>:<line>:<col>: invalid JSON".
 * Lines are found on the error path only, by walking the text alongside the
 * tree (cJSON keeps no positions; it keeps members in text order, so the
 * walk is exact, repeated keys included).
 *
 * Getters take an object, a path and a key: an absent key leaves *dst as it
 * was and returns SIM_OK (optional keys keep their defaults); a present one
 * of the wrong type or out of range fails. JSON null is a wrong type.
 *
 * Ownership: jx_parse fills a caller-owned jx whose tree jx_free releases;
 * the jx borrows the text and the file name, which must outlive it. */
#ifndef SIM_JSONX_H
#define SIM_JSONX_H

#include <cjson/cJSON.h>

#include "core/common.h"

typedef struct jx {
  const char *text; /* the JSON text, NUL-terminated (borrowed) */
  const char *what; /* file name for messages (borrowed) */
  sim_err *err;     /* where errors go */
  cJSON *root;      /* the top-level object (owned; jx_free) */
  struct jx_arena *arena; /* jx_parse_big: the tree's nodes live here and go with it (jx_free), else NULL */
} jx;

/* Range flags of jx_num/jx_u32. */
enum {
  JX_GT = 1u,  /* lo is exclusive: x > lo (default x >= lo) */
  JX_INF = 2u, /* "inf" (a string) or an infinite number is accepted, as +INFINITY, whatever hi is */
};

/* Parses text; the root must be an object. On error j->root is NULL. */
int jx_parse(jx *j, const char *text, const char *what, sim_err *err);
void jx_free(jx *j);
/* jx_parse for a large text (a measured profile of megabytes, tens of thousands of numbers): the tree is built
 * in an arena of 2 MiB-aligned blocks marked for transparent huge pages instead of one malloc per node, and
 * freed at once (texts under 256 KiB: jx_parse). Each page of a fresh heap otherwise costs a page fault,
 * which on a virtual machine dominated the start of a run (5,300 faults, ~80 ms of a 100 ms one-request run,
 * [speed]). The tree must not be edited (no cJSON_Delete or
 * detach of a part of it); jx_free releases it. Thread-safe: the arena is the calling thread's. */
int jx_parse_big(jx *j, const char *text, const char *what, sim_err *err);

/* Fails with "<what>:<line of at>: <where>.<key>: <message>"; where and key
 * may be NULL (then they and their separator are left out), at may be NULL
 * (no line). Returns SIM_EINPUT. */
int jx_fail(const jx *j, const cJSON *at, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* 1-based line of node `at` of j's tree: that of its key for an object
 * member, of its first character otherwise; 0 for NULL or a foreign node. */
int jx_line(const jx *j, const cJSON *at);
/* "<what>:<line>: <path>" (":<line>" left out when unknown), for validators
 * that take a prefix for their messages (warp_check, slo_add_kv). */
void jx_where(const jx *j, const cJSON *at, const char *path, char *buf, size_t n);
/* Byte offsets [*begin, *end) of node at's value in j->text; false when at
 * is not in the tree. */
bool jx_span(const jx *j, const cJSON *at, size_t *begin, size_t *end);
/* "a number", "a string", "an object", ... for "expected X, got Y". */
const char *jx_type_name(const cJSON *v);

/* Checks obj's keys against known[] (NULL-terminated): an unknown key fails
 * with the list of known keys, a key given twice fails. found (optional,
 * one slot per known key) gets each key's member, NULL when absent. */
int jx_keys(const jx *j, const cJSON *obj, const char *where, const char *const *known, const cJSON **found);

/* A non-empty string shorter than n bytes, copied into dst. */
int jx_str(const jx *j, const cJSON *obj, const char *where, const char *key, char *dst, size_t n);
/* A finite number in [lo, hi] ((lo, hi] with JX_GT; "inf" too with JX_INF). */
int jx_num(const jx *j, const cJSON *obj, const char *where, const char *key, double *dst, double lo, double hi,
           unsigned flags);
/* An integer in [lo, hi] ((lo, hi] with JX_GT) that fits a uint32_t. */
int jx_u32(const jx *j, const cJSON *obj, const char *where, const char *key, uint32_t *dst, double lo, double hi,
           unsigned flags);
int jx_bool(const jx *j, const cJSON *obj, const char *where, const char *key, bool *dst);
/* An object / an array: *dst = the member, NULL when absent. */
int jx_obj(const jx *j, const cJSON *obj, const char *where, const char *key, const cJSON **dst);
int jx_arr(const jx *j, const cJSON *obj, const char *where, const char *key, const cJSON **dst);

#endif
