/* http.h: a small HTTP/1.1 server on libuv, for `servesim serve`.
 *
 * Parsing is the http-parser library's (Debian libhttp-parser-dev, the
 * parser Node.js used before llhttp): request line, headers, Content-Length
 * and chunked request bodies, keep-alive rules. This file only moves bytes:
 * it reads, hands each complete request to the caller, and writes what the
 * caller answers (a whole response, or a chunked stream).
 *
 * One request at a time per connection: after a request is complete the
 * connection keeps reading (so a client that goes away is noticed at once)
 * but parses nothing more until the answer is done (pipelined requests wait
 * their turn, answered in order). Limits: URL 8 KiB, body max_body bytes
 * (413), max_conns connections (the next one gets a 503 with
 * busy_body and is closed), a client that does not read its stream (more than
 * 16 MiB queued) is disconnected, keep-alive connections idle longer than
 * idle_timeout_s are closed (uvicorn's timeout_keep_alive, 5 s by default in
 * vLLM's server). A request refused before it is read whole (malformed: 400,
 * headers over http-parser's 80 KiB included; URL: 414; body: 413, at the
 * headers when Content-Length announces it) gets one answer with
 * connection: close; reading stops, what else arrives is ignored, and the
 * connection is closed once the answer is written (FIN, then close).
 *
 * Callbacks never run inside an http_* call made by the caller except
 * `request`, which runs from the loop (reads) or from the call that finishes
 * a previous answer on the same connection (pipelining); `gone` always runs
 * from the loop (a close callback), so the caller may answer or abort from
 * anywhere.
 * Ownership: http_server_start allocates; http_server_close closes every
 * connection and the listener and frees everything once libuv has closed the
 * handles (run the loop until then). */
#ifndef SIM_LIVE_HTTP_H
#define SIM_LIVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "core/common.h"

typedef struct http_server http_server;
typedef struct http_conn http_conn;

typedef struct http_request {
  const char *method; /* "GET", "POST", ... */
  const char *path;   /* the URL's path (no query string), NUL-terminated */
  const char *body;   /* NUL-terminated (body_len bytes before the NUL) */
  size_t body_len;
} http_request;

typedef struct http_handlers {
  void *ctx;
  /* A complete request: answer it (http_respond or http_stream_*), now or later. */
  void (*request)(void *ctx, http_conn *conn, const http_request *rq);
  /* The connection closed (client gone, write error, server closing) while its
   * answer was owed or streaming: `user` is what the caller set on it. The
   * connection is freed after this returns. */
  void (*gone)(void *ctx, http_conn *conn, void *user);
} http_handlers;

typedef struct http_opts {
  const char *host;     /* IPv4 or IPv6 literal */
  int port;             /* 0 = any free port (http_server_port tells which) */
  uint32_t max_conns;   /* open connections; 0 = 1024 */
  size_t max_body;      /* bytes; 0 = 16 MiB */
  double idle_timeout_s; /* keep-alive idle limit; 0 = 5 s */
  const char *busy_body; /* JSON body of the 503 sent past max_conns */
} http_opts;

int http_server_start(http_server **out, uv_loop_t *loop, const http_opts *o, const http_handlers *h, sim_err *err);
int http_server_port(const http_server *s);
/* Stops accepting; idle connections are closed, and every connection closes
 * after its current answer (Connection: close). */
void http_server_drain(http_server *s);
/* Closes everything now (gone is called for connections with an answer owed). */
void http_server_close(http_server *s);
/* Connections open, and those with an answer owed or streaming. */
size_t http_server_conns(const http_server *s);
size_t http_server_busy(const http_server *s);

void http_conn_set_user(http_conn *c, void *user);
/* A whole response (Content-Length). The answer is done. */
void http_respond(http_conn *c, int status, const char *content_type, const char *body, size_t len);
/* A streamed response: headers now, then chunks (chunked transfer coding;
 * an HTTP/1.0 client gets the raw bytes and the connection closes at the end). */
void http_stream_start(http_conn *c, int status, const char *content_type);
void http_stream_write(http_conn *c, const char *data, size_t len);
void http_stream_end(http_conn *c);
/* The reason phrase of a status code ("Not Found"). */
const char *http_status_text(int status);

#endif
