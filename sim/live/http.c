/* http.c: HTTP/1.1 on libuv with http-parser (see http.h). */
#include "live/http.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
  MAX_URL = 8192,
  MAX_QUEUED_WRITE = 16 << 20, /* bytes a client may leave unread before it is dropped */
  MAX_PENDING_IN = 1 << 20,    /* bytes read ahead while an answer is owed (pipelining) */
  READ_BUF = 65536,
};

struct http_conn {
  uv_tcp_t tcp; /* first: the handle's address is the connection's */
  http_server *srv;
  http_conn *prev, *next;
  http_parser parser;
  char *in; /* bytes read, not yet parsed */
  size_t in_len, in_cap;
  char *url;
  size_t url_len, url_cap;
  char *body;
  size_t body_len, body_cap;
  char hdr[16]; /* the current header's name (only "expect" matters) */
  size_t hdr_len;
  bool expect_continue;
  int fail_status;    /* a callback refused the request: 413, 414 */
  bool refused;       /* a refusal was answered: nothing more is parsed; closes once it is written */
  bool shutting;      /* the last answer is written: FIN sent (uv_shutdown), then the close */
  uv_shutdown_t shut;
  bool ready;         /* a request is complete, not yet handed over */
  bool busy;          /* its answer is owed or streaming */
  bool streaming, chunked;
  bool keep_alive;    /* of the request being answered */
  bool closing;
  bool reading;
  bool in_pump;
  bool pump_pending;  /* read-ahead to parse on the next loop turn (http_server.pumper) */
  bool reject_only;   /* a connection past max_conns: 503 and close */
  uint64_t idle_since_ms;
  void *user;
};

struct http_server {
  uv_loop_t *loop;
  uv_tcp_t listener;
  uv_timer_t sweeper;
  uv_idle_t pumper;   /* parses pipelined requests after an answer, from the loop (never inside the answer) */
  size_t n_pump_pending;
  http_handlers h;
  http_opts o;
  http_conn *conns; /* list of open connections */
  size_t n_conns, n_busy;
  bool listening, draining, closed;
  int handles_open;
  char *busy_body;
  char rbuf[READ_BUF];
  http_parser_settings settings;
};

const char *http_status_text(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

/* ---- lifetime ------------------------------------------------------------------------------------- */

static void server_maybe_free(http_server *s) {
  if (s->closed && s->handles_open == 0 && !s->conns) {
    free(s->busy_body);
    free(s);
  }
}

static void conn_closed_cb(uv_handle_t *h) {
  http_conn *c = (http_conn *)h;
  http_server *s = c->srv;
  if (!c->reject_only) {
    if (c->pump_pending) s->n_pump_pending--;
    if (c->busy) {
      c->busy = false; /* nothing may answer on it any more */
      s->n_busy--;
      if (s->h.gone) s->h.gone(s->h.ctx, c, c->user);
    }
    if (c->prev) c->prev->next = c->next;
    else s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->n_conns--;
  }
  free(c->in);
  free(c->url);
  free(c->body);
  free(c);
  server_maybe_free(s);
}

static void conn_close(http_conn *c) {
  if (c->closing) return;
  c->closing = true;
  uv_close((uv_handle_t *)&c->tcp, conn_closed_cb);
}

/* ---- writing -------------------------------------------------------------------------------------- */

typedef struct wreq {
  uv_write_t req;
  http_conn *c;
  bool close_after;
  char data[];
} wreq;

static void shutdown_cb(uv_shutdown_t *req, int status) {
  (void)status;
  conn_close(req->data); /* after uv_close libuv cancels a pending shutdown (status UV_ECANCELED): no-op */
}

/* The last answer is written: FIN after it, then close (a bare close would drop what the kernel still
 * holds to send when the client's unread bytes make it send a reset). */
static void conn_end(http_conn *c) {
  if (c->closing || c->shutting) return;
  c->shutting = true;
  c->shut.data = c;
  if (uv_shutdown(&c->shut, (uv_stream_t *)&c->tcp, shutdown_cb) < 0) conn_close(c);
}

static void write_cb(uv_write_t *req, int status) {
  wreq *w = (wreq *)req;
  http_conn *c = w->c;
  bool close_after = w->close_after;
  free(w);
  if (status < 0) conn_close(c);
  else if (close_after) conn_end(c);
}

/* Queues the n pieces (any may be empty) as one write: one copy into the request's own buffer. */
static void conn_writev(http_conn *c, const uv_buf_t *parts, int n, bool close_after) {
  if (c->closing || c->shutting) return;
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > MAX_QUEUED_WRITE) { /* it does not read */
    conn_close(c);
    return;
  }
  size_t total = 0;
  for (int i = 0; i < n; i++) total += parts[i].len;
  wreq *w = sim_malloc(sizeof *w + total);
  w->c = c;
  w->close_after = close_after;
  for (size_t i = 0, at = 0; i < (size_t)n; at += parts[i].len, i++)
    if (parts[i].len) memcpy(w->data + at, parts[i].base, parts[i].len);
  uv_buf_t buf = uv_buf_init(w->data, (unsigned)total);
  if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, write_cb) < 0) {
    free(w);
    conn_close(c);
  }
}

/* a+b as one write */
static void conn_write2(http_conn *c, const char *a, size_t na, const char *b, size_t nb, bool close_after) {
  uv_buf_t parts[2] = {uv_buf_init((char *)a, (unsigned)na), uv_buf_init((char *)b, (unsigned)nb)};
  conn_writev(c, parts, 2, close_after);
}

static int head(char *out, size_t cap, http_conn *c, int status, const char *ctype, long long length) {
  bool close = !c->keep_alive || c->srv->draining;
  int n = snprintf(out, cap, "HTTP/1.1 %d %s\r\nserver: servesim\r\ncontent-type: %s\r\n", status,
                   http_status_text(status), ctype);
  if (length >= 0) n += snprintf(out + n, cap - (size_t)n, "content-length: %lld\r\n", length);
  else if (c->chunked) n += snprintf(out + n, cap - (size_t)n, "transfer-encoding: chunked\r\ncache-control: no-cache\r\n");
  n += snprintf(out + n, cap - (size_t)n, "%s\r\n", close ? "connection: close\r\n" : "");
  return n;
}

static void pump(http_conn *c);
static void start_reading(http_conn *c);
static void pump_cb(uv_idle_t *h);

/* The answer is done: the next request may be parsed, or the connection closes. */
static void answer_done(http_conn *c, bool close_now) {
  http_server *s = c->srv;
  if (c->busy) s->n_busy--;
  c->busy = c->streaming = false;
  c->user = NULL;
  c->idle_since_ms = uv_now(s->loop);
  if (close_now) return; /* the last write closes it */
  if (!c->reading && !c->closing && !c->refused) { /* reading was paused on a full read-ahead buffer */
    c->reading = true;
    start_reading(c);
  }
  if (c->in_pump || !c->in_len || c->pump_pending) return;
  /* a pipelined request is waiting: parse it from the loop, not inside the caller's answer */
  c->pump_pending = true;
  if (s->n_pump_pending++ == 0) uv_idle_start(&s->pumper, pump_cb);
}

void http_conn_set_user(http_conn *c, void *user) { c->user = user; }

void http_respond(http_conn *c, int status, const char *content_type, const char *body, size_t len) {
  SIM_ASSERT(c->busy && !c->streaming);
  char h[512];
  int n = head(h, sizeof h, c, status, content_type, (long long)len);
  bool close = !c->keep_alive || c->srv->draining;
  conn_write2(c, h, (size_t)n, body, len, close);
  answer_done(c, close);
}

void http_stream_start(http_conn *c, int status, const char *content_type) {
  SIM_ASSERT(c->busy && !c->streaming);
  c->streaming = true;
  c->chunked = c->parser.http_major > 1 || (c->parser.http_major == 1 && c->parser.http_minor >= 1);
  if (!c->chunked) c->keep_alive = false; /* HTTP/1.0: the end of the body is the end of the connection */
  char h[512];
  int n = head(h, sizeof h, c, status, content_type, -1);
  conn_write2(c, h, (size_t)n, NULL, 0, false);
}

void http_stream_write(http_conn *c, const char *data, size_t len) {
  SIM_ASSERT(c->busy && c->streaming);
  if (!len) return;
  if (!c->chunked) {
    conn_write2(c, data, len, NULL, 0, false);
    return;
  }
  char h[24];
  int n = snprintf(h, sizeof h, "%zx\r\n", len);
  uv_buf_t parts[3] = {uv_buf_init(h, (unsigned)n), uv_buf_init((char *)data, (unsigned)len),
                       uv_buf_init("\r\n", 2)};
  conn_writev(c, parts, 3, false); /* size line, data, CRLF: one write */
}

void http_stream_end(http_conn *c) {
  SIM_ASSERT(c->busy && c->streaming);
  bool close = !c->keep_alive || c->srv->draining;
  if (c->chunked) conn_write2(c, "0\r\n\r\n", 5, NULL, 0, close);
  else conn_write2(c, NULL, 0, NULL, 0, true);
  answer_done(c, close);
}

/* ---- parsing -------------------------------------------------------------------------------------- */

static bool append(char **buf, size_t *len, size_t *cap, const char *at, size_t n, size_t limit) {
  if (*len + n > limit) return false;
  SIM_GROW(*buf, *cap, *len + n + 1);
  memcpy(*buf + *len, at, n);
  *len += n;
  (*buf)[*len] = '\0';
  return true;
}

static int on_message_begin(http_parser *p) {
  http_conn *c = p->data;
  c->url_len = c->body_len = 0;
  c->fail_status = 0;
  c->hdr_len = 0;
  c->expect_continue = false;
  return 0;
}

static int on_url(http_parser *p, const char *at, size_t n) {
  http_conn *c = p->data;
  if (!append(&c->url, &c->url_len, &c->url_cap, at, n, MAX_URL)) {
    c->fail_status = 414;
    return 1;
  }
  return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t n) {
  http_conn *c = p->data;
  /* names may arrive in pieces; the value callback resets it for the next name */
  if (c->hdr_len + n < sizeof c->hdr) memcpy(c->hdr + c->hdr_len, at, n), c->hdr_len += n;
  else c->hdr_len = sizeof c->hdr; /* too long to be "expect" */
  return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n) {
  http_conn *c = p->data;
  if (c->hdr_len == 6 && !strncasecmp(c->hdr, "expect", 6)) {
    if (n >= 12 && !strncasecmp(at, "100-continue", 12)) c->expect_continue = true;
  }
  c->hdr_len = 0;
  return 0;
}

static int on_headers_complete(http_parser *p) {
  http_conn *c = p->data;
  if ((p->flags & F_CONTENTLENGTH) && p->content_length > c->srv->o.max_body) { /* refused before its body */
    c->fail_status = 413;
    return -1; /* an error (1 would mean "no body follows") */
  }
  if (c->expect_continue && !c->busy) { /* curl asks before sending a body over 1 KiB */
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    conn_write2(c, cont, sizeof cont - 1, NULL, 0, false);
  }
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t n) {
  http_conn *c = p->data;
  if (!append(&c->body, &c->body_len, &c->body_cap, at, n, c->srv->o.max_body)) {
    c->fail_status = 413;
    return 1;
  }
  return 0;
}

static int on_message_complete(http_parser *p) {
  http_conn *c = p->data;
  c->ready = true;
  c->keep_alive = http_should_keep_alive(p) != 0;
  http_parser_pause(p, 1); /* one request at a time */
  return 0;
}

/* The one answer to a request that is not read further: reading stops for good, what was read ahead is
 * dropped, and the connection closes once the answer is written (connection: close). */
static void fail(http_conn *c, int status, const char *why) {
  char body[256];
  int n = snprintf(body, sizeof body, "{\"error\":{\"message\":\"%s\",\"type\":\"BadRequestError\",\"param\":null,"
                   "\"code\":%d}}", why, status);
  c->refused = true;
  c->in_len = 0;
  if (c->reading) {
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = false;
  }
  c->keep_alive = false;
  if (!c->busy) c->busy = true, c->srv->n_busy++;
  c->streaming = false;
  http_respond(c, status, "application/json", body, (size_t)n);
}

static void dispatch(http_conn *c) {
  http_server *s = c->srv;
  c->busy = true;
  s->n_busy++;
  c->user = NULL;
  if (!c->url) append(&c->url, &c->url_len, &c->url_cap, "", 0, MAX_URL);
  if (!c->body) append(&c->body, &c->body_len, &c->body_cap, "", 0, SIZE_MAX);
  char *q = strchr(c->url, '?');
  if (q) *q = '\0';
  http_request rq = {http_method_str((enum http_method)c->parser.method), c->url, c->body, c->body_len};
  s->h.request(s->h.ctx, c, &rq);
}

/* Parses what was read, one request at a time. */
static void pump(http_conn *c) {
  c->in_pump = true;
  while (!c->busy && !c->closing && !c->refused && c->in_len) {
    size_t n = http_parser_execute(&c->parser, &c->srv->settings, c->in, c->in_len);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) {
      http_parser_pause(&c->parser, 0);
    } else if (e != HPE_OK) {
      if (c->fail_status == 413) fail(c, 413, "request body too large");
      else if (c->fail_status == 414) fail(c, 414, "URL too long");
      else {
        char why[160];
        snprintf(why, sizeof why, "malformed HTTP request: %s", http_errno_description(e));
        fail(c, 400, why);
      }
      break;
    }
    if (n > c->in_len) n = c->in_len;
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
    if (c->ready) {
      c->ready = false;
      dispatch(c);
    }
  }
  c->in_pump = false;
}

static void pump_cb(uv_idle_t *h) {
  http_server *s = h->data;
  for (http_conn *c = s->conns; c && s->n_pump_pending; c = c->next)
    if (c->pump_pending) {
      c->pump_pending = false;
      s->n_pump_pending--;
      if (!c->closing && !c->refused) pump(c);
    }
  if (!s->n_pump_pending) uv_idle_stop(&s->pumper);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  http_conn *c = (http_conn *)h;
  /* the server's buffer: read_cb consumes it before the next read */
  *buf = uv_buf_init(c->srv->rbuf, READ_BUF);
}

static void read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
  http_conn *c = (http_conn *)st;
  if (nread < 0) { /* EOF or error: the client is gone (an owed answer is aborted) */
    conn_close(c);
    return;
  }
  if (nread == 0 || c->refused) return; /* after a refusal: ignored (reading is stopped) */
  if (!append(&c->in, &c->in_len, &c->in_cap, buf->base, (size_t)nread, SIZE_MAX)) return;
  if (c->busy) {
    if (c->in_len > MAX_PENDING_IN) { /* read-ahead full: wait for the answer */
      uv_read_stop(st);
      c->reading = false;
    }
    return;
  }
  pump(c);
}

static void start_reading(http_conn *c) { uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb); }

/* ---- accepting ------------------------------------------------------------------------------------ */

static void on_connection(uv_stream_t *l, int status) {
  http_server *s = l->data;
  if (status < 0) return;
  http_conn *c = sim_calloc(1, sizeof *c);
  c->srv = s;
  uv_tcp_init(s->loop, &c->tcp);
  if (uv_accept(l, (uv_stream_t *)&c->tcp) < 0) {
    c->reject_only = true;
    conn_close(c);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  if (s->n_conns >= s->o.max_conns || s->draining) {
    c->reject_only = true;
    char h[256];
    size_t bl = strlen(s->busy_body);
    int n = snprintf(h, sizeof h,
                     "HTTP/1.1 503 Service Unavailable\r\nserver: servesim\r\ncontent-type: application/json\r\n"
                     "content-length: %zu\r\nconnection: close\r\n\r\n", bl);
    conn_write2(c, h, (size_t)n, s->busy_body, bl, true);
    return;
  }
  c->next = s->conns;
  if (s->conns) s->conns->prev = c;
  s->conns = c;
  s->n_conns++;
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  c->idle_since_ms = uv_now(s->loop);
  c->reading = true;
  start_reading(c);
}

static void sweep_cb(uv_timer_t *t) { /* closes keep-alive connections idle too long */
  http_server *s = t->data;
  uint64_t now = uv_now(s->loop), limit = (uint64_t)(s->o.idle_timeout_s * 1000.0);
  for (http_conn *c = s->conns; c; c = c->next)
    if (!c->busy && !c->closing && !c->in_len && now - c->idle_since_ms > limit) conn_close(c);
}

static void handle_closed_cb(uv_handle_t *h) {
  http_server *s = h->data;
  s->handles_open--;
  server_maybe_free(s);
}

int http_server_start(http_server **out, uv_loop_t *loop, const http_opts *o, const http_handlers *h, sim_err *err) {
  *out = NULL;
  struct sockaddr_storage addr;
  if (uv_ip4_addr(o->host, o->port, (struct sockaddr_in *)&addr) &&
      uv_ip6_addr(o->host, o->port, (struct sockaddr_in6 *)&addr))
    return sim_errf(err, SIM_EINPUT, "--host: '%s' is not an IPv4 or IPv6 address", o->host);
  http_server *s = sim_calloc(1, sizeof *s);
  s->loop = loop;
  s->h = *h;
  s->o = *o;
  if (!s->o.max_conns) s->o.max_conns = 1024;
  if (!s->o.max_body) s->o.max_body = 16u << 20;
  if (s->o.idle_timeout_s <= 0) s->o.idle_timeout_s = 5.0;
  s->busy_body = sim_strdup(o->busy_body ? o->busy_body : "{}");
  s->settings.on_message_begin = on_message_begin;
  s->settings.on_url = on_url;
  s->settings.on_header_field = on_header_field;
  s->settings.on_header_value = on_header_value;
  s->settings.on_headers_complete = on_headers_complete;
  s->settings.on_body = on_body;
  s->settings.on_message_complete = on_message_complete;
  uv_tcp_init(loop, &s->listener);
  s->listener.data = s;
  s->handles_open++;
  int rc = uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0);
  if (!rc) rc = uv_listen((uv_stream_t *)&s->listener, 511, on_connection);
  if (rc) {
    sim_errf(err, SIM_EINPUT, "cannot listen on %s port %d: %s", o->host, o->port, uv_strerror(rc));
    s->closed = true;
    uv_close((uv_handle_t *)&s->listener, handle_closed_cb);
    return err->code;
  }
  s->listening = true;
  uv_idle_init(loop, &s->pumper);
  s->pumper.data = s;
  s->handles_open++;
  uv_timer_init(loop, &s->sweeper);
  s->sweeper.data = s;
  s->handles_open++;
  uv_timer_start(&s->sweeper, sweep_cb, 1000, 1000);
  uv_unref((uv_handle_t *)&s->sweeper);
  *out = s;
  return SIM_OK;
}

int http_server_port(const http_server *s) {
  struct sockaddr_storage a;
  int len = sizeof a;
  if (uv_tcp_getsockname(&s->listener, (struct sockaddr *)&a, &len)) return -1;
  if (a.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&a)->sin_port);
  return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
}

static void stop_listening(http_server *s) {
  if (!s->listening) return;
  s->listening = false;
  uv_close((uv_handle_t *)&s->listener, handle_closed_cb);
}

void http_server_drain(http_server *s) {
  s->draining = true;
  stop_listening(s);
  for (http_conn *c = s->conns; c; c = c->next)
    if (!c->busy) conn_close(c);
}

void http_server_close(http_server *s) {
  if (s->closed) return;
  stop_listening(s);
  for (http_conn *c = s->conns; c; c = c->next) conn_close(c);
  uv_close((uv_handle_t *)&s->sweeper, handle_closed_cb);
  uv_close((uv_handle_t *)&s->pumper, handle_closed_cb);
  s->closed = true;
  server_maybe_free(s);
}

size_t http_server_conns(const http_server *s) { return s->n_conns; }
size_t http_server_busy(const http_server *s) { return s->n_busy; }
