/* pool.h: run n independent jobs on libuv's thread pool (uv_queue_work), at
 * most `jobs` at a time, with a progress callback on the calling thread.
 *
 * libuv sizes its pool once, from UV_THREADPOOL_SIZE, at the first use of the
 * pool in the process: call pool_set_threads() before any libuv call that may
 * touch the pool (the CLI does it first thing). pool_run also never has more
 * than `jobs` work items queued, so --jobs holds even if the pool is larger.
 *
 * The work function runs on worker threads: it must touch only job i's own
 * data (each simulation owns its run_ctx; nothing is shared). Results are
 * written by index, so their order does not depend on completion order.
 * progress(pctx, done, total) runs on the calling thread after each
 * completion (and once at the start with done = 0). */
#ifndef SIM_POOL_H
#define SIM_POOL_H

#include "core/common.h"

typedef void (*pool_work_fn)(void *ctx, size_t i);
typedef void (*pool_progress_fn)(void *ctx, size_t done, size_t total);

/* Sets UV_THREADPOOL_SIZE (clamped to [1, 1024]) unless the environment
 * already sets it; returns the value in effect. */
unsigned pool_set_threads(unsigned jobs);
/* Processors available to this process (>= 1). */
unsigned pool_default_jobs(void);
/* Runs work(ctx, i) for i in [0, n), reporting to progress(pctx, ...) (may
 * be NULL). Returns SIM_EINTERNAL if libuv fails. */
int pool_run(size_t n, unsigned jobs, pool_work_fn work, void *ctx, pool_progress_fn progress, void *pctx,
             sim_err *err);

#endif
