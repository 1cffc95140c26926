/* trace_mooncake.c: the Mooncake JSONL reader of trace_read.c (one flat
 * object per line; its invariants and messages are trace_read.c's). */
#include <stdio.h>
#include <string.h>

#include "workload/trace.h"
#include "workload/trace_read_impl.h"

/* ---- Mooncake JSONL: a small parser for one flat object per line ---- */

static const char *js_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
  return p;
}

/* At a '"': the string's content (escapes left as is) and the position after it. */
static bool js_string(const char **pp, const char *e, span *out) {
  const char *p = *pp + 1, *s = p;
  while (p < e && *p != '"') {
    if ((unsigned char)*p < 0x20) return false;
    if (*p == '\\' && e - p < 2) return false;
    p += *p == '\\' ? 2 : 1;
  }
  if (p >= e) return false;
  *out = (span){s, (size_t)(p - s)};
  *pp = p + 1;
  return true;
}

static span js_number(const char **pp, const char *e) {
  const char *p = *pp;
  while (p < e && ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' || *p == 'e' || *p == 'E')) p++;
  span s = {*pp, (size_t)(p - *pp)};
  *pp = p;
  return s;
}

static const char *js_kind(char c) {
  switch (c) {
  case '"': return "a string";
  case '{': return "an object";
  case '[': return "an array";
  case 't':
  case 'f': return "a boolean";
  case 'n': return "null";
  default: return (c == '-' || (c >= '0' && c <= '9')) ? "a number" : "invalid JSON";
  }
}

/* Skips any JSON value (iteratively, nesting up to RD_JSON_DEPTH). */
static bool js_skip(const char **pp, const char *e) {
  char stack[RD_JSON_DEPTH];
  int depth = 0;
  const char *p = *pp;
  for (;;) {
    p = js_ws(p, e);
    if (p >= e) return false;
    /* a value */
    if (*p == '{' || *p == '[') {
      if (depth == RD_JSON_DEPTH) return false;
      char close = *p == '{' ? '}' : ']';
      stack[depth++] = close;
      p = js_ws(p + 1, e);
      if (p < e && *p == close) {
        depth--;
        p++;
      } else {
        if (close == '}') { /* key then ':' */
          span k;
          if (p >= e || *p != '"' || !js_string(&p, e, &k)) return false;
          p = js_ws(p, e);
          if (p >= e || *p != ':') return false;
          p++;
        }
        continue; /* the first member's value */
      }
    } else if (*p == '"') {
      span s;
      if (!js_string(&p, e, &s)) return false;
    } else if (*p == 't' || *p == 'f' || *p == 'n') {
      const char *lit = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
      size_t n = strlen(lit);
      if ((size_t)(e - p) < n || memcmp(p, lit, n) != 0) return false;
      p += n;
    } else {
      uint64_t v;
      if (trd__parse_decimal(js_number(&p, e), 0, UINT64_MAX, &v) == NUM_SYNTAX) return false;
    }
    /* after a value: close containers or move to the next member */
    for (;;) {
      if (depth == 0) {
        *pp = p;
        return true;
      }
      p = js_ws(p, e);
      if (p >= e) return false;
      if (*p == stack[depth - 1]) {
        depth--;
        p++;
        continue;
      }
      if (*p != ',') return false;
      p = js_ws(p + 1, e);
      if (stack[depth - 1] == '}') {
        span k;
        if (p >= e || *p != '"' || !js_string(&p, e, &k)) return false;
        p = js_ws(p, e);
        if (p >= e || *p != ':') return false;
        p++;
      }
      break;
    }
  }
}

static int mc_fail_syntax(rd *r, span line, const char *p, const char *what) {
  return trd__rd_fail(r, NULL, "invalid JSON at byte %zu: %s", (size_t)(p - line.p) + 1, what);
}

static int mc_tokens(rd *r, const char **pp, const char *e, const char *label, uint32_t *out) {
  if (*pp >= e) return trd__rd_fail(r, label, "missing value");
  char c = **pp;
  if (c != '-' && (c < '0' || c > '9'))
    return trd__rd_fail(r, label, "expected a non-negative integer, got %s", js_kind(c));
  return trd__parse_tokens(r, js_number(pp, e), label, out);
}

static int mc_hash_ids(rd *r, span line, const char **pp, const char *e, uint32_t *n_out) {
  const char *label = "key 'hash_ids'";
  char b[256];
  const char *p = *pp;
  if (p >= e || *p != '[')
    return trd__rd_fail(r, label, "expected an array of non-negative integers, got %s", p < e ? js_kind(*p) : "nothing");
  uint32_t n = 0;
  p = js_ws(p + 1, e);
  if (p < e && *p == ']') {
    *pp = p + 1;
    *n_out = 0;
    return SIM_OK;
  }
  for (;;) {
    p = js_ws(p, e);
    if (p >= e) return mc_fail_syntax(r, line, p, "unterminated 'hash_ids' array");
    if (*p != '-' && (*p < '0' || *p > '9'))
      return trd__rd_fail(r, label, "element %u: expected a non-negative integer, got %s", n + 1, js_kind(*p));
    span num = js_number(&p, e);
    uint64_t v = 0;
    if (!trd__sp_u64(num, &v))
      return trd__rd_fail(r, label, "element %u: expected a non-negative integer, got '%s'", n + 1,
                          trd__show(b, sizeof b, num));
    int rc = trd__push_hash(r, label, v);
    if (rc) return rc;
    n++;
    p = js_ws(p, e);
    if (p < e && *p == ',') {
      p++;
      continue;
    }
    if (p < e && *p == ']') break;
    return mc_fail_syntax(r, line, p, "expected ',' or ']' in 'hash_ids'");
  }
  *pp = p + 1;
  *n_out = n;
  return SIM_OK;
}

enum { MC_TS, MC_IN, MC_OUT, MC_HASH, MC_NKEYS };

static int read_mooncake_line(rd *r, span line) {
  static const char *const keys[MC_NKEYS] = {"timestamp", "input_length", "output_length", "hash_ids"};
  static const char *const labels[MC_NKEYS] = {"key 'timestamp'", "key 'input_length'", "key 'output_length'",
                                               "key 'hash_ids'"};
  const char *p = js_ws(line.p, line.p + line.n), *e = line.p + line.n;
  bool seen[MC_NKEYS] = {false, false, false, false};
  uint64_t ns = 0;
  span ts_tok = {p, 0};
  uint32_t prompt = 0, output = 0, n_hash = 0;
  size_t hash_start = r->t->n_hash;
  int rc;
  if (p >= e || *p != '{') return mc_fail_syntax(r, line, p, "expected '{' (Mooncake traces hold one JSON object per line)");
  p = js_ws(p + 1, e);
  if (p < e && *p == '}') {
    p++;
  } else {
    for (;;) {
      span key;
      p = js_ws(p, e);
      if (p >= e || *p != '"' || !js_string(&p, e, &key)) return mc_fail_syntax(r, line, p, "expected a key string");
      p = js_ws(p, e);
      if (p >= e || *p != ':') return mc_fail_syntax(r, line, p, "expected ':' after a key");
      p = js_ws(p + 1, e);
      int k = -1;
      for (int i = 0; i < MC_NKEYS; i++)
        if (key.n == strlen(keys[i]) && memcmp(key.p, keys[i], key.n) == 0) k = i;
      if (k >= 0 && seen[k]) return trd__rd_fail(r, labels[k], "duplicate key");
      if (k >= 0) seen[k] = true;
      switch (k) {
      case MC_TS:
        if (p >= e || (*p != '-' && (*p < '0' || *p > '9')))
          return trd__rd_fail(r, labels[k], "expected a number of milliseconds, got %s", p < e ? js_kind(*p) : "nothing");
        ts_tok = js_number(&p, e);
        if ((rc = trd__parse_ts_decimal(r, ts_tok, 6, labels[k], &ns))) return rc;
        break;
      case MC_IN:
        if ((rc = mc_tokens(r, &p, e, labels[k], &prompt))) return rc;
        break;
      case MC_OUT:
        if ((rc = mc_tokens(r, &p, e, labels[k], &output))) return rc;
        break;
      case MC_HASH:
        if ((rc = mc_hash_ids(r, line, &p, e, &n_hash))) return rc;
        break;
      default:
        if (!js_skip(&p, e)) return mc_fail_syntax(r, line, p, "malformed value");
      }
      p = js_ws(p, e);
      if (p < e && *p == ',') {
        p++;
        continue;
      }
      if (p < e && *p == '}') {
        p++;
        break;
      }
      return mc_fail_syntax(r, line, p, "expected ',' or '}'");
    }
  }
  p = js_ws(p, e);
  if (p < e) return mc_fail_syntax(r, line, p, "trailing characters after the object");
  for (int i = 0; i < MC_HASH; i++)
    if (!seen[i]) return trd__rd_fail(r, labels[i], "missing key");
  if ((rc = trd__check_order(r, ns, ts_tok, labels[MC_TS]))) return rc;
  if (prompt == 0) return trd__rd_fail(r, labels[MC_IN], "0 prompt tokens (every request needs >= 1)");
  if (output == 0) return trd__rd_fail(r, labels[MC_OUT], "0 output tokens (every request needs >= 1)");
  SIM_ASSERT(r->t->n_hash - hash_start == n_hash);
  if ((rc = trd__check_hash_count(r, labels[MC_HASH], prompt, n_hash))) return rc;
  return trd__push_row(r, ns, prompt, output, 0, n_hash);
}

int trd__read_mooncake(rd *r, span first) {
  int rc = read_mooncake_line(r, first);
  span ln;
  while (!rc && trd__next_line(r, &ln)) {
    if (trd__sp_trim(ln).n == 0) continue;
    rc = read_mooncake_line(r, ln);
  }
  return rc;
}
