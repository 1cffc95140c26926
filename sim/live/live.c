/* live.c: `servesim serve` (see live.h). */
#include "live/live.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "core/rng.h"
#include "live/http.h"
#include "live/openai.h"
#include "live/prom.h"
#include "serve/cluster.h"

/* ---- the output-length distribution ---------------------------------------------------------------- */

int eos_dist_parse(const char *s, eos_dist *out, sim_err *err) {
  char kind[16];
  double a = 0, b = 0;
  int n = 0, got = sscanf(s, "%15[a-z]:%lf%n", kind, &a, &n);
  if (got == 2 && s[n] == ':') {
    int m = 0;
    if (sscanf(s + n + 1, "%lf%n", &b, &m) == 1) n += 1 + m;
    else n = -1;
  }
  if (got != 2 || n < 0 || s[n] != '\0')
    return sim_errf(err, SIM_EINPUT, "--eos-dist: '%s' is not KIND:ARGS (geometric:MEAN, fixed:N, uniform:LO:HI, "
                    "lognormal:MEDIAN:SIGMA)", s);
  bool two = strchr(strchr(s, ':') + 1, ':') != NULL;
  memset(out, 0, sizeof *out);
  out->a = a, out->b = b;
  if (!strcmp(kind, "geometric") && !two && a >= 1 && a <= 1e7) out->kind = EOS_GEOMETRIC;
  else if (!strcmp(kind, "fixed") && !two && a >= 1 && a <= 1e7 && a == floor(a)) out->kind = EOS_FIXED;
  else if (!strcmp(kind, "uniform") && two && a >= 1 && b >= a && b <= 1e7) out->kind = EOS_UNIFORM;
  else if (!strcmp(kind, "lognormal") && two && a >= 1 && a <= 1e7 && b >= 0 && b <= 5) out->kind = EOS_LOGNORMAL;
  else
    return sim_errf(err, SIM_EINPUT, "--eos-dist: '%s': geometric:MEAN (MEAN >= 1), fixed:N (N >= 1), uniform:LO:HI "
                    "(1 <= LO <= HI), lognormal:MEDIAN:SIGMA (MEDIAN >= 1, 0 <= SIGMA <= 5)", s);
  return SIM_OK;
}

uint64_t eos_draw(const eos_dist *d, rng *g) {
  double v;
  switch (d->kind) {
    case EOS_FIXED: v = d->a; break;
    case EOS_UNIFORM: v = (double)rng_int_range(g, (int64_t)ceil(d->a), (int64_t)floor(d->b)); break;
    case EOS_LOGNORMAL: v = floor(rng_lognormal(g, log(d->a), d->b) + 0.5); break;
    default: { /* tokens up to and including the first end-of-sequence, p = 1/mean per token */
      double p = 1.0 / d->a, u = rng_uniform(g);
      v = p >= 1.0 ? 1.0 : ceil(log1p(-u) / log1p(-p));
    }
  }
  if (!(v >= 1)) v = 1;
  return v > 4e9 ? 4000000000ull : (uint64_t)v;
}

/* ---- state ---------------------------------------------------------------------------------------- */

typedef struct exch { /* one request being answered */
  http_conn *conn;
  uint32_t idx;       /* its request in the cluster */
  oai_kind kind;
  bool stream, include_usage, by_eos;
  uint64_t prompt_tokens, output_tokens, sent;
  uint64_t max_tokens; /* as asked, or vLLM's default (the rest of the context) */
  sim_ns last_token_ns;
  char id[48];
  long long created;
} exch;

typedef struct live {
  live_info info;
  cluster *c;
  live_opts o;
  char model[256];
  uv_loop_t loop;
  int tfd;            /* timerfd (CLOCK_MONOTONIC, uv_hrtime's clock): wakes the loop at the next event's wall
                         deadline to the microsecond (libuv's own timers count whole milliseconds) */
  uv_poll_t timer;
  uv_signal_t sigint, sigterm;
  uv_timer_t drain_timer;
  uv_timer_t log_timer;
  sim_ns log_vnow;             /* virtual time of the last log line */
  uint64_t *log_prompt, *log_gen; /* per engine: counters at the last log line */
  http_server *http;
  uint64_t t0;        /* uv_hrtime at start */
  sim_ns vnow;        /* the virtual time the simulation has run to */
  exch **by_req;      /* request slot -> its exchange (NULL: none) */
  size_t cap_by_req;
  size_t n_exch;
  rng g;
  uint64_t serial;
  prom pm;
  uint64_t served, rejected, aborted, errors;
  int signals;
  bool draining, stopping;
  oai_buf buf;        /* scratch for responses */
} live;

static sim_ns wall_vnow(const live *L) {
  double v = (double)(uv_hrtime() - L->t0) * L->o.speed;
  return v >= 1.8e19 ? (sim_ns)1.8e19 : (sim_ns)v;
}

static void arm(live *L);

/* Runs the simulation up to the wall clock's virtual now. */
static void advance(live *L) {
  sim_ns now = wall_vnow(L);
  if (now < L->vnow) now = L->vnow;
  cluster_run_slice(L->c, UINT64_MAX, now);
  L->vnow = now;
}

/* Wakes at `wall_ns` (uv_hrtime's clock); 0 disarms. */
static void set_alarm(live *L, uint64_t wall_ns) {
  struct itimerspec it;
  memset(&it, 0, sizeof it);
  if (wall_ns) {
    it.it_value.tv_sec = (time_t)(wall_ns / 1000000000ull);
    it.it_value.tv_nsec = (long)(wall_ns % 1000000000ull);
    if (!it.it_value.tv_sec && !it.it_value.tv_nsec) it.it_value.tv_nsec = 1;
  }
  timerfd_settime(L->tfd, wall_ns ? TFD_TIMER_ABSTIME : 0, &it, NULL);
}

static void on_timer(uv_poll_t *h, int status, int events) {
  (void)status, (void)events;
  live *L = h->data;
  uint64_t expirations;
  if (read(L->tfd, &expirations, sizeof expirations) < 0) { /* EAGAIN: already read; nothing else can fail */
  }
  uint64_t start = uv_hrtime();
  for (;;) {
    advance(L);
    sim_ns next = cluster_next_time(L->c);
    if (next == SIM_NS_INF) break;
    double ahead_ns = (double)(next - L->vnow) / L->o.speed; /* wall ns until it is due */
    if (ahead_ns > 0 || uv_hrtime() - start > 5000000ull) break; /* due later, or 5 ms spent: serve the sockets */
  }
  arm(L);
}

/* Arms the alarm to the wall deadline of the next event (at once if it is due). */
static void arm(live *L) {
  sim_ns next = cluster_next_time(L->c);
  if (next == SIM_NS_INF || L->stopping) {
    set_alarm(L, 0);
    return;
  }
  double due = (double)L->t0 + (double)next / L->o.speed;
  set_alarm(L, due >= 1.8e19 ? (uint64_t)1.8e19 : (uint64_t)due);
}

static exch *exch_of(live *L, uint32_t idx) { return idx < L->cap_by_req ? L->by_req[idx] : NULL; }

static void exch_free(live *L, exch *e) {
  if (e->idx < L->cap_by_req && L->by_req[e->idx] == e) L->by_req[e->idx] = NULL;
  free(e);
  L->n_exch--;
}

static void reply_of(const live *L, const exch *e, oai_reply *out) {
  memset(out, 0, sizeof *out);
  out->kind = e->kind;
  out->id = e->id;
  out->created = e->created;
  out->model = L->model;
  out->prompt_tokens = e->prompt_tokens;
  out->completion_tokens = e->sent;
}

static void respond_json(http_conn *conn, int status, const oai_buf *b) {
  http_respond(conn, status, "application/json", b->p ? b->p : "", b->len);
}

static void respond_error(live *L, http_conn *conn, int status, const char *msg) {
  L->buf.len = 0;
  oai_error(&L->buf, status, msg);
  respond_json(conn, status, &L->buf);
  L->errors++;
}

static void maybe_finish_drain(live *L);

/* ---- the cluster's hooks -------------------------------------------------------------------------- */

static void on_tokens(void *ctx, uint32_t idx, sim_ns now) {
  live *L = ctx;
  exch *e = exch_of(L, idx);
  const request *rq = cluster_request(L->c, idx);
  prom_engine *pe = &L->pm.e[rq->replica];
  uint64_t step_tokens = 1; /* vLLM's IterationStats: the prompt of a request in its first token's step, plus the
                               tokens sampled (so vllm:iteration_tokens_total sums the two counters) */
  if (rq->generated == 1) {
    prom_observe(&L->pm, rq->replica, PH_TTFT, (double)(now - rq->arrival_ns) / 1e9);
    pe->prompt_tokens += rq->prompt_tokens;
    step_tokens += rq->prompt_tokens;
  } else if (e) {
    prom_observe(&L->pm, rq->replica, PH_ITL, (double)(now - e->last_token_ns) / 1e9);
  }
  pe->generation_tokens++;
  prom_step_tokens(&L->pm, rq->replica, now, step_tokens); /* the tokens of one step come at its end time */
  if (!e) return;
  e->last_token_ns = now;
  uint64_t fresh = rq->generated - e->sent;
  if (!fresh) return;
  bool first = e->sent == 0;
  e->sent = rq->generated;
  if (!e->stream) return;
  oai_reply rp;
  reply_of(L, e, &rp);
  L->buf.len = 0;
  if (first && e->kind == OAI_CHAT) oai_chunk(&L->buf, &rp, 0, true);
  if (e->sent >= e->output_tokens) rp.finish_reason = e->by_eos ? "stop" : "length";
  oai_chunk(&L->buf, &rp, (uint32_t)fresh, false);
  http_stream_write(e->conn, L->buf.p, L->buf.len);
}

static const char *reject_message(const live *L, const request *rq, int *status, char *buf, size_t cap) {
  const cluster_cfg *cfg = cluster_config(L->c);
  switch ((rq_reject)rq->reject) {
    case REJ_TOO_LONG:
      *status = 400;
      snprintf(buf, cap, "This model's maximum context length is %u tokens. However, you requested %llu tokens (%u "
               "in the messages, %u in the completion). Please reduce the length of the messages or completion.",
               cfg->max_model_len, (unsigned long long)rq->prompt_tokens + rq->output_tokens, rq->prompt_tokens,
               rq->output_tokens);
      break;
    case REJ_KV_TOO_SMALL:
      *status = 400;
      snprintf(buf, cap, "the request needs %llu KV blocks of %u tokens, more than a replica's whole KV cache (%u "
               "blocks)", ((unsigned long long)rq->prompt_tokens + rq->output_tokens + cfg->block_tokens - 1) /
               cfg->block_tokens, cfg->block_tokens, cfg->kv_blocks);
      break;
    case REJ_NO_REPLICA:
      *status = 503;
      snprintf(buf, cap, "every replica of the simulated deployment has failed");
      break;
    default:
      *status = 500;
      snprintf(buf, cap, "the request could not be served");
  }
  return buf;
}

/* vLLM's per-request histograms of a finished request (intervals: prom.c, after vllm/v1/metrics/stats.py). */
static void observe_finished(live *L, const request *rq, const exch *e) {
  uint32_t ri = rq->replica;
  if (rq->first_sched_ns != SIM_NS_INF && rq->first_sched_ns <= rq->first_token_ns) {
    prom_observe(&L->pm, ri, PH_PREFILL, (double)(rq->first_token_ns - rq->first_sched_ns) / 1e9);
    prom_observe(&L->pm, ri, PH_INFERENCE, (double)(rq->last_token_ns - rq->first_sched_ns) / 1e9);
  }
  prom_observe(&L->pm, ri, PH_DECODE, (double)(rq->last_token_ns - rq->first_token_ns) / 1e9);
  prom_observe(&L->pm, ri, PH_PROMPT, (double)rq->prompt_tokens);
  prom_observe(&L->pm, ri, PH_GEN, (double)rq->generated);
  prom_observe(&L->pm, ri, PH_MAX_GEN, (double)rq->generated);
  if (e) prom_observe(&L->pm, ri, PH_MAX_TOKENS, (double)e->max_tokens);
}

static void on_closed(void *ctx, uint32_t idx, sim_ns now) {
  live *L = ctx;
  exch *e = exch_of(L, idx);
  const request *rq = cluster_request(L->c, idx);
  if (rq->state == RQ_FINISHED) {
    L->served++;
    uint32_t ri = rq->replica;
    prom_observe(&L->pm, ri, PH_E2E, (double)(now - rq->arrival_ns) / 1e9);
    if (rq->first_sched_ns != SIM_NS_INF && rq->queued_ns != SIM_NS_INF)
      prom_observe(&L->pm, ri, PH_QUEUE, (double)(rq->first_sched_ns - rq->queued_ns) / 1e9);
    observe_finished(L, rq, e);
    L->pm.e[ri].success[e && e->by_eos ? PR_STOP : PR_LENGTH]++;
  } else {
    L->rejected++;
  }
  if (!e) return;
  oai_reply rp;
  reply_of(L, e, &rp);
  L->buf.len = 0;
  if (rq->state == RQ_FINISHED) {
    rp.finish_reason = e->by_eos ? "stop" : "length";
    if (e->stream) {
      if (e->include_usage) oai_usage_chunk(&L->buf, &rp);
      oai_printf(&L->buf, "data: [DONE]\n\n");
      http_stream_write(e->conn, L->buf.p, L->buf.len);
      http_stream_end(e->conn);
    } else {
      oai_response(&L->buf, &rp);
      respond_json(e->conn, 200, &L->buf);
    }
  } else {
    char msg[512];
    int status = 500;
    reject_message(L, rq, &status, msg, sizeof msg);
    if (e->stream) {
      oai_stream_error(&L->buf, status, msg);
      oai_printf(&L->buf, "data: [DONE]\n\n");
      http_stream_write(e->conn, L->buf.p, L->buf.len);
      http_stream_end(e->conn);
    } else {
      oai_error(&L->buf, status, msg);
      respond_json(e->conn, status, &L->buf);
    }
  }
  exch_free(L, e);
  if (L->draining) maybe_finish_drain(L);
}

/* ---- HTTP ----------------------------------------------------------------------------------------- */

static void answer(live *L, http_conn *conn, oai_kind kind, const oai_request *q);

static void completions(live *L, http_conn *conn, const http_request *rq, oai_kind kind) {
  oai_request q;
  char msg[512];
  const cluster_cfg *cfg = cluster_config(L->c);
  int st = oai_parse(kind, rq->body, rq->body_len, cfg->prefix_caching ? cfg->block_tokens : 0, &q, msg, sizeof msg);
  if (st) {
    oai_request_free(&q);
    respond_error(L, conn, st, msg);
    return;
  }
  answer(L, conn, kind, &q);
  oai_request_free(&q);
}

/* A parsed request: checked against the deployment, then into the simulation. */
static void answer(live *L, http_conn *conn, oai_kind kind, const oai_request *q) {
  char msg[512];
  if (q->model_too_long || (q->model[0] && strcmp(q->model, L->model))) {
    snprintf(msg, sizeof msg, "The model `%.200s%s` does not exist.", q->model, q->model_too_long ? "..." : "");
    respond_error(L, conn, 404, msg);
    return;
  }
  uint64_t max_len = cluster_config(L->c)->max_model_len, max_tokens = q->max_tokens;
  if (!q->has_max_tokens) { /* vLLM: the rest of the context */
    if (q->prompt_tokens >= max_len) {
      snprintf(msg, sizeof msg, "This model's maximum context length is %llu tokens. However, you requested %llu "
               "tokens in the messages, Please reduce the length of the messages.", (unsigned long long)max_len,
               (unsigned long long)q->prompt_tokens);
      respond_error(L, conn, 400, msg);
      return;
    }
    max_tokens = max_len - q->prompt_tokens;
  }
  if (q->prompt_tokens + max_tokens > max_len) {
    snprintf(msg, sizeof msg, "This model's maximum context length is %llu tokens. However, you requested %llu tokens "
             "(%llu in the messages, %llu in the completion). Please reduce the length of the messages or "
             "completion.", (unsigned long long)max_len, (unsigned long long)(q->prompt_tokens + max_tokens),
             (unsigned long long)q->prompt_tokens, (unsigned long long)max_tokens);
    respond_error(L, conn, 400, msg);
    return;
  }
  if (q->prompt_tokens == 0) {
    respond_error(L, conn, 400, "the prompt is empty");
    return;
  }
  uint64_t out = max_tokens;
  bool by_eos = false;
  if (!q->ignore_eos) {
    uint64_t d = eos_draw(&L->o.eos, &L->g);
    if (d < out) out = d, by_eos = true;
  }
  exch *e = sim_calloc(1, sizeof *e);
  L->n_exch++;
  e->conn = conn;
  e->kind = kind;
  e->stream = q->stream;
  e->include_usage = q->include_usage;
  e->by_eos = by_eos;
  e->prompt_tokens = q->prompt_tokens;
  e->output_tokens = out;
  e->max_tokens = max_tokens;
  e->created = (long long)time(NULL);
  snprintf(e->id, sizeof e->id, "%s-%016llx%08llx", kind == OAI_CHAT ? "chatcmpl" : "cmpl",
           (unsigned long long)L->o.seed, (unsigned long long)++L->serial);
  http_conn_set_user(conn, e);
  advance(L);
  uint32_t idx = cluster_new_request(L->c, (uint32_t)q->prompt_tokens, (uint32_t)out);
  cluster_set_prompt_ids(L->c, idx, q->ids, q->n_ids);
  e->idx = idx;
  if (idx >= L->cap_by_req) {
    size_t old = L->cap_by_req;
    SIM_GROW(L->by_req, L->cap_by_req, (size_t)idx + 1);
    memset(L->by_req + old, 0, (L->cap_by_req - old) * sizeof *L->by_req);
  }
  L->by_req[idx] = e;
  if (e->stream) http_stream_start(conn, 200, "text/event-stream; charset=utf-8");
  cluster_arrive(L->c, idx, L->vnow); /* may close it at once (on_closed answers) */
  arm(L);
}

static void metrics(live *L, http_conn *conn) {
  advance(L);
  arm(L);
  prom_steps_flush(&L->pm); /* every step up to now has ended */
  uint32_t n = L->pm.n_engines;
  prom_gauges *g = sim_calloc(n, sizeof *g);
  for (uint32_t i = 0; i < n; i++) {
    const sched *s = cluster_replica(L->c, i);
    g[i].running = sched_num_running(s);
    g[i].waiting = sched_num_waiting(s);
    g[i].kv_usage = kv_usage(s->kv);
    g[i].preemptions = s->preemptions;
    g[i].prefix_queries = s->prefix_queries;
    g[i].prefix_hits = s->prefix_hits;
  }
  L->buf.len = 0;
  prom_write(&L->pm, L->model, g, &L->buf);
  free(g);
  http_respond(conn, 200, "text/plain; version=0.0.4; charset=utf-8", L->buf.p, L->buf.len);
}

static void detail(http_conn *conn, int status) {
  char b[96];
  int n = snprintf(b, sizeof b, "{\"detail\":\"%s\"}", http_status_text(status));
  http_respond(conn, status, "application/json", b, (size_t)n);
}

static void on_request(void *ctx, http_conn *conn, const http_request *rq) {
  live *L = ctx;
  const char *p = rq->path;
  bool get = !strcmp(rq->method, "GET"), post = !strcmp(rq->method, "POST");
  if (!strcmp(p, "/v1/completions") || !strcmp(p, "/v1/chat/completions")) {
    if (!post) {
      detail(conn, 405);
      return;
    }
    completions(L, conn, rq, p[4] == 'c' && p[5] == 'h' ? OAI_CHAT : OAI_COMPLETIONS);
    return;
  }
  bool known = !strcmp(p, "/health") || !strcmp(p, "/version") || !strcmp(p, "/v1/models") || !strcmp(p, "/metrics");
  if (!known) {
    detail(conn, 404);
    return;
  }
  if (!get) {
    detail(conn, 405);
    return;
  }
  L->buf.len = 0;
  if (!strcmp(p, "/health")) {
    http_respond(conn, 200, "application/json", "", 0);
  } else if (!strcmp(p, "/version")) {
    oai_printf(&L->buf, "{\"version\":");
    char v[128];
    snprintf(v, sizeof v, "servesim %s (simulating %s %s)", SERVESIM_VERSION, L->info.engine,
             L->info.engine_version[0] ? L->info.engine_version : "(version not stated)");
    oai_json_str(&L->buf, v);
    oai_printf(&L->buf, "}");
    respond_json(conn, 200, &L->buf);
  } else if (!strcmp(p, "/v1/models")) {
    oai_printf(&L->buf, "{\"object\":\"list\",\"data\":[{\"id\":");
    oai_json_str(&L->buf, L->model);
    oai_printf(&L->buf, ",\"object\":\"model\",\"created\":%lld,\"owned_by\":\"vllm\",\"root\":", (long long)time(NULL));
    oai_json_str(&L->buf, L->model);
    oai_printf(&L->buf, ",\"parent\":null,\"max_model_len\":%u,\"permission\":[]}]}",
               cluster_config(L->c)->max_model_len);
    respond_json(conn, 200, &L->buf);
  } else {
    metrics(L, conn);
  }
}

/* The client went away (or the server is closing): its request is aborted in
 * the simulation, at the virtual time the simulation has reached (the client
 * left in between; running events here would answer on the closed
 * connection from inside this callback). */
static void on_gone(void *ctx, http_conn *conn, void *user) {
  (void)conn;
  live *L = ctx;
  exch *e = user;
  if (!e) return;
  if (exch_of(L, e->idx) == e) { /* still open: an exchange is freed when its request closes */
    const request *rq = cluster_request(L->c, e->idx);
    if (rq->replica != UINT32_MAX && rq->replica < L->pm.n_engines) L->pm.e[rq->replica].success[PR_ABORT]++;
    cluster_cancel(L->c, e->idx, L->vnow);
    arm(L);
  }
  L->aborted++;
  exch_free(L, e);
  if (L->draining) maybe_finish_drain(L);
}

/* ---- the periodic log line (vLLM's LoggingStatLogger) -------------------------------------------------- */

static void on_log(uv_timer_t *t) {
  live *L = t->data;
  advance(L);
  arm(L);
  double dt = (double)(L->vnow - L->log_vnow) / 1e9;
  for (uint32_t i = 0; i < L->pm.n_engines; i++) {
    const sched *s = cluster_replica(L->c, i);
    uint64_t dp = L->pm.e[i].prompt_tokens - L->log_prompt[i], dg = L->pm.e[i].generation_tokens - L->log_gen[i];
    L->log_prompt[i] = L->pm.e[i].prompt_tokens, L->log_gen[i] = L->pm.e[i].generation_tokens;
    uint32_t run = sched_num_running(s), wait = sched_num_waiting(s);
    if (!dp && !dg && !run && !wait) continue; /* an idle engine stays quiet, as vLLM's */
    double hit = s->prefix_queries ? 100.0 * (double)s->prefix_hits / (double)s->prefix_queries : 0.0;
    fprintf(stderr, "servesim serve: Engine %03u: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: "
            "%.1f tokens/s, Running: %u reqs, Waiting: %u reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: "
            "%.1f%% (simulated time %.1f s)\n", i, dt > 0 ? (double)dp / dt : 0.0, dt > 0 ? (double)dg / dt : 0.0,
            run, wait, 100.0 * kv_usage(s->kv), hit, (double)L->vnow / 1e9);
  }
  L->log_vnow = L->vnow;
}

/* ---- shutdown ------------------------------------------------------------------------------------- */

static void close_cb(uv_handle_t *h) { (void)h; }

static void stop_everything(live *L) {
  if (L->stopping) return;
  L->stopping = true;
  http_server_close(L->http); /* gone() aborts what is left */
  uv_timer_stop(&L->drain_timer);
  uv_timer_stop(&L->log_timer);
  uv_signal_stop(&L->sigint);
  uv_signal_stop(&L->sigterm);
  set_alarm(L, 0);
  uv_poll_stop(&L->timer);
}

static void maybe_finish_drain(live *L) {
  if (L->n_exch == 0 && !L->stopping) stop_everything(L);
}

static void on_drain_timeout(uv_timer_t *t) {
  live *L = t->data;
  if (!L->o.quiet) fprintf(stderr, "servesim serve: %zu requests still in flight after %g s: cutting them\n", L->n_exch, L->o.drain_s);
  stop_everything(L);
}

static void on_signal(uv_signal_t *h, int signum) {
  live *L = h->data;
  L->signals++;
  if (L->signals > 1) {
    stop_everything(L);
    return;
  }
  if (!L->o.quiet)
    fprintf(stderr, "servesim serve: %s: no new connections; finishing %zu request%s in flight (up to %g s; again to "
            "cut %s)\n", signum == SIGTERM ? "SIGTERM" : "SIGINT", L->n_exch, L->n_exch == 1 ? "" : "s", L->o.drain_s,
            L->n_exch == 1 ? "it" : "them");
  L->draining = true;
  http_server_drain(L->http);
  uv_timer_start(&L->drain_timer, on_drain_timeout, (uint64_t)(L->o.drain_s * 1000.0), 0);
  maybe_finish_drain(L);
}

int live_serve(cluster *c, const live_info *info, const live_opts *o, sim_err *err) {
  live *L = sim_calloc(1, sizeof *L);
  L->info = *info;
  L->c = c;
  L->o = *o;
  snprintf(L->model, sizeof L->model, "%s", o->served_model_name ? o->served_model_name : info->model);
  rng_seed(&L->g, o->seed);
  prom_init(&L->pm, cluster_config(L->c)->replicas,
            info->engine && !strcmp(info->engine, "sglang") ? PROM_SGLANG : PROM_VLLM,
            cluster_config(L->c)->max_model_len);
  cluster_hooks hk = {L, on_tokens, on_closed};
  cluster_open(L->c, &hk);
  int rc = uv_loop_init(&L->loop);
  if (rc) {
    prom_free(&L->pm);
    free(L);
    return sim_errf(err, SIM_EINTERNAL, "uv_loop_init: %s", uv_strerror(rc));
  }
  char busy[256];
  snprintf(busy, sizeof busy, "{\"error\":{\"message\":\"too many connections (limit %u): try again later\","
           "\"type\":\"ServiceUnavailableError\",\"param\":null,\"code\":503}}", o->max_conns);
  http_opts ho = {o->host, o->port, o->max_conns, 0, 0, busy};
  http_handlers hh = {L, on_request, on_gone};
  rc = http_server_start(&L->http, &L->loop, &ho, &hh, err);
  L->tfd = -1;
  if (!rc) {
    L->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (L->tfd < 0) rc = sim_errf(err, SIM_EINTERNAL, "timerfd_create failed");
  }
  if (!rc) {
    uv_poll_init(&L->loop, &L->timer, L->tfd);
    uv_poll_start(&L->timer, UV_READABLE, on_timer);
    uv_timer_init(&L->loop, &L->drain_timer);
    uv_signal_init(&L->loop, &L->sigint);
    uv_signal_init(&L->loop, &L->sigterm);
    uv_timer_init(&L->loop, &L->log_timer);
    L->timer.data = L->drain_timer.data = L->log_timer.data = L->sigint.data = L->sigterm.data = L;
    L->log_prompt = sim_calloc(L->pm.n_engines, sizeof *L->log_prompt);
    L->log_gen = sim_calloc(L->pm.n_engines, sizeof *L->log_gen);
    if (o->log_interval_s > 0 && !o->quiet) {
      uint64_t ms = (uint64_t)ceil(o->log_interval_s * 1000.0);
      uv_timer_start(&L->log_timer, on_log, ms, ms);
    }
    uv_signal_start(&L->sigint, on_signal, SIGINT);
    uv_signal_start(&L->sigterm, on_signal, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    L->t0 = uv_hrtime();
    printf("listening on http://%s%s%s:%d\n", strchr(o->host, ':') ? "[" : "", o->host, strchr(o->host, ':') ? "]" : "",
           http_server_port(L->http));
    fflush(stdout);
    if (!o->quiet)
      fprintf(stderr, "servesim serve: %s on %s; %s; speed %gx; Ctrl-C to stop\n", L->model, info->deployment,
              info->cost_source, o->speed);
    uv_run(&L->loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&L->timer, close_cb);
    uv_close((uv_handle_t *)&L->drain_timer, close_cb);
    uv_close((uv_handle_t *)&L->log_timer, close_cb);
    uv_close((uv_handle_t *)&L->sigint, close_cb);
    uv_close((uv_handle_t *)&L->sigterm, close_cb);
    uv_run(&L->loop, UV_RUN_DEFAULT);
    if (!o->quiet)
      fprintf(stderr, "servesim serve: stopped: %llu requests served, %llu rejected, %llu aborted, %llu bad requests\n",
              (unsigned long long)L->served, (unsigned long long)L->rejected, (unsigned long long)L->aborted,
              (unsigned long long)L->errors);
  } else {
    if (L->http) http_server_close(L->http);
    uv_run(&L->loop, UV_RUN_DEFAULT); /* the listener's close */
  }
  if (L->tfd >= 0) close(L->tfd);
  int crc = uv_loop_close(&L->loop);
  if (!rc && crc) rc = sim_errf(err, SIM_EINTERNAL, "uv_loop_close: %s", uv_strerror(crc));
  free(L->by_req);
  free(L->log_prompt);
  free(L->log_gen);
  oai_buf_free(&L->buf);
  prom_free(&L->pm);
  free(L);
  return rc;
}
