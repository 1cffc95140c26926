/* fuzz_merge.c: `servesim merge` past the part's header: forged records through the record checks
 * (plan/part_rows.h), the fills and every writer of the merged outputs.
 *
 * At the first call the real code runs a tiny sweep (2 x 2 points) and a tiny capacity search (2 candidates,
 * both shard 1 of 1): their rows are what a part of them carries, and the sets rebuilt from the same arguments
 * are kept. Each execution copies them (no simulation, no file), applies the fuzzer's bytes to the records,
 * checks every record as sweep_part_read does (part_row_check), fills the copied set (sweep_parts_fill /
 * capacity_parts_fill, which verifies the recommendation by simulating it, as merge does) and writes JSON,
 * CSV, the table, the summary and the HTML and Markdown reports to /dev/null.
 * Input: byte 0 picks the sweep (even) or the capacity search (odd); then patches, each a 4-byte little-endian
 * offset (taken modulo the records' size), a length byte and that many bytes written over the records there
 * (so mutations reach any field of any record while the others stay valid). */
#include "fuzz_common.h"

#include "cli/cli.h"
#include "cli/plan_cli.h"
#include "plan/capacity.h"
#include "plan/part_rows.h"
#include "plan/sweep_part.h"
#include "report/report_html.h"

static char *SWEEP_ARGS[] = {"sweep", "--model", "llama-3.1-8b", "--gpu", "h200", "--tp", "1,2", "--request-rate",
                             "2,4", "--num-prompts", "12", "--slo", "ttft_p99=2000", NULL};
static char *CAP_ARGS[] = {"capacity", "--model", "llama-3.1-8b", "--gpu", "h200", "--tp", "1,2", "--slo",
                           "ttft_p99=2000", "--slo", "tpot_p99=50", "--num-prompts", "12", NULL};

static struct {
  grid_spec g[2];
  scenario base[2];
  sweep_set sw;          /* as sweep_prepare left it (labels only) */
  sweep_row *sw_rows;    /* the executed rows: a part's records */
  capacity_set cap;      /* as capacity_prepare left it */
  cap_candidate *cap_c;  /* the searched candidates */
  plan_flags pf[2];      /* kept: what the parsed flags hold stays reachable */
  FILE *null;
} F;

static void must(int rc, const sim_err *err, const char *what) {
  if (rc) {
    fprintf(stderr, "fuzz_merge setup: %s: %s\n", what, err->msg);
    abort();
  }
}

/* The study of argv rebuilt as merge does: flags parsed, scenario and grid applied. */
static void study(char **argv, const char *grid_name, int which) {
  plan_flags *pf = &F.pf[which];
  plan_flags_init(pf);
  cli_opt opts[200];
  int n = plan_flags_table(pf, grid_name, opts, 180);
  opts[n] = (cli_opt){NULL, NULL, 0, NULL, NULL, NULL, NULL};
  int argc = 0;
  while (argv[argc]) argc++;
  if (cli_start(argv[0], "", "", opts, &pf->show_help, argc, argv) != CLI_GO) abort();
  sim_err err = {0, ""};
  grid_init(&F.g[which]);
  must(plan_flags_apply(pf, &F.base[which], &F.g[which], &err), &err, "plan_flags_apply");
}

static void setup(void) {
  sim_err err = {0, ""};
  F.null = fopen("/dev/null", "w");
  if (!F.null) abort();
  study(SWEEP_ARGS, "grid", 0);
  must(sweep_prepare(&F.sw, &F.base[0], &F.g[0], &F.g[0].slo, &F.g[0].price, &err), &err, "sweep_prepare");
  sweep_set run = F.sw;
  run.rows = sim_malloc(F.sw.n * sizeof *run.rows);
  memcpy(run.rows, F.sw.rows, F.sw.n * sizeof *run.rows);
  must(sweep_execute_shard(&run, 1, 1, 1, NULL, NULL, &err), &err, "sweep_execute_shard");
  F.sw_rows = run.rows;
  study(CAP_ARGS, "candidates", 1);
  F.g[1].target_rate = 4;
  bisect_opts bo;
  bisect_opts_default(&bo);
  bo.lo = 0.01;
  bo.hi = 1e4;
  must(capacity_prepare(&F.cap, &F.base[1], &F.g[1], &bo, &err), &err, "capacity_prepare");
  capacity_set srch = F.cap;
  srch.c = sim_malloc(F.cap.n * sizeof *srch.c);
  memcpy(srch.c, F.cap.c, F.cap.n * sizeof *srch.c);
  must(capacity_execute_shard(&srch, 1, 1, 1, NULL, NULL, &err), &err, "capacity_execute_shard");
  F.cap_c = srch.c;
}

/* The fuzzer's patches over the records (n bytes at rec). */
static void patch(unsigned char *rec, size_t n, const uint8_t *d, size_t size) {
  size_t i = 1;
  while (i + 5 <= size) {
    uint32_t off = (uint32_t)d[i] | (uint32_t)d[i + 1] << 8 | (uint32_t)d[i + 2] << 16 | (uint32_t)d[i + 3] << 24;
    size_t len = d[i + 4], at = off % n;
    i += 5;
    for (size_t k = 0; k < len && i < size; k++, i++) rec[(at + k) % n] = d[i];
  }
}

/* A shard 1 of 1 holding the records, as sweep_part_read leaves it (each record checked as it does). */
static int part_of(sweep_part *p, const char *kind, unsigned char *rec, size_t row_bytes, size_t n, sim_err *err) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "fuzz.part");
  snprintf(p->kind, sizeof p->kind, "%s", kind);
  p->row_bytes = row_bytes;
  p->k = p->n = 1;
  p->rows = p->m = n;
  p->index = sim_malloc(n * sizeof *p->index);
  p->row = rec;
  for (size_t j = 0; j < n; j++) {
    p->index[j] = j;
    int rc = part_row_check(kind, rec + j * row_bytes, p->path, j, err);
    if (rc) return rc;
  }
  return SIM_OK;
}

static void merge_sweep(const uint8_t *d, size_t size) {
  size_t n = F.sw.n, bytes = n * sizeof(sweep_row);
  unsigned char *rec = sim_malloc(bytes);
  memcpy(rec, F.sw_rows, bytes);
  patch(rec, bytes, d, size);
  sweep_part p;
  sim_err err = {0, ""};
  int rc = part_of(&p, "sweep", rec, sizeof(sweep_row), n, &err);
  fuzz_contract(rc, &err, "part_row_check (sweep)");
  sweep_set s = F.sw;
  s.rows = sim_malloc(bytes);
  memcpy(s.rows, F.sw.rows, bytes);
  if (!rc) {
    rc = sweep_parts_fill(&s, &p, 1, &err);
    fuzz_contract(rc, &err, "sweep_parts_fill");
  }
  if (!rc) {
    sweep_finish(&s);
    report_doc doc = {"servesim sweep", NULL, &s.slo, &s, NULL, NULL, NULL};
    fuzz_contract(sweep_write_json(&s, F.null, &err), &err, "sweep_write_json");
    fuzz_contract(sweep_write_csv(&s, F.null, &err), &err, "sweep_write_csv");
    sweep_print(&s, F.null);
    fuzz_contract(report_html(&doc, F.null, &err), &err, "report_html (sweep)");
    fuzz_contract(report_md(&doc, F.null, &err), &err, "report_md (sweep)");
  }
  free(s.rows);
  free(p.index);
  free(rec);
}

static void merge_capacity(const uint8_t *d, size_t size) {
  size_t n = F.cap.n, bytes = n * sizeof(cap_candidate);
  unsigned char *rec = sim_malloc(bytes);
  memcpy(rec, F.cap_c, bytes);
  patch(rec, bytes, d, size);
  sweep_part p;
  sim_err err = {0, ""};
  int rc = part_of(&p, "capacity", rec, sizeof(cap_candidate), n, &err);
  fuzz_contract(rc, &err, "part_row_check (capacity)");
  capacity_set s = F.cap;
  s.c = sim_malloc(bytes);
  memcpy(s.c, F.cap.c, bytes);
  if (!rc) {
    rc = capacity_parts_fill(&s, &p, 1, &err);
    fuzz_contract(rc, &err, "capacity_parts_fill");
  }
  if (!rc) {
    report_doc doc = {"servesim capacity", s.verify_run ? &s.verify_run->res : NULL, &s.slo, NULL, &s, NULL, NULL};
    fuzz_contract(capacity_write_json(&s, F.null, &err), &err, "capacity_write_json");
    capacity_print(&s, F.null);
    fuzz_contract(report_html(&doc, F.null, &err), &err, "report_html (capacity)");
    fuzz_contract(report_md(&doc, F.null, &err), &err, "report_md (capacity)");
  }
  if (s.verify_run) {
    runner_free(s.verify_run);
    free(s.verify_run);
  }
  free(s.c);
  free(p.index);
  free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!F.null) setup();
  if (!size) return 0;
  if (data[0] & 1) merge_capacity(data, size);
  else merge_sweep(data, size);
  return 0;
}
