/* yamlx.h: a small, strict reader for the YAML subset that tools like
 * Kubernetes' inference-perf write (PyYAML's block style): the run configs of
 * the open-loop validation data (sim/validate/vopen.c).
 *
 * Accepted:
 *   - block mappings `key: value` and `key:` followed by a more indented block
 *     (or, as PyYAML writes it, a block sequence at the key's own indentation);
 *   - block sequences `- item`, whose items are scalars, mappings (`- key: v`
 *     continues on the following lines at the key's column) or nested blocks;
 *   - scalars: plain (`5.0`, `http://host:8000`, `meta-llama/Llama-2-7b-hf`),
 *     'single-quoted' ('' is a quote) and "double-quoted" (escapes \" \\ \/
 *     \n \t); null as `null`, `Null`, `NULL`, `~` or nothing; the empty flow
 *     collections `[]` and `{}`;
 *   - comments (`#` at the start of a line or after a blank), blank lines, a
 *     leading `---`.
 * Rejected with the line (SIM_EINPUT, "<what>:<line>: <problem>"): tabs in
 * indentation, indentation that matches no open block, a key given twice,
 * anchors, aliases, tags, block scalars (| >), non-empty flow collections,
 * multi-line plain scalars, `: ` inside a plain value, a second document.
 * Everything a scalar means (number, bool) is decided by the typed getters,
 * never by the parser, so a quoted "5" is a string, as in YAML.
 *
 * Getters take a mapping, the dotted path of that mapping for messages
 * ("load.stages[1]"; NULL or "" at the top) and a key. Errors are SIM_EINPUT
 * with "<what>:<line>: <path>.<key>: <problem>", the line of the offending
 * value, or of the mapping when the key is missing. yx_need_* fail on a
 * missing key; yx_get returns NULL for it.
 *
 * Ownership: yx_parse fills a caller-owned yx_doc whose nodes yx_free
 * releases; the doc borrows `what`, which must outlive it. Complexity: one
 * pass over the lines; a key lookup is O(members). */
#ifndef SIM_YAMLX_H
#define SIM_YAMLX_H

#include "core/common.h"

typedef enum yx_kind { YX_NULL = 0, YX_SCALAR, YX_MAP, YX_SEQ } yx_kind;

typedef struct yx_node {
  yx_kind kind;
  int line;              /* 1-based line where the node starts (a member: its key's line) */
  char *key;             /* member of a mapping: its key (owned); else NULL */
  char *text;            /* SCALAR: the value without quotes (owned); else NULL */
  bool quoted;           /* SCALAR: written in quotes (then never a number, bool or null) */
  uint32_t n;            /* MAP/SEQ: number of members / items */
  struct yx_node *child; /* MAP/SEQ: first member / item (owned) */
  struct yx_node *next;  /* next member / item of the parent (owned by the parent) */
} yx_node;

typedef struct yx_doc {
  const char *what; /* file name for messages (borrowed) */
  sim_err *err;     /* where the getters' errors go */
  yx_node *root;    /* the top-level node: a mapping, a sequence, a scalar or null (owned) */
} yx_doc;

/* Parses text (NUL-terminated). On error d->root is NULL. */
int yx_parse(yx_doc *d, const char *text, const char *what, sim_err *err);
void yx_free(yx_doc *d);

/* Member `key` of a mapping, NULL when absent (or when map is not a mapping). */
const yx_node *yx_get(const yx_node *map, const char *key);
/* Item i of a sequence, NULL past the end. */
const yx_node *yx_item(const yx_node *seq, uint32_t i);
/* Plain null, or no value. */
bool yx_is_null(const yx_node *v);
/* "a mapping", "a sequence", "null", "'text'" for "expected X, got Y" (the
 * scalar's text is quoted into buf). */
const char *yx_describe(const yx_node *v, char *buf, size_t n);

/* Fails with "<what>:<line of at>: <path>.<key>: <message>"; path and key may
 * be NULL or empty (left out with their separator); at may be NULL (no line).
 * Returns SIM_EINPUT. */
int yx_fail(const yx_doc *d, const yx_node *at, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The member, which must be present and of kind `kind` (YX_MAP or YX_SEQ;
 * an empty [] / {} counts). */
int yx_need(const yx_doc *d, const yx_node *map, const char *path, const char *key, yx_kind kind,
            const yx_node **out);
/* A plain scalar that is a finite number in [lo, hi]. */
int yx_need_num(const yx_doc *d, const yx_node *map, const char *path, const char *key, double lo, double hi,
                double *out);
/* A plain integer in [lo, hi] (written without a fraction, or as N.0). */
int yx_need_u32(const yx_doc *d, const yx_node *map, const char *path, const char *key, uint32_t lo, uint32_t hi,
                uint32_t *out);
/* true/false (also True/False/TRUE/FALSE). */
int yx_need_bool(const yx_doc *d, const yx_node *map, const char *path, const char *key, bool *out);
/* A non-empty scalar (plain or quoted) shorter than n bytes, copied into dst. */
int yx_need_str(const yx_doc *d, const yx_node *map, const char *path, const char *key, char *dst, size_t n);

#endif
