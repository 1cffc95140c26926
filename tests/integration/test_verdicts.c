/* test_verdicts.c: the binding-limit verdict names the fix that fits what
 * bound the run. Llama-3.1-70B on 4 x H100 with 4,000-token prompts: at
 * 40 req/s the load is far past what one replica serves, the KV cache is full
 * as a consequence, and the answer is more replicas (not more KV memory); at
 * 1 req/s with 3,000-token outputs the replica keeps up but its KV cache
 * preempts, and the answer is memory (FP8 KV cache, more GPUs per replica). */
#include <criterion/criterion.h>
#include <string.h>

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
