/* test_merge_parts.c: `servesim merge` refuses a corrupted or forged record of a part (plan/part_rows.h): real
 * parts written by the CLI (a tiny sweep and a tiny capacity search, --shard 1/1), one field of one record
 * overwritten at its offsetof() position, then merge must exit 2 naming the part, the row and the field,
 * never crash (the ASan build runs these too). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/capacity.h"
#include "testutil.h"

static char out[1 << 18], err[1 << 16];

static const char *SWEEP = "sweep --model llama-3.1-8b --gpu h200 --tp 1,2 --request-rate 2,4 --num-prompts 20 "
                           "--slo ttft_p99=2000 --quiet";
static const char *CAPACITY = "capacity --model llama-3.1-8b --gpu h200 --tp 1,2 --slo ttft_p99=2000 "
                              "--slo tpot_p99=50 --target-rate 4 --num-prompts 30 --quiet";

/* Writes shard 1/1 of cmd to DIR/name and returns its path (static rotation of 2). */
static const char *write_part(const char *cmd, const char *name) {
  static char path[2][1024];
  static int k;
  char *p = path[k++ % 2];
  snprintf(p, 1024, "%s/%s", tu_tmpdir(), name);
  char c[2048];
  snprintf(c, sizeof c, "%s --shard 1/1 --part %s", cmd, p);
  cr_assert_eq(tu_run_cli(c, out, sizeof out, err, sizeof err), 0, "%s: %s", c, err);
  return p;
}

/* Overwrites n bytes at offset `off` of record `row` (the row_bytes-sized struct after its 8-byte index) of
 * the part at path, in place; `forge`: and writes the rows' new checksum in the header. */
static void poke_as(const char *path, size_t row_bytes, size_t row, size_t off, const void *bytes, size_t n,
                    bool forge) {
  size_t len = 0;
  char *t = tu_slurp(path, &len);
  cr_assert(t != NULL, "%s unreadable", path);
  char *d = NULL; /* the arguments before it hold NULs: no strstr */
  for (size_t i = 0; i + 6 <= len && !d; i++)
    if (!memcmp(t + i, "\ndata ", 6)) d = t + i;
  cr_assert(d != NULL, "%s has no data line", path);
  char *nl = memchr(d + 1, '\n', len - (size_t)(d + 1 - t));
  cr_assert(nl != NULL);
  size_t at = (size_t)(nl + 1 - t) + row * (sizeof(uint64_t) + row_bytes) + sizeof(uint64_t) + off;
  cr_assert(at + n <= len, "offset %zu beyond %s (%zu bytes)", at, path, len);
  memcpy(t + at, bytes, n);
  if (forge) { /* recompute the rows' checksum, as a forger would: the record checks must find the field */
    size_t rows_at = (size_t)(nl + 1 - t), m = (len - rows_at) / (sizeof(uint64_t) + row_bytes);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64, sweep_part.h */
    for (size_t i = rows_at; i < rows_at + m * (sizeof(uint64_t) + row_bytes); i++)
      h = (h ^ (uint8_t)t[i]) * 0x100000001b3ull;
    char *cs = strstr(d + 1, "checksum ");
    cr_assert(cs != NULL && cs < nl, "%s has no checksum", path);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    memcpy(cs + 9, hex, 16);
  }
  FILE *f = fopen(path, "wb");
  cr_assert(f != NULL);
  cr_assert_eq(fwrite(t, 1, len, f), len);
  fclose(f);
  free(t);
}

/* A forged record (checksum recomputed): what every test below writes. */
static void poke(const char *path, size_t row_bytes, size_t row, size_t off, const void *bytes, size_t n) {
  poke_as(path, row_bytes, row, off, bytes, n, true);
}

/* merge of the part exits 2 naming the part, "row N" and the field with its problem. */
static void refused(const char *path, const char *row_field) {
  char c[1200];
  snprintf(c, sizeof c, "merge %s --json %s.json --quiet", path, path);
  int rc = tu_run_cli(c, out, sizeof out, err, sizeof err);
  cr_assert_eq(rc, 2, "merge exited %d (want 2: refused); stderr: %s", rc, err);
  cr_assert(strstr(err, path) != NULL, "the message names no part: %s", err);
  cr_assert(strstr(err, row_field) != NULL, "the message lacks '%s': %s", row_field, err);
}

static void poke_int(const char *path, size_t row_bytes, size_t row, size_t off, int v) {
  poke(path, row_bytes, row, off, &v, sizeof v);
}

Test(merge_parts, untouched_parts_merge) {
  const char *s = write_part(SWEEP, "s.part"), *c = write_part(CAPACITY, "c.part");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "merge %s --quiet", s);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
  snprintf(cmd, sizeof cmd, "merge %s --quiet", c);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
}

/* A part changed on its way (one byte of a record, the checksum left as written) is refused as corrupted, before
   any record check; the same byte with the checksum recomputed is then the record checks' (a_bool_holding_2). */
Test(merge_parts, a_changed_part_is_refused_as_corrupted) {
  const char *s = write_part(SWEEP, "s.part");
  unsigned char two = 2;
  poke_as(s, sizeof(sweep_row), 0, offsetof(sweep_row, feasible), &two, 1, false);
  refused(s, "corrupted: the rows' checksum");
}

Test(merge_parts, a_bool_holding_2_is_refused) {
  const char *s = write_part(SWEEP, "s.part");
  unsigned char two = 2;
  poke(s, sizeof(sweep_row), 1, offsetof(sweep_row, feasible), &two, 1);
  refused(s, "row 1: feasible: a bool holds 2");
  const char *c = write_part(CAPACITY, "c.part");
  poke(c, sizeof(cap_candidate), 1, offsetof(cap_candidate, cfg) + offsetof(sweep_row, slo) + offsetof(slo_result, ok) + 1,
       &two, 1);
  refused(c, "row 1: cfg.slo.ok[1]: a bool holds 2");
}

Test(merge_parts, a_label_without_its_nul_is_refused) {
  const char *s = write_part(SWEEP, "s.part");
  char a[256];
  memset(a, 'A', sizeof a);
  poke(s, sizeof(sweep_row), 2, offsetof(sweep_row, label), a, sizeof a);
  refused(s, "row 2: label: no NUL terminator");
  const char *c = write_part(CAPACITY, "c.part");
  char w[sizeof(((cap_candidate *)0)->why)];
  memset(w, 'w', sizeof w);
  poke(c, sizeof(cap_candidate), 0, offsetof(cap_candidate, why), w, sizeof w);
  refused(c, "row 0: why: no NUL terminator");
}

Test(merge_parts, a_forged_label_is_refused) {
  const char *s = write_part(SWEEP, "s.part");
  poke(s, sizeof(sweep_row), 0, offsetof(sweep_row, label), "forged", 7);
  refused(s, "row 0: label: 'forged'");
}

Test(merge_parts, probe_and_fleet_counts_beyond_their_arrays_are_refused) {
  const char *c = write_part(CAPACITY, "c.part");
  poke_int(c, sizeof(cap_candidate), 0, offsetof(cap_candidate, bis) + offsetof(bisect_result, n_probes), 1000);
  refused(c, "row 0: bis.n_probes: 1000 is out of range 0..64");
  c = write_part(CAPACITY, "c2.part");
  uint32_t n = CAP_FLEET_MAX + 1;
  poke(c, sizeof(cap_candidate), 1, offsetof(cap_candidate, n_fleet), &n, sizeof n);
  refused(c, "row 1: n_fleet: 17 is above 16");
}

Test(merge_parts, slo_indices_beyond_the_study_are_refused) {
  const char *c = write_part(CAPACITY, "c.part");
  poke_int(c, sizeof(cap_candidate), 0, offsetof(cap_candidate, fail_slo), 1000000);
  refused(c, "row 0: fail_slo: 1000000 is out of range -1..7");
  c = write_part(CAPACITY, "c2.part");
  poke_int(c, sizeof(cap_candidate), 1, offsetof(cap_candidate, fail_slo), 2); /* below SLO_MAX; the study has 2 */
  refused(c, "row 1: fail_slo: 2, the study has 2 objectives");
}

Test(merge_parts, enums_and_stages_out_of_range_are_refused) {
  const char *s = write_part(SWEEP, "s.part");
  poke_int(s, sizeof(sweep_row), 3, offsetof(sweep_row, bn) + offsetof(bottleneck, primary), 99);
  refused(s, "row 3: bn.primary: 99 is out of range");
  s = write_part(SWEEP, "s2.part");
  uint32_t stage = 5;
  poke(s, sizeof(sweep_row), 0, offsetof(sweep_row, mem) + offsetof(mem_plan, binding_stage), &stage, sizeof stage);
  refused(s, "row 0: mem.binding_stage: 5 is not below pp");
  const char *c = write_part(CAPACITY, "c.part");
  poke_int(c, sizeof(cap_candidate), 0, offsetof(cap_candidate, inst), 3);
  refused(c, "row 0: inst: 3, the catalog has 0 instance types");
}

Test(merge_parts, a_rate_outside_the_search_is_refused) {
  const char *c = write_part(CAPACITY, "c.part");
  double r = 1e-300;
  poke(c, sizeof(cap_candidate), 0, offsetof(cap_candidate, max_rate), &r, sizeof r);
  refused(c, "row 0: max_rate: 1e-300 is neither 0 nor in the search's range");
}
