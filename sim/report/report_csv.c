/* report_csv.c: per-request and time-series CSV files. */
#include <inttypes.h>
#include <math.h>

#include "report/report.h"

static int check(FILE *f, const char *what, sim_err *err) {
  return ferror(f) ? sim_errf(err, SIM_EINPUT, "cannot write the %s CSV", what) : SIM_OK;
}

static double ms_between(sim_ns later, sim_ns earlier) { return (double)(later - earlier) / 1e6; }

int report_requests_csv(const run_result *r, FILE *f, sim_err *err) {
  fprintf(f, "id,replica,arrival_s,send_s,prompt_tokens,output_tokens,generated_tokens,cached_tokens,preemptions,"
             "status,reason,ttft_ms,tpot_ms,e2el_ms,queue_ms,frontend_ms,prefill_ms%s\n",
          r->deploy.disagg ? ",prefill_worker,kv_transfer_bytes,kv_transfer_ms" : "");
  for (size_t i = 0; i < r->n_reqs; i++) {
    const run_record *q = &r->reqs[i];
    bool done = q->outcome == REQ_FINISHED;
    bool was_sched = q->first_sched_ns != SIM_NS_INF;
    double tpot = run_record_tpot_ms(q);
    fprintf(f, "%u,%d,%.9f,%.9f,%u,%u,%u,%u,%u,%s,%s,", q->id, q->replica == UINT32_MAX ? -1 : (int)q->replica,
            (double)q->arrival_ns / 1e9, (double)q->send_ns / 1e9, q->prompt_tokens, q->output_tokens, q->generated,
            q->cached_tokens, q->preemptions, done ? "finished" : "rejected",
            done ? "" : rq_reject_name((rq_reject)q->reject));
    if (done) fprintf(f, "%.6f,%.6f,%.6f,", run_record_ttft_ms(q), isnan(tpot) ? 0.0 : tpot, run_record_e2el_ms(q));
    else fprintf(f, ",,,");
    /* TTFT = frontend_ms + queue_ms + prefill_ms (metrics.h); a term is empty where its end was not reached */
    if (was_sched) fprintf(f, "%.6f", ms_between(q->first_sched_ns, q->queued_ns));
    fputc(',', f);
    if (q->queued_ns != SIM_NS_INF && q->queued_ns >= q->send_ns) fprintf(f, "%.6f", ms_between(q->queued_ns, q->send_ns));
    fputc(',', f);
    if (done && was_sched) fprintf(f, "%.6f", ms_between(q->first_token_ns, q->first_sched_ns));
    if (r->deploy.disagg && q->xfer_end_ns) /* disaggregated: where it prefilled, its KV transfer */
      fprintf(f, ",%u,%" PRIu64 ",%.6f", q->prefill_worker, q->xfer_bytes, ms_between(q->xfer_end_ns, q->xfer_start_ns));
    else if (r->deploy.disagg)
      fprintf(f, ",%d,,", q->prefill_worker == UINT32_MAX ? -1 : (int)q->prefill_worker);
    fprintf(f, "\n");
  }
  return check(f, "per-request", err);
}

int report_timeseries_csv(const run_result *r, FILE *f, sim_err *err) {
  const metrics_rec *m = &r->m;
  fprintf(f, "time_s,vllm:num_requests_running,vllm:num_requests_waiting,client_queue,vllm:kv_cache_usage_perc,"
             "kv_cache_usage_max,vllm:num_preemptions_total,finished_total,vllm:iteration_tokens_total,steps%s\n",
          report_scale_csv_head(r));
  for (size_t i = 0; i < m->n_ts; i++) {
    const ts_row *t = &m->ts[i];
    fprintf(f, "%.3f,%u,%u,%u,%.4f,%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, (double)t->t_ns / 1e9,
            t->running, t->waiting, t->client_queue, t->kv_usage_mean, t->kv_usage_max, t->preemptions, t->finished,
            t->tokens, t->steps);
    report_scale_csv_row(r, t, f);
    fputc('\n', f);
  }
  return check(f, "time-series", err);
}
