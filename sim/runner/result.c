/* result.c: the run's result (result.h). */
#include "runner/result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void run_result_times(const void *ctx, size_t i, req_times *out) {
  const run_record *q = &((const run_result *)ctx)->reqs[i];
  memset(out, 0, sizeof *out);
  out->prompt_tokens = q->prompt_tokens;
  out->generated = q->generated;
  out->outcome = q->outcome;
  out->reject = q->outcome == REQ_FINISHED ? REJ_NONE : q->reject;
  out->send_ns = q->send_ns, out->queued_ns = q->queued_ns, out->first_sched_ns = q->first_sched_ns;
  out->first_token_ns = q->first_token_ns, out->finish_ns = q->finish_ns;
}

double run_record_ttft_ms(const run_record *q) { return (double)(q->first_token_ns - q->send_ns) / 1e6; }
double run_record_e2el_ms(const run_record *q) { return (double)(q->finish_ns - q->send_ns) / 1e6; }
double run_record_tpot_ms(const run_record *q) {
  if (q->generated < 2) return NAN;
  return (run_record_e2el_ms(q) - run_record_ttft_ms(q)) / (double)(q->generated - 1);
}

void run_result_free(run_result *res) {
  free(res->reqs);
  metrics_deinit(&res->m);
  run_scale_free(&res->scale);
  memset(res, 0, sizeof *res);
}
