/* pool.c: independent jobs on libuv's thread pool (see pool.h). A private
 * loop per pool_run; after_work callbacks (on this thread) count completions,
 * report progress and queue the next job, keeping at most `jobs` in flight. */
#include "core/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

typedef struct pool_state {
  uv_loop_t loop;
  uv_work_t *reqs; /* one per job; req.data = this state */
  size_t n, next, done;
  pool_work_fn work;
  void *ctx;       /* work's */
  pool_progress_fn progress;
  void *pctx;      /* progress's */
  int fail;        /* libuv error code of a failed queue, 0 = none */
} pool_state;

static void on_work(uv_work_t *w) {
  pool_state *s = w->data;
  s->work(s->ctx, (size_t)(w - s->reqs));
}

static void submit(pool_state *s);

static void on_after(uv_work_t *w, int status) {
  pool_state *s = w->data;
  if (status) s->fail = status;
  s->done++;
  if (s->progress) s->progress(s->pctx, s->done, s->n);
  submit(s);
}

static void submit(pool_state *s) {
  if (s->fail || s->next >= s->n) return;
  uv_work_t *w = &s->reqs[s->next++];
  w->data = s;
  int rc = uv_queue_work(&s->loop, w, on_work, on_after);
  if (rc) s->fail = rc;
}

unsigned pool_set_threads(unsigned jobs) {
  const char *cur = getenv("UV_THREADPOOL_SIZE");
  if (cur && *cur) return (unsigned)atoi(cur);
  if (jobs < 1) jobs = 1;
  if (jobs > 1024) jobs = 1024;
  char buf[16];
  snprintf(buf, sizeof buf, "%u", jobs);
  setenv("UV_THREADPOOL_SIZE", buf, 1);
  return jobs;
}

unsigned pool_default_jobs(void) {
  unsigned n = uv_available_parallelism();
  return n ? n : 1;
}

int pool_run(size_t n, unsigned jobs, pool_work_fn work, void *ctx, pool_progress_fn progress, void *pctx,
             sim_err *err) {
  if (n == 0) return SIM_OK;
  pool_state s = {.n = n, .work = work, .ctx = ctx, .progress = progress, .pctx = pctx};
  int rc = uv_loop_init(&s.loop);
  if (rc) return sim_errf(err, SIM_EINTERNAL, "libuv: %s", uv_strerror(rc));
  s.reqs = sim_calloc(n, sizeof *s.reqs);
  if (progress) progress(pctx, 0, n);
  if (jobs < 1) jobs = 1;
  for (unsigned k = 0; k < jobs && k < n; k++) submit(&s);
  uv_run(&s.loop, UV_RUN_DEFAULT);
  rc = uv_loop_close(&s.loop);
  free(s.reqs);
  if (s.fail) return sim_errf(err, SIM_EINTERNAL, "libuv thread pool: %s", uv_strerror(s.fail));
  if (rc) return sim_errf(err, SIM_EINTERNAL, "libuv: loop close: %s", uv_strerror(rc));
  return SIM_OK;
}
