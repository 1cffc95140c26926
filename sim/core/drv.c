/* drv.c: libuv loop driving the virtual-time simulation (see drv.h). */
#include "core/drv.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <uv.h>

typedef struct drv_state {
  const drv_ops *ops;
  drv_opts opts;
  uv_loop_t loop;
  uv_idle_t idle;
  uv_timer_t timer;
  uv_signal_t sigint;
  uint64_t wall0_ms;      /* loop time at start (paced mode) */
  uint64_t last_progress_ms;
  sim_ns last_virtual;
  bool interrupted, done;
} drv_state;

static void stop_all(drv_state *s) {
  if (uv_is_active((uv_handle_t *)&s->idle)) uv_idle_stop(&s->idle);
  if (uv_is_active((uv_handle_t *)&s->timer)) uv_timer_stop(&s->timer);
  if (uv_is_active((uv_handle_t *)&s->sigint)) uv_signal_stop(&s->sigint);
  uv_stop(&s->loop);
}

static void maybe_progress(drv_state *s) {
  if (!s->opts.progress_ms || !s->ops->progress) return;
  uint64_t now = uv_now(&s->loop);
  if (now - s->last_progress_ms >= s->opts.progress_ms) {
    s->last_progress_ms = now;
    s->ops->progress(s->ops->ctx, s->last_virtual);
  }
}

static void on_idle(uv_idle_t *h) {
  drv_state *s = h->data;
  uv_update_time(&s->loop);
  s->done = s->ops->run_slice(s->ops->ctx, s->opts.slice_events, SIM_NS_INF);
  sim_ns nt = s->ops->next_time(s->ops->ctx);
  if (nt != SIM_NS_INF) s->last_virtual = nt;
  maybe_progress(s);
  if (s->done) stop_all(s);
}

static void arm_timer(drv_state *s);

static void on_timer(uv_timer_t *h) {
  drv_state *s = h->data;
  uint64_t elapsed_ms = uv_now(&s->loop) - s->wall0_ms;
  double v = (double)elapsed_ms * 1e6 * s->opts.speed;
  sim_ns until = v >= 1.8e19 ? SIM_NS_INF : (sim_ns)v;
  s->done = s->ops->run_slice(s->ops->ctx, UINT64_MAX, until);
  s->last_virtual = until;
  maybe_progress(s);
  if (s->done) stop_all(s);
  else arm_timer(s);
}

static void arm_timer(drv_state *s) {
  sim_ns nt = s->ops->next_time(s->ops->ctx);
  if (nt == SIM_NS_INF) {
    s->done = true;
    stop_all(s);
    return;
  }
  double deadline_ms = (double)nt / 1e6 / s->opts.speed; /* wall ms after wall0 */
  uint64_t now_rel = uv_now(&s->loop) - s->wall0_ms;
  double d = ceil(deadline_ms) - (double)now_rel;
  uint64_t delay = d > 0 ? (uint64_t)d : 0;
  /* libuv 1.44: a timer restarted at timeout 0 from its own callback fires in
   * the same pass; 1 ms keeps the loop turning (signals, progress) */
  if (delay == 0) delay = 1;
  uv_timer_start(&s->timer, on_timer, delay, 0);
}

static void on_sigint(uv_signal_t *h, int signum) {
  (void)signum;
  drv_state *s = h->data;
  s->interrupted = true;
  stop_all(s);
}

static void close_cb(uv_handle_t *h) { (void)h; }

int drv_run(const drv_ops *ops, const drv_opts *opts, bool *interrupted, sim_err *err) {
  drv_state s;
  memset(&s, 0, sizeof s);
  s.ops = ops;
  s.opts = *opts;
  if (!s.opts.slice_events) s.opts.slice_events = 65536;
  int rc = uv_loop_init(&s.loop);
  if (rc) return sim_errf(err, SIM_EINTERNAL, "uv_loop_init: %s", uv_strerror(rc));
  uv_idle_init(&s.loop, &s.idle);
  uv_timer_init(&s.loop, &s.timer);
  uv_signal_init(&s.loop, &s.sigint);
  s.idle.data = s.timer.data = s.sigint.data = &s;
  uv_signal_start(&s.sigint, on_sigint, SIGINT);
  s.wall0_ms = uv_now(&s.loop);
  s.last_progress_ms = s.wall0_ms;
  if (s.opts.speed > 0) arm_timer(&s);
  else uv_idle_start(&s.idle, on_idle);
  if (!s.done) uv_run(&s.loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&s.idle, close_cb);
  uv_close((uv_handle_t *)&s.timer, close_cb);
  uv_close((uv_handle_t *)&s.sigint, close_cb);
  uv_run(&s.loop, UV_RUN_DEFAULT);
  rc = uv_loop_close(&s.loop);
  if (rc) return sim_errf(err, SIM_EINTERNAL, "uv_loop_close: %s", uv_strerror(rc));
  *interrupted = s.interrupted;
  return SIM_OK;
}
