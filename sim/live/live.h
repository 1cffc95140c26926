/* live.h: `servesim serve`: the simulated deployment behind a real
 * OpenAI-compatible HTTP endpoint (docs/SERVE.md).
 *
 * One libuv loop runs both: the HTTP server (http.h) and the simulation in
 * wall-clock time. Virtual time is (wall time since start) x speed; a request
 * that arrives is put into the cluster at the virtual now, after every event
 * up to now has run, and one timer is re-armed to the wall deadline of the
 * next event (nanosecond clock, millisecond timer: an event runs at most about
 * a millisecond late). The cluster's hooks send each token when the simulation
 * emits it (an SSE event per token, streamed) and the response when the
 * request ends; a client that disconnects aborts its request (its KV blocks
 * freed). Same deployment, same cluster code as `servesim run`.
 *
 * SIGINT/SIGTERM: stop accepting, let the requests in flight finish (at most
 * drain_s wall seconds, then they are cut), exit 0; a second signal cuts at
 * once. */
#ifndef SIM_LIVE_H
#define SIM_LIVE_H

#include "core/common.h"

struct cluster; /* serve/cluster.h: built by the runner on an empty trace (cmd_serve.c) */

typedef enum eos_kind { EOS_GEOMETRIC = 0, EOS_FIXED, EOS_UNIFORM, EOS_LOGNORMAL } eos_kind;

/* Where a request without ignore_eos would stop (its output is capped by
 * max_tokens): geometric with mean a (an end-of-sequence chance of 1/a per
 * token), fixed a, uniform [a, b], lognormal with median a and sigma b. */
typedef struct eos_dist {
  eos_kind kind;
  double a, b;
} eos_dist;

/* Parses "geometric:256", "fixed:N", "uniform:LO:HI", "lognormal:MEDIAN:SIGMA". */
int eos_dist_parse(const char *s, eos_dist *out, sim_err *err);
/* One output length (>= 1) from d. */
struct rng;
uint64_t eos_draw(const eos_dist *d, struct rng *g);

typedef struct live_opts {
  const char *host;
  int port;               /* 0 = any free port */
  double speed;           /* simulated seconds per wall second */
  uint32_t max_conns;
  double drain_s;         /* wall seconds to finish requests in flight after SIGINT/SIGTERM */
  const char *served_model_name; /* NULL = the model's name */
  eos_dist eos;
  uint64_t seed;
  bool quiet;             /* no lines on stderr but errors */
  double log_interval_s;  /* every this many wall seconds, one line per busy engine on stderr, as vLLM's
                             LoggingStatLogger (throughputs per simulated second); 0 = none */
} live_opts;

/* What the endpoint says about the deployment (/version, /v1/models, the start line). */
typedef struct live_info {
  const char *model;       /* the model's name */
  const char *engine, *engine_version;
  const char *deployment;  /* one line: "4 x h200 (TP4) x 1 replica" */
  const char *cost_source; /* what serves the step costs */
} live_info;

/* Serves until SIGINT/SIGTERM. c: a cluster built on an empty trace with no
 * time series and no time limit (cmd_serve.c, through the runner); it is
 * opened here (cluster_open) and left for the caller to free. Prints
 * "listening on http://HOST:PORT" on stdout (flushed) once ready. */
int live_serve(struct cluster *c, const live_info *info, const live_opts *o, sim_err *err);

#endif
