/* yamlx.c: the strict YAML-subset reader (see yamlx.h for what it accepts).
 *
 * Two passes: the text is cut into content lines (indent, text without the
 * indentation and trailing blanks; blank and comment-only lines dropped),
 * then a recursive descent over those lines builds the tree, one block per
 * indentation level. Invariants of the descent:
 *   - parse_map / parse_seq are entered at a line whose indent is exactly the
 *     block's, and return at the first line with a smaller indent (or, for a
 *     sequence, at a non-item line of its own indent: PyYAML writes a
 *     mapping's sequence value at the key's indent);
 *   - a line indented deeper than the block it is met in, that no `key:` or
 *     `-` opened, is an error;
 *   - each line is consumed exactly once; a `- key: v` line is consumed as a
 *     mapping line whose indent is the key's column (the line is rewritten in
 *     place to say so).
 * Nesting is limited to YX_MAX_DEPTH levels, so the recursion is bounded. */
#include "config/yamlx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YX_MAX_DEPTH 64

typedef struct yline {
  int no;     /* 1-based source line */
  int indent; /* leading spaces (a rewritten `- key:` line: the key's column) */
  char *s;    /* content after the indentation, trailing blanks removed (in the parser's buffer) */
} yline;

typedef struct yparser {
  const char *what;
  sim_err *err;
  char *buf; /* copy of the text, lines NUL-terminated in place */
  yline *l;
  size_t n, cap;
} yparser;

static int perr(yparser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(yparser *p, int line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return sim_errf(p->err, SIM_EINPUT, "%s:%d: %s", p->what, line, msg);
}

static yx_node *node_new(yx_kind kind, int line) {
  yx_node *v = sim_calloc(1, sizeof *v);
  v->kind = kind;
  v->line = line;
  return v;
}

static void node_free(yx_node *v) {
  while (v) {
    yx_node *next = v->next;
    node_free(v->child);
    free(v->key);
    free(v->text);
    free(v);
    v = next;
  }
}

/* ---- pass 1: content lines ------------------------------------------------------ */

static int split_lines(yparser *p, const char *text) {
  p->buf = sim_strdup(text);
  int no = 0;
  for (char *line = p->buf; line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    no++;
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) line[--len] = 0;
    int indent = 0;
    while (line[indent] == ' ') indent++;
    char *s = line + indent;
    if (*s == '\t') return perr(p, no, "a tab in the indentation (YAML indents with spaces)");
    if (*s && *s != '#') {
      if (!strcmp(s, "---") || !strncmp(s, "--- ", 4)) {
        if (p->n) return perr(p, no, "a second document ('---'): one document per file");
        if (s[3]) return perr(p, no, "content after '---': start the document on the next line");
      } else if (!strcmp(s, "...")) {
        return perr(p, no, "a document end marker ('...'): not supported");
      } else {
        SIM_GROW(p->l, p->cap, p->n + 1);
        p->l[p->n++] = (yline){no, indent, s};
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  return SIM_OK;
}

/* ---- scalars ------------------------------------------------------------------------ */

static bool is_seq_item(const char *s) { return s[0] == '-' && (s[1] == ' ' || s[1] == 0); }

/* End of a quoted scalar starting at s (s[0] is the quote): the closing quote,
 * or NULL when it does not close on this line. */
static const char *quote_end(const char *s) {
  char q = s[0];
  for (const char *c = s + 1; *c; c++) {
    if (q == '"' && *c == '\\' && c[1]) {
      c++;
      continue;
    }
    if (*c == q) {
      if (q == '\'' && c[1] == '\'') {
        c++;
        continue;
      }
      return c;
    }
  }
  return NULL;
}

/* The separator of `key: value` / `key:` in s: the ':' followed by a blank or
 * the end, after a quoted key or inside a plain one; NULL when s is not a
 * mapping entry. */
static const char *key_sep(const char *s) {
  const char *c = s;
  if (*s == '"' || *s == '\'') {
    const char *e = quote_end(s);
    if (!e) return NULL;
    c = e + 1;
    while (*c == ' ') c++;
    return *c == ':' && (c[1] == ' ' || c[1] == 0) ? c : NULL;
  }
  for (; *c; c++) {
    if (*c == ' ' && c[1] == '#') return NULL; /* a comment starts: no separator before it */
    if (*c == ':' && (c[1] == ' ' || c[1] == 0)) return c;
  }
  return NULL;
}

/* Unquotes s[0..e] (s[0] and *e are the quotes) into a fresh string. */
static int unquote(yparser *p, int line, const char *s, const char *e, char **out) {
  char *o = sim_malloc((size_t)(e - s) + 1), *w = o;
  for (const char *c = s + 1; c < e; c++) {
    if (s[0] == '\'' && *c == '\'') {
      *w++ = '\'';
      c++;
    } else if (s[0] == '"' && *c == '\\') {
      c++;
      switch (*c) {
      case '"': *w++ = '"'; break;
      case '\\': *w++ = '\\'; break;
      case '/': *w++ = '/'; break;
      case 'n': *w++ = '\n'; break;
      case 't': *w++ = '\t'; break;
      default:
        free(o);
        return perr(p, line, "escape '\\%c' in a double-quoted string: not supported (\\\" \\\\ \\/ \\n \\t are)", *c);
      }
    } else {
      *w++ = *c;
    }
  }
  *w = 0;
  *out = o;
  return SIM_OK;
}

/* A value written on the line of its key or dash: a scalar, null, [] or {}. */
static int parse_value(yparser *p, int line, const char *s, yx_node **out) {
  *out = NULL;
  if (*s == '#' || !*s) {
    *out = node_new(YX_NULL, line);
    return SIM_OK;
  }
  if (*s == '"' || *s == '\'') {
    const char *e = quote_end(s);
    if (!e) return perr(p, line, "a quoted string that does not close on its line");
    const char *t = e + 1;
    while (*t == ' ') t++;
    if (*t && *t != '#') return perr(p, line, "'%s' after a quoted string", t);
    yx_node *v = node_new(YX_SCALAR, line);
    v->quoted = true;
    int rc = unquote(p, line, s, e, &v->text);
    if (rc) {
      free(v);
      return rc;
    }
    *out = v;
    return SIM_OK;
  }
  if (strchr("&*!|>%@`", *s))
    return perr(p, line, "'%c' (anchor, alias, tag, block scalar or reserved): not supported", *s);
  if (is_seq_item(s)) return perr(p, line, "a sequence cannot start on the line of a key");
  size_t len = strlen(s);
  const char *hash = strstr(s, " #");
  if (hash) len = (size_t)(hash - s);
  while (len && s[len - 1] == ' ') len--;
  if (*s == '[' || *s == '{') {
    if (len == 2 && s[1] == (*s == '[' ? ']' : '}')) {
      *out = node_new(*s == '[' ? YX_SEQ : YX_MAP, line);
      return SIM_OK;
    }
    return perr(p, line, "a flow collection ('%.*s'): only the empty [] and {} are supported", (int)len, s);
  }
  for (size_t k = 0; k + 1 < len; k++)
    if (s[k] == ':' && s[k + 1] == ' ') return perr(p, line, "': ' inside a plain value (quote it)");
  if ((len == 4 && (!strncmp(s, "null", 4) || !strncmp(s, "Null", 4) || !strncmp(s, "NULL", 4))) ||
      (len == 1 && *s == '~')) {
    *out = node_new(YX_NULL, line);
    return SIM_OK;
  }
  yx_node *v = node_new(YX_SCALAR, line);
  v->text = sim_malloc(len + 1);
  memcpy(v->text, s, len);
  v->text[len] = 0;
  *out = v;
  return SIM_OK;
}

/* ---- pass 2: blocks --------------------------------------------------------------- */

static int parse_block(yparser *p, size_t *i, int indent, int depth, yx_node **out);

static int parse_map(yparser *p, size_t *i, int indent, int depth, yx_node **out) {
  yx_node *m = node_new(YX_MAP, p->l[*i].no), **tail = &m->child;
  int rc = SIM_OK;
  *out = m;
  while (*i < p->n && !rc) {
    yline *L = &p->l[*i];
    if (L->indent < indent) break;
    if (L->indent > indent) return perr(p, L->no, "unexpected indentation (%d spaces; this block has %d)", L->indent, indent);
    if (is_seq_item(L->s)) return perr(p, L->no, "a sequence item where a mapping key was expected");
    const char *sep = key_sep(L->s);
    if (!sep) return perr(p, L->no, "expected 'key: value', got '%s'", L->s);
    char *key;
    if (*L->s == '"' || *L->s == '\'') {
      if ((rc = unquote(p, L->no, L->s, quote_end(L->s), &key))) return rc;
    } else {
      size_t kl = (size_t)(sep - L->s);
      while (kl && L->s[kl - 1] == ' ') kl--;
      key = sim_malloc(kl + 1);
      memcpy(key, L->s, kl);
      key[kl] = 0;
    }
    if (!key[0]) {
      free(key);
      return perr(p, L->no, "an empty key");
    }
    for (const yx_node *o = m->child; o; o = o->next)
      if (!strcmp(o->key, key)) {
        rc = perr(p, L->no, "%s: given twice (first on line %d)", key, o->line);
        free(key);
        return rc;
      }
    const char *rest = sep + 1;
    while (*rest == ' ') rest++;
    int key_line = L->no;
    (*i)++;
    yx_node *v = NULL;
    if (*rest && *rest != '#') rc = parse_value(p, key_line, rest, &v);
    else if (*i < p->n && p->l[*i].indent > indent) rc = parse_block(p, i, p->l[*i].indent, depth + 1, &v);
    else if (*i < p->n && p->l[*i].indent == indent && is_seq_item(p->l[*i].s))
      rc = parse_block(p, i, indent, depth + 1, &v);
    else v = node_new(YX_NULL, key_line);
    if (!v) {
      free(key);
      return rc;
    }
    v->key = key;
    v->line = key_line;
    *tail = v;
    tail = &v->next;
    m->n++;
  }
  return rc;
}

static int parse_seq(yparser *p, size_t *i, int indent, int depth, yx_node **out) {
  yx_node *q = node_new(YX_SEQ, p->l[*i].no), **tail = &q->child;
  int rc = SIM_OK;
  *out = q;
  while (*i < p->n && !rc) {
    yline *L = &p->l[*i];
    if (L->indent < indent) break;
    if (L->indent > indent) return perr(p, L->no, "unexpected indentation (%d spaces; this block has %d)", L->indent, indent);
    if (!is_seq_item(L->s)) break; /* the next key of the mapping this sequence is a value of */
    char *r = L->s + 1;
    int off = 1;
    while (*r == ' ') r++, off++;
    yx_node *v = NULL;
    if (!*r) {
      (*i)++;
      if (*i < p->n && p->l[*i].indent > indent) rc = parse_block(p, i, p->l[*i].indent, depth + 1, &v);
      else v = node_new(YX_NULL, L->no);
    } else if (is_seq_item(r) || key_sep(r)) {
      L->indent = indent + off; /* `- key: v`: a mapping (or sequence) line at the item's column */
      L->s = r;
      rc = parse_block(p, i, L->indent, depth + 1, &v);
    } else {
      (*i)++;
      rc = parse_value(p, L->no, r, &v);
    }
    if (!v) return rc;
    *tail = v;
    tail = &v->next;
    q->n++;
  }
  return rc;
}

static int parse_block(yparser *p, size_t *i, int indent, int depth, yx_node **out) {
  *out = NULL;
  if (depth > YX_MAX_DEPTH) return perr(p, p->l[*i].no, "nested deeper than %d levels", YX_MAX_DEPTH);
  return is_seq_item(p->l[*i].s) ? parse_seq(p, i, indent, depth, out) : parse_map(p, i, indent, depth, out);
}

int yx_parse(yx_doc *d, const char *text, const char *what, sim_err *err) {
  d->what = what;
  d->err = err;
  d->root = NULL;
  yparser p = {what, err, NULL, NULL, 0, 0};
  int rc = split_lines(&p, text);
  yx_node *root = NULL;
  if (!rc) {
    if (!p.n) {
      root = node_new(YX_NULL, 1);
    } else {
      size_t i = 0;
      rc = parse_block(&p, &i, p.l[0].indent, 0, &root);
      if (!rc && i < p.n) rc = perr(&p, p.l[i].no, "unexpected indentation (%d spaces; the document starts at %d)",
                                    p.l[i].indent, p.l[0].indent);
    }
  }
  free(p.buf);
  free(p.l);
  if (rc) {
    node_free(root);
    return rc;
  }
  d->root = root;
  return SIM_OK;
}

void yx_free(yx_doc *d) {
  node_free(d->root);
  d->root = NULL;
}

/* ---- access ---------------------------------------------------------------------------- */

const yx_node *yx_get(const yx_node *map, const char *key) {
  if (!map || map->kind != YX_MAP) return NULL;
  for (const yx_node *v = map->child; v; v = v->next)
    if (!strcmp(v->key, key)) return v;
  return NULL;
}

const yx_node *yx_item(const yx_node *seq, uint32_t i) {
  if (!seq || seq->kind != YX_SEQ) return NULL;
  const yx_node *v = seq->child;
  while (v && i--) v = v->next;
  return v;
}

bool yx_is_null(const yx_node *v) { return !v || v->kind == YX_NULL; }

const char *yx_describe(const yx_node *v, char *buf, size_t n) {
  if (!v || v->kind == YX_NULL) return "null";
  if (v->kind == YX_MAP) return "a mapping";
  if (v->kind == YX_SEQ) return "a sequence";
  snprintf(buf, n, "'%.60s'%s", v->text, strlen(v->text) > 60 ? "..." : "");
  return buf;
}

int yx_fail(const yx_doc *d, const yx_node *at, const char *path, const char *key, const char *fmt, ...) {
  char msg[640], where[256] = "", line[24] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bool hp = path && *path, hk = key && *key;
  snprintf(where, sizeof where, "%s%s%s%s", hp ? path : "", hp && hk ? "." : "", hk ? key : "", hp || hk ? ": " : "");
  if (at && at->line > 0) snprintf(line, sizeof line, ":%d", at->line);
  return sim_errf(d->err, SIM_EINPUT, "%s%s: %s%s", d->what, line, where, msg);
}

static const char *kind_name(yx_kind k) {
  switch (k) {
  case YX_MAP: return "a mapping";
  case YX_SEQ: return "a sequence";
  case YX_SCALAR: return "a scalar";
  default: return "null";
  }
}

/* The member, present (else "missing", on the mapping's line). */
static int need(const yx_doc *d, const yx_node *map, const char *path, const char *key, const yx_node **out) {
  *out = yx_get(map, key);
  if (!*out) return yx_fail(d, map, path, key, "missing");
  return SIM_OK;
}

int yx_need(const yx_doc *d, const yx_node *map, const char *path, const char *key, yx_kind kind,
            const yx_node **out) {
  const yx_node *v;
  int rc = need(d, map, path, key, &v);
  *out = NULL;
  if (rc) return rc;
  char b[96];
  if (v->kind != kind) return yx_fail(d, v, path, key, "expected %s, got %s", kind_name(kind), yx_describe(v, b, sizeof b));
  *out = v;
  return SIM_OK;
}

/* A plain scalar read as a finite number. */
static int number(const yx_doc *d, const yx_node *map, const char *path, const char *key, const char *what_num,
                  double *x, const yx_node **at) {
  int rc = need(d, map, path, key, at);
  if (rc) return rc;
  char b[96];
  const yx_node *v = *at;
  if (v->kind != YX_SCALAR || v->quoted || !sim_parse_double(v->text, x) || !isfinite(*x))
    return yx_fail(d, v, path, key, "expected %s, got %s%s", what_num, v->quoted ? "the string " : "",
                   yx_describe(v, b, sizeof b));
  return SIM_OK;
}

int yx_need_num(const yx_doc *d, const yx_node *map, const char *path, const char *key, double lo, double hi,
                double *out) {
  const yx_node *v;
  double x;
  int rc = number(d, map, path, key, "a number", &x, &v);
  if (rc) return rc;
  if (x < lo || x > hi) return yx_fail(d, v, path, key, "must be in [%g, %g], got %g", lo, hi, x);
  *out = x;
  return SIM_OK;
}

int yx_need_u32(const yx_doc *d, const yx_node *map, const char *path, const char *key, uint32_t lo, uint32_t hi,
                uint32_t *out) {
  const yx_node *v;
  double x;
  int rc = number(d, map, path, key, "an integer", &x, &v);
  if (rc) return rc;
  if (x != floor(x)) return yx_fail(d, v, path, key, "expected an integer, got %g", x);
  if (x < lo || x > hi) return yx_fail(d, v, path, key, "must be in [%u, %u], got %g", lo, hi, x);
  *out = (uint32_t)x;
  return SIM_OK;
}

int yx_need_bool(const yx_doc *d, const yx_node *map, const char *path, const char *key, bool *out) {
  const yx_node *v;
  int rc = need(d, map, path, key, &v);
  if (rc) return rc;
  static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False", "FALSE"};
  for (int k = 0; k < 3 && v->kind == YX_SCALAR && !v->quoted; k++)
    if (!strcmp(v->text, t[k]) || !strcmp(v->text, f[k])) {
      *out = !strcmp(v->text, t[k]);
      return SIM_OK;
    }
  char b[96];
  return yx_fail(d, v, path, key, "expected true or false, got %s", yx_describe(v, b, sizeof b));
}

int yx_need_str(const yx_doc *d, const yx_node *map, const char *path, const char *key, char *dst, size_t n) {
  const yx_node *v;
  int rc = need(d, map, path, key, &v);
  if (rc) return rc;
  char b[96];
  if (v->kind != YX_SCALAR || !v->text[0])
    return yx_fail(d, v, path, key, "expected a non-empty string, got %s", yx_describe(v, b, sizeof b));
  if (strlen(v->text) >= n) return yx_fail(d, v, path, key, "longer than %zu characters", n - 1);
  memcpy(dst, v->text, strlen(v->text) + 1);
  return SIM_OK;
}
