/* fuzz_trace.c: the trace readers (native CSV, Azure, BurstGPT, Mooncake
 * JSONL, auto-detection): the first byte picks the format, the rest is the
 * file. trace_parse takes a byte span, so the input is passed as is (NULs
 * included). */
#include "fuzz_common.h"
#include "workload/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  static const trace_format fmts[] = {TRACE_FMT_AUTO, TRACE_FMT_NATIVE, TRACE_FMT_AZURE, TRACE_FMT_BURSTGPT,
                                      TRACE_FMT_MOONCAKE};
  trace_format f = fmts[data[0] % (sizeof fmts / sizeof fmts[0])];
  trace t;
  trace_init(&t);
  sim_err err = {0, ""};
  int rc = trace_parse(&t, (const char *)data + 1, size - 1, "fuzz.csv", f, &err);
  fuzz_contract(rc, &err, "trace_parse");
  if (rc == SIM_OK) { /* a valid trace: sorted, every request with tokens */
    for (size_t i = 0; i < t.n; i++)
      if (!t.reqs[i].prompt_tokens || !t.reqs[i].output_tokens || (i && t.reqs[i].arrival_ns < t.reqs[i - 1].arrival_ns))
        abort();
    trace_stats st;
    trace_compute_stats(&t, &st);
  }
  trace_free(&t);
  return 0;
}
