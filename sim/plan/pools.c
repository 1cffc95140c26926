/* pools.c: `servesim plan --mode disagg`: the prefill and the decode pool planned one after the other, each
 * as the engine one of its workers runs (config/cfg.c deploy_pool: its TP, DP, max_num_seqs and
 * max_num_batched_tokens; everything else the deployment's), so each pool shows its memory plan, largest batch,
 * step times and gates. The KV transfer between them is the run's (docs/DISAGG.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/pools.h"

static const char *const POOL[2] = {"prefill", "decode"};

int plan_analyze_pools(plan_result out[2], const scenario *sc, const plan_opts *opts, sim_err *err) {
  model_cfg m;
  gpu_cfg g;
  engine_cfg e;
  deploy_cfg d;
  int rc = scenario_load_configs(sc, &m, &g, &e, &d, err);
  if (rc) return rc;
  scenario *ps = sim_malloc(sizeof *ps);
  for (int k = 0; k < 2 && !rc; k++) {
    *ps = *sc;
    deploy_pool(&d, k == 1, &ps->deploy);
    ps->deploy.replicas = 1; /* one worker's plan; the pool's count is printed beside it */
    rc = plan_analyze(&out[k], ps, opts, err);
    if (rc) sim_err_prefix(err, "--mode disagg, %s pool (TP%u)", POOL[k], ps->deploy.tp);
  }
  free(ps);
  return rc;
}

void plan_print_pools(const plan_result p[2], const scenario *sc, FILE *f) {
  uint32_t workers[2] = {sc->deploy.prefill_workers, sc->deploy.decode_workers};
  for (int k = 0; k < 2; k++) {
    const deploy_cfg *d = &p[k].deploy;
    fprintf(f, "%s== %s pool: %u worker%s of TP%u%s%.0u (one worker's plan below) ==\n", k ? "\n" : "", POOL[k],
            workers[k] ? workers[k] : 1, workers[k] == 1 ? "" : "s", d->tp, d->dp > 1 ? " x DP" : "",
            d->dp > 1 ? d->dp : 0);
    plan_print(&p[k], f);
  }
}

/* One pool's plan as a JSON value: plan_write_json's object without its final newline. */
static int pool_json(const plan_result *p, char **buf, sim_err *err) {
  size_t n = 0;
  FILE *m = open_memstream(buf, &n);
  if (!m) return sim_errf(err, SIM_EINTERNAL, "plan: out of memory for the JSON");
  int rc = plan_write_json(p, m, err);
  fclose(m);
  if (rc) return rc;
  while (n && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == ' ')) (*buf)[--n] = 0;
  return SIM_OK;
}

int plan_write_pools_json(const plan_result p[2], FILE *f, sim_err *err) {
  char *j[2] = {NULL, NULL};
  int rc = pool_json(&p[0], &j[0], err);
  if (!rc) rc = pool_json(&p[1], &j[1], err);
  if (!rc) {
    fprintf(f, "{\"mode\": \"disagg\", \"prefill_workers\": %u, \"decode_workers\": %u,\n\"prefill\": %s,\n\"decode\": %s}\n",
            p[0].deploy.prefill_workers, p[0].deploy.decode_workers, j[0], j[1]);
    if (ferror(f)) rc = sim_errf(err, SIM_EINTERNAL, "plan: write error");
  }
  free(j[0]);
  free(j[1]);
  return rc;
}
