/* trace_read_impl.h: the reader state and helpers trace_read.c shares with
 * trace_mooncake.c; nothing else includes it. */
#ifndef SIM_TRACE_READ_IMPL_H
#define SIM_TRACE_READ_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload/trace.h"

#define RD_MAX_TOKENS 10000000u             /* per request, prompt or output */
#define RD_LIMIT_NS 10000000000000000000ull /* 1e10 s: timestamps must stay below */
#define RD_MAX_COLS 64                      /* header columns */
#define RD_JSON_DEPTH 64                    /* nesting skipped in unknown Mooncake keys */

typedef struct span {
  const char *p;
  size_t n; /* bytes */
} span;

typedef struct sess_key {
  span key;      /* the id as written (points into the input) */
  uint64_t hash; /* hash_bytes(key) */
} sess_key;

typedef struct sess_map {
  uint64_t *slots; /* open addressing, linear probing: 0 empty, else (hash >> 32) << 32 | index */
  size_t mask;     /* slots - 1 (power of two, load <= 1/2) */
  sess_key *keys;  /* keys[i - 1] is session i */
  size_t n, cap;   /* sessions, capacity of keys */
} sess_map;

/* parse_decimal results */
enum { NUM_OK = 0, NUM_SYNTAX, NUM_NEGATIVE, NUM_RANGE };

/* ---- reader state and messages ---- */

enum { ROLE_TS, ROLE_PROMPT, ROLE_OUTPUT, ROLE_SESSION, ROLE_HASH, N_ROLES };

typedef struct rd {
  trace *t;
  const char *path; /* names the input in messages */
  const char *end;  /* one past the last input byte */
  const char *p;    /* next unread byte */
  size_t line;      /* 1-based number of the line last returned */
  sim_err *err;
  sess_map sess;
  trace_format fmt;
  /* ordering: the previous row's timestamp */
  bool have_prev;
  uint64_t prev_ns; /* absolute, in the file's clock */
  span prev_tok;
  size_t prev_line;
  /* CSV header */
  size_t ncol;
  span hdr[RD_MAX_COLS];      /* header names as written */
  int role_col[N_ROLES];      /* column of each role, -1 if absent */
  const char *role_name[N_ROLES]; /* canonical column names for messages */
  char role_label[N_ROLES][48];   /* "column 'name'", made once per header */
  uint32_t hbt_line;          /* line of a `# hash_block_tokens` comment, 0 if none */
  char label[160];            /* scratch for "column 'x'" */
} rd;

/* "path:line: WHAT: message" into r->err; returns SIM_EINPUT. */
__attribute__((format(printf, 3, 4))) int trd__rd_fail(rd *r, const char *what, const char *fmt, ...);
/* s for a message: printable ASCII as is, anything else as \\xNN, at most ~48 bytes then "...". */
const char *trd__show(char *buf, size_t cap, span s);
span trd__sp_trim(span s);
/* A whole span of decimal digits as an unsigned integer. */
bool trd__sp_u64(span s, uint64_t *out);
/* The next physical line (without its end), false at the end of the input. */
bool trd__next_line(rd *r, span *ln);
/* Numbers: decimal with `scale` fractional digits into an integer (NUM_*), a token count, a timestamp. */
int trd__parse_decimal(span s, int scale, uint64_t limit, uint64_t *out);
int trd__parse_tokens(rd *r, span s, const char *what, uint32_t *out);
int trd__parse_ts_decimal(rd *r, span s, int scale, const char *what, uint64_t *ns);
/* Rows: arrival order, hash-id count, one hash id, one request. */
int trd__check_order(rd *r, uint64_t ns, span tok, const char *what);
int trd__check_hash_count(rd *r, const char *what, uint32_t prompt, uint32_t n_hash);
int trd__push_hash(rd *r, const char *what, uint64_t v);
int trd__push_row(rd *r, uint64_t abs_ns, uint32_t prompt, uint32_t output, uint32_t session, uint32_t n_hash);
/* The Mooncake JSONL reader from its first line (trace_mooncake.c). */
int trd__read_mooncake(rd *r, span first);

#endif
