/* drv.h: the libuv driver of a simulation (the only place libuv appears).
 *
 * libuv's loop clock cannot be set, so the simulation keeps its own virtual
 * clock (des.h) and the loop only drives it:
 *  - virtual mode (speed == 0, the default): a uv_idle_t callback drains
 *    events in bounded slices as fast as possible, yielding to the loop
 *    between slices so SIGINT (Ctrl-C) and progress output are served;
 *  - paced mode (speed = X > 0): one uv_timer_t is re-armed to the absolute
 *    wall deadline of the next event, wall0 + t_virtual / X (never with
 *    `repeat`, which drifts); events whose virtual time has come are run.
 * On SIGINT the driver stops and reports interrupted = true; the caller then
 * writes the partial results.
 * The driver knows nothing of what it drives: it calls the ops below. */
#ifndef SIM_DRV_H
#define SIM_DRV_H

#include "core/common.h"

typedef struct drv_ops {
  void *ctx;
  /* Runs at most max_events events with virtual time <= until_ns; returns
   * true when the simulation is over. */
  bool (*run_slice)(void *ctx, uint64_t max_events, sim_ns until_ns);
  /* Virtual time of the next event, SIM_NS_INF when none. */
  sim_ns (*next_time)(void *ctx);
  /* Optional: called about every progress_ms of wall time with the virtual now. */
  void (*progress)(void *ctx, sim_ns virtual_now);
} drv_ops;

typedef struct drv_opts {
  double speed;          /* 0 = virtual (as fast as possible); X = X virtual seconds per wall second */
  uint64_t slice_events; /* events per idle callback in virtual mode (default 65536) */
  uint64_t progress_ms;  /* 0 = no progress callback */
} drv_opts;

/* Runs to the end or until SIGINT. *interrupted tells which. Returns SIM_OK,
 * or SIM_EINTERNAL if libuv fails (message in err). */
int drv_run(const drv_ops *ops, const drv_opts *opts, bool *interrupted, sim_err *err);

#endif
