/* trace_read.c: the trace readers behind trace_load/trace_parse: native CSV,
 * Azure LLM inference 2023/2024, BurstGPT (both column orders) and Mooncake
 * JSONL, with detection by the first non-comment line.
 *
 * Invariants:
 *   - the input is a byte span: it may hold NULs, need not end in a newline
 *     or a NUL, and is never read past `len`;
 *   - one pass over the lines, each byte looked at a constant number of times;
 *     nothing is allocated per row beyond amortized growth of the trace arrays
 *     and the session table;
 *   - any input gives either a valid trace (sorted, re-based at t=0, every
 *     request with prompt >= 1 and output >= 1, at least one request) or
 *     SIM_EINPUT with "path:line: column 'name': problem" (1-based physical
 *     line; "key 'name'" for Mooncake, "header" for header problems);
 *   - timestamps are converted to integer ns with decimal arithmetic only (no
 *     strtod, no time zones); anything at or beyond 1e10 s is rejected so the
 *     arithmetic cannot overflow.
 *
 * CSV dialect: fields split at every ',' (no quoted commas), surrounding
 * blanks trimmed, one pair of surrounding double quotes stripped; CRLF or LF;
 * blank lines skipped; `#` lines before the header are comments (in native
 * traces anywhere), and `# hash_block_tokens=N` before a native header sets N.
 * Columns are found by name (case-insensitive); a row with more or fewer
 * fields than the header is an error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/trace.h"
#include "workload/trace_read_impl.h"

/* ---- session ids: byte strings -> 1-based index in order of first sight ---- */


static uint64_t hash_bytes(span s) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a final mix */
  for (size_t i = 0; i < s.n; i++) h = (h ^ (unsigned char)s.p[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

static void sess_free(sess_map *m) {
  free(m->slots);
  free(m->keys);
  memset(m, 0, sizeof *m);
}

static void sess_rehash(sess_map *m, size_t nslots) {
  free(m->slots);
  m->slots = sim_calloc(nslots, sizeof *m->slots);
  m->mask = nslots - 1;
  for (size_t i = 0; i < m->n; i++) {
    uint64_t h = m->keys[i].hash;
    size_t j = h & m->mask;
    while (m->slots[j]) j = (j + 1) & m->mask;
    m->slots[j] = (h >> 32 << 32) | (i + 1);
  }
}

/* Returns the 1-based index of `key`, adding it if new; 0 if the table is full.
 * Amortized O(len(key)). */
static uint32_t sess_get(sess_map *m, span key) {
  if (!m->slots) sess_rehash(m, 1024);
  uint64_t h = hash_bytes(key);
  size_t j = h & m->mask;
  uint64_t tag = h >> 32 << 32;
  for (uint64_t v; (v = m->slots[j]) != 0; j = (j + 1) & m->mask) {
    if ((v >> 32 << 32) != tag) continue; /* most misses end here, without touching keys */
    uint32_t idx = (uint32_t)v;
    const sess_key *k = &m->keys[idx - 1];
    if (k->hash == h && k->key.n == key.n && memcmp(k->key.p, key.p, key.n) == 0) return idx;
  }
  if (m->n >= UINT32_MAX - 1) return 0;
  SIM_GROW(m->keys, m->cap, m->n + 1);
  m->keys[m->n] = (sess_key){key, h};
  m->n++;
  m->slots[j] = tag | m->n;
  if (m->n * 2 > m->mask + 1) sess_rehash(m, (m->mask + 1) * 2);
  return (uint32_t)m->n;
}

/* Copies s into buf for a message: printable ASCII as is, anything else as
 * \xNN, at most ~48 source bytes then "...". */
const char *trd__show(char *buf, size_t cap, span s) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0, i = 0;
  for (; i < s.n && o + 8 < cap && i < 48; i++) {
    unsigned char c = (unsigned char)s.p[i];
    if (c >= 0x20 && c < 0x7f) {
      buf[o++] = (char)c;
    } else {
      buf[o++] = '\\';
      buf[o++] = 'x';
      buf[o++] = hex[c >> 4];
      buf[o++] = hex[c & 15];
    }
  }
  if (i < s.n && o + 4 <= cap) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o] = 0;
  return buf;
}

/* Fails with "path:line: what: message". */
__attribute__((format(printf, 3, 4))) int trd__rd_fail(rd *r, const char *what, const char *fmt, ...) {
  char m[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  if (what)
    return sim_errf(r->err, SIM_EINPUT, "%s:%zu: %s: %s", r->path, r->line, what, m);
  return sim_errf(r->err, SIM_EINPUT, "%s:%zu: %s", r->path, r->line, m);
}

static const char *col_label(rd *r, size_t col) {
  char name[256];
  for (int k = 0; k < N_ROLES; k++)
    if (r->role_col[k] == (int)col && r->role_name[k]) return r->role_label[k];
  snprintf(r->label, sizeof r->label, "column %zu '%s'", col + 1, trd__show(name, sizeof name, r->hdr[col]));
  return r->label;
}

/* ---- spans and lines ---- */

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

span trd__sp_trim(span s) {
  while (s.n && is_blank(s.p[0])) s.p++, s.n--;
  while (s.n && (is_blank(s.p[s.n - 1]) || s.p[s.n - 1] == '\r')) s.n--;
  return s;
}

static bool sp_ieq(span s, const char *lit) {
  size_t n = strlen(lit);
  if (s.n != n) return false;
  for (size_t i = 0; i < n; i++) {
    char a = s.p[i], b = lit[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

static bool sp_prefix(span s, const char *lit) {
  size_t n = strlen(lit);
  return s.n >= n && memcmp(s.p, lit, n) == 0;
}

/* Next physical line without its '\n' (and one '\r' before it); false at the end. */
bool trd__next_line(rd *r, span *ln) {
  if (r->p >= r->end) return false;
  const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
  const char *e = nl ? nl : r->end;
  ln->p = r->p;
  ln->n = (size_t)(e - r->p);
  if (ln->n && ln->p[ln->n - 1] == '\r') ln->n--;
  r->p = nl ? nl + 1 : r->end;
  r->line++;
  return true;
}

/* Splits a CSV line into fields (trimmed, outer quotes stripped); stores at
 * most `maxf` and returns the total number of fields. */
static size_t split_csv(span line, span *f, size_t maxf) {
  size_t nf = 0;
  const char *p = line.p, *e = line.p + line.n;
  for (;;) {
    const char *c = memchr(p, ',', (size_t)(e - p));
    const char *fe = c ? c : e;
    if (nf < maxf) {
      span s = trd__sp_trim((span){p, (size_t)(fe - p)});
      if (s.n >= 2 && s.p[0] == '"' && s.p[s.n - 1] == '"') s = (span){s.p + 1, s.n - 2};
      f[nf] = s;
    }
    nf++;
    if (!c) return nf;
    p = c + 1;
  }
}

/* ---- numbers ---- */


/* Parses an unsigned decimal `digits[.digits][(e|E)[+|-]digits]` (at least
 * one digit in the mantissa) times 10^scale, rounded half up to an integer.
 * A leading '-' gives NUM_NEGATIVE (if the rest is a number); a result >= limit
 * gives NUM_RANGE. Exact: no floating point. */
int trd__parse_decimal(span s, int scale, uint64_t limit, uint64_t *out) {
  const char *p = s.p, *e = s.p + s.n;
  bool negative = p < e && *p == '-'; /* reported only if the rest is a number */
  if (negative) p++;
  uint64_t m = 0;  /* significant digits kept */
  long exp10 = 0;  /* value = m * 10^exp10 */
  int ndig = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++, ndig++) {
    if (m <= (UINT64_MAX - 9) / 10)
      m = m * 10 + (uint64_t)(*p - '0');
    else
      exp10++;
  }
  if (p < e && *p == '.') {
    for (p++; p < e && *p >= '0' && *p <= '9'; p++, ndig++) {
      if (m <= (UINT64_MAX - 9) / 10) {
        m = m * 10 + (uint64_t)(*p - '0');
        exp10--;
      }
    }
  }
  if (ndig == 0) return NUM_SYNTAX;
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    bool neg = false;
    if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
    long x = 0;
    int nx = 0;
    for (; p < e && *p >= '0' && *p <= '9'; p++, nx++)
      if (x < 100000) x = x * 10 + (*p - '0');
    if (nx == 0) return NUM_SYNTAX;
    exp10 += neg ? -x : x;
  }
  if (p != e) return NUM_SYNTAX;
  if (negative) return NUM_NEGATIVE;
  long k = exp10 + scale;
  if (m == 0) {
    *out = 0;
    return NUM_OK;
  }
  if (k >= 0) {
    for (; k > 0; k--) {
      if (m > limit / 10) return NUM_RANGE;
      m *= 10;
    }
  } else if (k < -19) {
    m = 0; /* m < 2e19 <= 0.5 * 10^20: rounds to zero */
  } else {
    uint64_t p10 = 1;
    for (long i = 0; i < -k; i++) p10 *= 10;
    uint64_t q = m / p10, rem = m % p10;
    if (rem >= p10 - rem) q++;
    m = q;
  }
  if (m >= limit) return NUM_RANGE;
  *out = m;
  return NUM_OK;
}

/* A token count: digits, optionally followed by '.' and zeros ("472.0"). */
int trd__parse_tokens(rd *r, span s, const char *what, uint32_t *out) {
  char b[256];
  const char *p = s.p, *e = s.p + s.n;
  uint64_t v = 0;
  int nd = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++, nd++)
    if (v <= RD_MAX_TOKENS) v = v * 10 + (uint64_t)(*p - '0');
  if (nd && p < e && *p == '.') {
    for (p++; p < e && *p == '0'; p++) {
    }
  }
  if (nd == 0 || p != e) {
    if (s.n > 1 && s.p[0] == '-' && s.p[1] >= '0' && s.p[1] <= '9')
      return trd__rd_fail(r, what, "expected a non-negative integer, got negative '%s'", trd__show(b, sizeof b, s));
    return trd__rd_fail(r, what, "expected a non-negative integer, got '%s'", trd__show(b, sizeof b, s));
  }
  if (v > RD_MAX_TOKENS)
    return trd__rd_fail(r, what, "'%s' tokens exceeds the limit of %u tokens per request", trd__show(b, sizeof b, s),
                        RD_MAX_TOKENS);
  *out = (uint32_t)v;
  return SIM_OK;
}

/* A timestamp in seconds (scale 9) or milliseconds (scale 6) to ns. */
int trd__parse_ts_decimal(rd *r, span s, int scale, const char *what, uint64_t *ns) {
  char b[256];
  const char *unit = scale == 9 ? "seconds" : "milliseconds";
  switch (trd__parse_decimal(s, scale, RD_LIMIT_NS, ns)) {
  case NUM_OK: return SIM_OK;
  case NUM_NEGATIVE: return trd__rd_fail(r, what, "negative timestamp '%s'", trd__show(b, sizeof b, s));
  case NUM_RANGE:
    return trd__rd_fail(r, what, "timestamp '%s' %s is beyond the supported range (< 1e10 s)", trd__show(b, sizeof b, s),
                        unit);
  default:
    return trd__rd_fail(r, what, "expected a non-negative number of %s, got '%s'", unit, trd__show(b, sizeof b, s));
  }
}

static bool digits(const char *p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return false;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return true;
}

static bool leap_year(long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian, y >= 1970). */
static uint64_t days_since_epoch(long y, int m, int d) {
  static const int before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  long py = y - 1; /* leap years in [1970, y) = leaps(<= y-1) - leaps(<= 1969) */
  long leaps = (py / 4 - py / 100 + py / 400) - (1969 / 4 - 1969 / 100 + 1969 / 400);
  long days = 365 * (y - 1970) + leaps + before[m - 1] + (m > 2 && leap_year(y)) + (d - 1);
  return (uint64_t)days;
}

/* Azure `YYYY-MM-DD HH:MM:SS[.f{1,9}]` (or 'T' between date and time), no
 * time zone, to ns since 1970-01-01 00:00:00 of the same clock. */
static int parse_azure_ts(rd *r, span s, const char *what, uint64_t *ns) {
  char b[256];
  static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, mo, d, h, mi, sec;
  const char *p = s.p;
  if (s.n < 19 || !digits(p, 4, &y) || p[4] != '-' || !digits(p + 5, 2, &mo) || p[7] != '-' ||
      !digits(p + 8, 2, &d) || (p[10] != ' ' && p[10] != 'T') || !digits(p + 11, 2, &h) || p[13] != ':' ||
      !digits(p + 14, 2, &mi) || p[16] != ':' || !digits(p + 17, 2, &sec))
    return trd__rd_fail(r, what, "expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fffffff]', got '%s'", trd__show(b, sizeof b, s));
  uint64_t frac = 0;
  size_t i = 19;
  if (i < s.n) {
    if (p[i] != '.' || s.n - i - 1 < 1 || s.n - i - 1 > 9)
      return trd__rd_fail(r, what, "expected 'YYYY-MM-DD HH:MM:SS' with 1 to 9 fractional digits, got '%s'",
                          trd__show(b, sizeof b, s));
    int nf = 0;
    for (i++; i < s.n; i++, nf++) {
      if (p[i] < '0' || p[i] > '9')
        return trd__rd_fail(r, what, "expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fffffff]', got '%s'",
                            trd__show(b, sizeof b, s));
      frac = frac * 10 + (uint64_t)(p[i] - '0');
    }
    for (; nf < 9; nf++) frac *= 10;
  }
  if (y < 1970)
    return trd__rd_fail(r, what, "timestamp '%s' is before 1970", trd__show(b, sizeof b, s));
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap_year(y)) || h > 23 || mi > 59 || sec > 59)
    return trd__rd_fail(r, what, "invalid date or time in '%s'", trd__show(b, sizeof b, s));
  uint64_t secs = days_since_epoch(y, mo, d) * 86400u + (uint64_t)h * 3600u + (uint64_t)mi * 60u + (uint64_t)sec;
  if (secs >= RD_LIMIT_NS / SIM_NS_PER_S)
    return trd__rd_fail(r, what, "timestamp '%s' is beyond the supported range (< 1e10 s after 1970)",
                        trd__show(b, sizeof b, s));
  *ns = secs * SIM_NS_PER_S + frac;
  return SIM_OK;
}

/* A whole span of decimal digits that fits a uint64 (a hash id). */
bool trd__sp_u64(span s, uint64_t *out) {
  uint64_t v = 0;
  if (!s.n) return false;
  for (size_t i = 0; i < s.n; i++) {
    unsigned d = (unsigned)(s.p[i] - '0');
    if (d > 9 || v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* Appends one hash id to the trace's pool. */
int trd__push_hash(rd *r, const char *what, uint64_t v) {
  trace *t = r->t;
  if (t->n_hash >= UINT32_MAX) return trd__rd_fail(r, what, "more than %u hash ids in the trace", UINT32_MAX);
  SIM_GROW(t->hash_ids, t->cap_hash, t->n_hash + 1);
  t->hash_ids[t->n_hash++] = v;
  return SIM_OK;
}

/* `|`-separated unsigned integers appended to t->hash_ids; empty = none. */
static int parse_hash_list(rd *r, span s, const char *what, uint32_t *n_out) {
  char b[256];
  uint32_t n = 0;
  if (s.n == 0) {
    *n_out = 0;
    return SIM_OK;
  }
  const char *p = s.p, *e = s.p + s.n;
  for (;;) {
    const char *bar = memchr(p, '|', (size_t)(e - p));
    span el = trd__sp_trim((span){p, (size_t)((bar ? bar : e) - p)});
    uint64_t v = 0;
    if (!trd__sp_u64(el, &v))
      return trd__rd_fail(r, what, "element %u: expected a non-negative integer (ids separated by '|'), got '%s'", n + 1,
                          trd__show(b, sizeof b, el));
    int rc = trd__push_hash(r, what, v);
    if (rc) return rc;
    n++;
    if (!bar) break;
    p = bar + 1;
  }
  *n_out = n;
  return SIM_OK;
}

/* ---- rows ---- */

int trd__check_order(rd *r, uint64_t ns, span tok, const char *what) {
  char a[256], b[256];
  if (r->have_prev && ns < r->prev_ns)
    return trd__rd_fail(r, what, "timestamp '%s' is earlier than '%s' on line %zu: the trace must be sorted by arrival",
                        trd__show(a, sizeof a, tok), trd__show(b, sizeof b, r->prev_tok), r->prev_line);
  r->have_prev = true;
  r->prev_ns = ns;
  r->prev_tok = tok;
  r->prev_line = r->line;
  return SIM_OK;
}

int trd__check_hash_count(rd *r, const char *what, uint32_t prompt, uint32_t n_hash) {
  uint32_t bt = r->t->hash_block_tokens;
  uint64_t blocks = ((uint64_t)prompt + bt - 1) / bt;
  if (n_hash > blocks)
    return trd__rd_fail(r, what, "%u hash ids for %u prompt tokens: at most ceil(%u / %u) = %llu", n_hash, prompt, prompt,
                        bt, (unsigned long long)blocks);
  return SIM_OK;
}

int trd__push_row(rd *r, uint64_t abs_ns, uint32_t prompt, uint32_t output, uint32_t session, uint32_t n_hash) {
  trace *t = r->t;
  SIM_GROW(t->reqs, t->cap, t->n + 1);
  trace_req *q = &t->reqs[t->n++];
  q->arrival_ns = abs_ns;
  q->prompt_tokens = prompt;
  q->output_tokens = output;
  q->session = session;
  q->hash_off = (uint32_t)(t->n_hash - n_hash);
  q->n_hash = n_hash;
  return SIM_OK;
}

/* ---- CSV formats ---- */

static const char *const native_names[N_ROLES] = {"arrival_s", "prompt_tokens", "output_tokens", "session_id",
                                                  "hash_ids"};
static const char *const azure_names[N_ROLES] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens", NULL, NULL};
static const char *const burst_names[N_ROLES] = {"Timestamp", "Request tokens", "Response tokens", "Session ID",
                                                 NULL};

static const char *fmt_header_hint(trace_format f) {
  switch (f) {
  case TRACE_FMT_NATIVE: return "native header is 'arrival_s,prompt_tokens,output_tokens[,session_id][,hash_ids]'";
  case TRACE_FMT_AZURE: return "Azure header is 'TIMESTAMP,ContextTokens,GeneratedTokens'";
  case TRACE_FMT_BURSTGPT:
    return "BurstGPT header is 'Timestamp,[Session ID,Elapsed time,]Model,Request tokens,Response tokens,Total "
           "tokens,Log Type'";
  default:
    return "expected a native 'arrival_s,prompt_tokens,output_tokens[,session_id][,hash_ids]', Azure "
           "'TIMESTAMP,ContextTokens,GeneratedTokens' or BurstGPT 'Timestamp,...,Request tokens,Response tokens,...' "
           "header, or Mooncake JSONL";
  }
}

static int read_header(rd *r, span line) {
  char b[256];
  size_t nf = split_csv(line, r->hdr, RD_MAX_COLS);
  if (nf > RD_MAX_COLS) return trd__rd_fail(r, "header", "more than %d columns", RD_MAX_COLS);
  r->ncol = nf;
  if (nf == 1 && r->hdr[0].n == 0) return trd__rd_fail(r, "header", "empty header line");
  if (r->fmt == TRACE_FMT_AUTO) {
    for (size_t i = 0; i < nf && r->fmt == TRACE_FMT_AUTO; i++) {
      if (sp_ieq(r->hdr[i], "arrival_s")) r->fmt = TRACE_FMT_NATIVE;
      else if (sp_ieq(r->hdr[i], "ContextTokens")) r->fmt = TRACE_FMT_AZURE;
      else if (sp_ieq(r->hdr[i], "Request tokens")) r->fmt = TRACE_FMT_BURSTGPT;
    }
    if (r->fmt == TRACE_FMT_AUTO)
      return trd__rd_fail(r, "header", "unrecognized header '%s' (%s)", trd__show(b, sizeof b, line),
                          fmt_header_hint(TRACE_FMT_AUTO));
  }
  const char *const *names = r->fmt == TRACE_FMT_NATIVE ? native_names
                             : r->fmt == TRACE_FMT_AZURE ? azure_names
                                                         : burst_names;
  for (int k = 0; k < N_ROLES; k++) {
    r->role_col[k] = -1;
    r->role_name[k] = names[k];
  }
  for (int k = 0; k < N_ROLES; k++)
    if (names[k]) snprintf(r->role_label[k], sizeof r->role_label[k], "column '%s'", names[k]);
  for (size_t i = 0; i < nf; i++) {
    int role = -1;
    for (int k = 0; k < N_ROLES; k++)
      if (names[k] && sp_ieq(r->hdr[i], names[k])) role = k;
    if (role < 0) {
      if (r->fmt == TRACE_FMT_NATIVE)
        return trd__rd_fail(r, "header", "unknown column '%s' (%s)", trd__show(b, sizeof b, r->hdr[i]),
                            fmt_header_hint(r->fmt));
      continue; /* Azure/BurstGPT: columns we do not use */
    }
    if (r->role_col[role] >= 0)
      return trd__rd_fail(r, "header", "duplicate column '%s'", names[role]);
    r->role_col[role] = (int)i;
  }
  for (int k = ROLE_TS; k <= ROLE_OUTPUT; k++)
    if (r->role_col[k] < 0)
      return trd__rd_fail(r, "header", "missing column '%s' (%s)", names[k], fmt_header_hint(r->fmt));
  if (r->hbt_line && r->fmt != TRACE_FMT_NATIVE) {
    r->line = r->hbt_line;
    return trd__rd_fail(r, "comment", "'# hash_block_tokens' is only meaningful in native traces");
  }
  return SIM_OK;
}

static int read_csv_row(rd *r, span line) {
  span f[RD_MAX_COLS + 1];
  char b[256];
  size_t nf = split_csv(line, f, r->ncol + 1);
  if (nf < r->ncol)
    return trd__rd_fail(r, col_label(r, nf), "missing field (the row has %zu fields, the header %zu columns)", nf,
                        r->ncol);
  if (nf > r->ncol)
    return trd__rd_fail(r, NULL, "column %zu: extra field '%s' (the row has %zu fields, the header %zu columns)",
                        r->ncol + 1, trd__show(b, sizeof b, f[r->ncol]), nf, r->ncol);
  int c_ts = r->role_col[ROLE_TS], c_p = r->role_col[ROLE_PROMPT], c_o = r->role_col[ROLE_OUTPUT];
  const char *l_ts = r->role_label[ROLE_TS], *l_p = r->role_label[ROLE_PROMPT], *l_o = r->role_label[ROLE_OUTPUT];
  uint64_t ns;
  int rc = r->fmt == TRACE_FMT_AZURE ? parse_azure_ts(r, f[c_ts], l_ts, &ns) : trd__parse_ts_decimal(r, f[c_ts], 9, l_ts, &ns);
  if (rc) return rc;
  if ((rc = trd__check_order(r, ns, f[c_ts], l_ts))) return rc;
  uint32_t prompt, output;
  if ((rc = trd__parse_tokens(r, f[c_p], l_p, &prompt))) return rc;
  if ((rc = trd__parse_tokens(r, f[c_o], l_o, &output))) return rc;
  if (r->fmt == TRACE_FMT_BURSTGPT && output == 0) {
    r->t->n_failed_rows++; /* BurstGPT marks a failed request by 0 response tokens */
    return SIM_OK;
  }
  if (prompt == 0) return trd__rd_fail(r, l_p, "0 prompt tokens (every request needs >= 1)");
  if (output == 0) return trd__rd_fail(r, l_o, "0 output tokens (every request needs >= 1)");
  uint32_t session = 0, n_hash = 0;
  int c_s = r->role_col[ROLE_SESSION], c_h = r->role_col[ROLE_HASH];
  if (c_s >= 0 && f[c_s].n) {
    session = sess_get(&r->sess, f[c_s]);
    if (!session) return trd__rd_fail(r, r->role_label[ROLE_SESSION], "too many sessions");
  }
  if (c_h >= 0) {
    if ((rc = parse_hash_list(r, f[c_h], r->role_label[ROLE_HASH], &n_hash))) return rc;
    if ((rc = trd__check_hash_count(r, r->role_label[ROLE_HASH], prompt, n_hash))) return rc;
  }
  return trd__push_row(r, ns, prompt, output, session, n_hash);
}

/* `# hash_block_tokens=N` (blanks allowed around the words). */
static int read_comment(rd *r, span line, bool before_header) {
  char b[256];
  span s = trd__sp_trim((span){line.p + 1, line.n - 1});
  if (!sp_prefix(s, "hash_block_tokens")) return SIM_OK;
  s = trd__sp_trim((span){s.p + 17, s.n - 17});
  if (!s.n || s.p[0] != '=') return SIM_OK; /* some other comment that starts with the word */
  if (!before_header) return trd__rd_fail(r, "comment", "'# hash_block_tokens' must come before the header");
  s = trd__sp_trim((span){s.p + 1, s.n - 1});
  uint32_t v = 0;
  int rc = trd__parse_tokens(r, s, "comment 'hash_block_tokens'", &v);
  if (rc) return rc;
  if (v == 0) return trd__rd_fail(r, "comment 'hash_block_tokens'", "must be >= 1, got '%s'", trd__show(b, sizeof b, s));
  r->t->hash_block_tokens = v;
  r->hbt_line = (uint32_t)SIM_MIN(r->line, (size_t)UINT32_MAX);
  return SIM_OK;
}

static int read_csv(rd *r, span header) {
  int rc = read_header(r, header);
  if (rc) return rc;
  span ln;
  while (trd__next_line(r, &ln)) {
    span s = trd__sp_trim(ln);
    if (s.n == 0) continue;
    if (r->fmt == TRACE_FMT_NATIVE && s.p[0] == '#') {
      if ((rc = read_comment(r, s, false))) return rc;
      continue;
    }
    if ((rc = read_csv_row(r, ln))) return rc;
  }
  return SIM_OK;
}

/* ---- entry points ---- */

static size_t count_lines(const char *p, size_t len) {
  size_t n = 1;
  const char *e = p + len;
  while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) n++, p++;
  return n;
}

static int parse_all(rd *r, const char *text, size_t len) {
  trace *t = r->t;
  r->p = text;
  r->end = text + len;
  if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) r->p += 3; /* UTF-8 byte order mark */
  span ln, first = {NULL, 0};
  int rc;
  while (trd__next_line(r, &ln)) {
    span s = trd__sp_trim(ln);
    if (s.n == 0) continue;
    if (s.p[0] == '#') {
      if ((rc = read_comment(r, s, true))) return rc;
      continue;
    }
    first = ln;
    break;
  }
  if (!first.p) {
    if (r->line == 0) r->line = 1;
    return trd__rd_fail(r, NULL, "empty trace: no header line and no requests");
  }
  /* Reserve once: at most one request per line. */
  size_t est = count_lines(r->p, (size_t)(r->end - r->p));
  if (!t->reqs && est) { /* in huge pages where large (sim_malloc_huge) */
    t->reqs = sim_malloc_huge(est * sizeof *t->reqs);
    t->cap = est;
  }
  SIM_GROW(t->reqs, t->cap, est);
  span fs = trd__sp_trim(first);
  bool json = fs.p[0] == '{';
  if (r->fmt == TRACE_FMT_MOONCAKE || (r->fmt == TRACE_FMT_AUTO && json)) {
    r->fmt = TRACE_FMT_MOONCAKE;
    t->hash_block_tokens = 512;
    if (r->hbt_line) {
      r->line = r->hbt_line;
      return trd__rd_fail(r, "comment", "'# hash_block_tokens' is only meaningful in native traces");
    }
    rc = trd__read_mooncake(r, first);
  } else {
    rc = read_csv(r, first);
  }
  if (rc) return rc;
  if (t->n == 0) {
    if (t->n_failed_rows)
      return trd__rd_fail(r, NULL, "no requests: all %zu rows are failures (0 response tokens)",
                          t->n_failed_rows);
    return trd__rd_fail(r, NULL, "no requests after the header");
  }
  uint64_t first_ns = t->reqs[0].arrival_ns;
  for (size_t i = 0; i < t->n; i++) t->reqs[i].arrival_ns -= first_ns;
  t->t0_s = (double)(first_ns / SIM_NS_PER_S) + (double)(first_ns % SIM_NS_PER_S) / 1e9;
  t->n_sessions = (uint32_t)r->sess.n;
  t->format = r->fmt;
  return SIM_OK;
}

int trace_parse(trace *t, const char *text, size_t len, const char *path, trace_format fmt, sim_err *err) {
  SIM_ASSERT(t && (text || len == 0) && (unsigned)fmt <= TRACE_FMT_GENERATED);
  trace_init(t);
  if (!path) path = "<memory>";
  snprintf(t->source, sizeof t->source, "%s", path);
  if (fmt == TRACE_FMT_GENERATED)
    return sim_errf(err, SIM_EINPUT, "%s: format 'generated' cannot be read from a file", path);
  rd r;
  memset(&r, 0, sizeof r);
  r.t = t;
  r.path = path;
  r.err = err;
  r.fmt = fmt;
  int rc = parse_all(&r, text ? text : "", text ? len : 0);
  sess_free(&r.sess);
  if (rc) {
    trace_free(t);
    trace_init(t);
    snprintf(t->source, sizeof t->source, "%s", path);
  }
  return rc;
}

int trace_load(trace *t, const char *path, trace_format fmt, sim_err *err) {
  char *buf = NULL;
  size_t len = 0;
  int rc = sim_read_file(path, &buf, &len, err);
  if (rc) {
    trace_init(t);
    return rc;
  }
  rc = trace_parse(t, buf, len, path, fmt, err);
  free(buf);
  return rc;
}
