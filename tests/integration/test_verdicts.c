/* test_verdicts.c: the binding-limit verdict names the fix that fits what
 * bound the run. Llama-3.1-70B on 4 x H100 with 4,000-token prompts: at
 * 40 req/s the load is far past what one replica serves, the KV cache is full
 * as a consequence, and the answer is more replicas (not more KV memory); at
 * 1 req/s with 3,000-token outputs the replica keeps up but its KV cache
 * preempts, and the answer is memory (FP8 KV cache, more GPUs per replica). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char out[1 << 16], err[4096];

Test(verdicts, overload_asks_for_replicas_even_with_a_full_kv_cache) {
  cr_assert_eq(tu_run_cli("run --gpu h100-sxm --tp 4 --request-rate 40 --num-prompts 1500 --random-input-len 4000 "
                          "--random-output-len 500",
                          out, sizeof out, err, sizeof err),
               0, "%s", err);
  cr_assert(strstr(out, "Binding limit: queueing (replicas saturated)"), "%s", out);
  cr_assert(strstr(out, "add replicas or lower the rate"), "%s", out);
  cr_assert(strstr(out, "The KV cache is full as well"), "%s", out);
}

Test(verdicts, kv_bound_replica_asks_for_memory) {
  cr_assert_eq(tu_run_cli("run --gpu h100-sxm --tp 4 --request-rate 1 --num-prompts 300 --random-input-len 4000 "
                          "--random-output-len 3000 --max-num-seqs 512",
                          out, sizeof out, err, sizeof err),
               0, "%s", err);
  cr_assert(strstr(out, "Binding limit: memory capacity (KV cache)"), "%s", out);
  cr_assert(strstr(out, "FP8 KV cache"), "%s", out);
}


/* Losing the only replica (issue #40): exit 3, stdout says why requests were rejected, and the busy share
 * stays within 100% although the step in flight at the loss ran past the last finish (busy_s > duration:
 * busy over the benchmark duration read 100.9% before steps_end_ns). */
Test(verdicts, losing_the_only_replica_says_why_and_busy_stays_within_100_percent) {
  char json[256];
  snprintf(json, sizeof json, "/tmp/servesim_verdicts_%d.json", getpid());
  unlink(json);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "run --model llama-3.1-8b --request-rate 40 --num-prompts 400 --random-input-len 2000 "
           "--random-output-len 100 --fail-replica 0@5 --json %s",
           json);
  cr_assert_eq(tu_run_cli(cmd, out, sizeof out, err, sizeof err), 3, "every replica lost: exit 3: %s", err);
  cr_assert(strstr(err, "every replica was lost") && strstr(err, "rejected with no replica left"), "%s", err);
  cr_assert(strstr(out, "Rejected requests:") && strstr(out, "no replica left (every one lost):"), "%s", out);
  char *j = tu_slurp(json, NULL);
  cr_assert(j, "%s missing", json);
  cr_assert(strstr(j, "\"no_replica_left\":"), "the JSON names the reason");
  double busy = tu_json_num(j, "busy_s"), dur = tu_json_num(j, "duration"), frac = tu_json_num(j, "gpu_busy_fraction");
  cr_assert(busy > dur && dur > 0, "the case cuts a step: busy %g s, duration %g s", busy, dur);
  cr_assert(frac > 0.9 && frac <= 1.0, "busy share %g must stay within 100%%", frac);
  cr_assert(!strstr(out, "a step was running 10") && !strstr(out, "a step was running 11"), "%s", out);
  free(j);
  unlink(json);
}
