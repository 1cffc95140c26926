/* test_openai.c: `servesim serve`'s protocol pieces without sockets: OpenAI
 * request parsing (the prompt-length rule, defaults, every refusal names its
 * field), responses and stream chunks are valid JSON with vLLM's fields, the
 * Prometheus exposition (cumulative buckets, +Inf, counts and sums), and the
 * output-length distribution (--eos-dist). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "live/live.h"
#include "live/openai.h"
#include "live/prom.h"

static int parse(oai_kind k, const char *body, oai_request *q, char *msg) {
  int rc = oai_parse(k, body, strlen(body), 0, q, msg, 512);
  cr_assert_null(q->ids, "no block size, no ids");
  return rc;
}

Test(openai, completion_prompts_and_defaults) {
  oai_request q;
  char msg[512];
  cr_assert_eq(parse(OAI_COMPLETIONS, "{\"model\":\"m\",\"prompt\":\"abcdefgh\"}", &q, msg), 0, "%s", msg);
  cr_assert_eq(q.prompt_tokens, 1 + 2); /* BOS + 8 bytes / 4 */
  cr_assert(q.has_max_tokens);
  cr_assert_eq(q.max_tokens, 16, "the completions API's default");
  cr_assert_str_eq(q.model, "m");
  cr_assert(!q.stream && !q.ignore_eos);
  cr_assert_eq(parse(OAI_COMPLETIONS, "{\"prompt\":\"abcdefghi\",\"max_tokens\":7,\"ignore_eos\":true}", &q, msg), 0);
  cr_assert_eq(q.prompt_tokens, 1 + 3);
  cr_assert_eq(q.max_tokens, 7);
  cr_assert(q.ignore_eos);
  cr_assert_str_eq(q.model, "");
  /* token ids count exactly */
  cr_assert_eq(parse(OAI_COMPLETIONS, "{\"prompt\":[1,2,3,4,5]}", &q, msg), 0);
  cr_assert_eq(q.prompt_tokens, 5);
  cr_assert_eq(parse(OAI_COMPLETIONS, "{\"prompt\":[[9,9,9]]}", &q, msg), 0);
  cr_assert_eq(q.prompt_tokens, 3);
  cr_assert_eq(parse(OAI_COMPLETIONS, "{\"prompt_token_ids\":[0,0],\"stream\":true,"
                                      "\"stream_options\":{\"include_usage\":true}}", &q, msg), 0);
  cr_assert_eq(q.prompt_tokens, 2);
  cr_assert(q.stream && q.include_usage);
}

Test(openai, chat_prompt_rule) {
  oai_request q;
  char msg[512];
  cr_assert_eq(parse(OAI_CHAT, "{\"messages\":[{\"role\":\"system\",\"content\":\"abcd\"},"
                               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"abcde\"}]}],"
                               "\"max_completion_tokens\":5,\"max_tokens\":9}", &q, msg), 0, "%s", msg);
  cr_assert_eq(q.prompt_tokens, 1 + (5 + 1) + (5 + 2) + 4);
  cr_assert_eq(q.max_tokens, 5, "max_completion_tokens wins over the deprecated max_tokens");
  cr_assert_eq(parse(OAI_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", &q, msg), 0);
  cr_assert(!q.has_max_tokens, "chat: no default (the rest of the context)");
}

static void refused(oai_kind k, const char *body, const char *needle) {
  oai_request q;
  char msg[512] = "";
  cr_assert_eq(parse(k, body, &q, msg), 400, "%s: accepted", body);
  cr_assert(strstr(msg, needle), "%s: message '%s' lacks '%s'", body, msg, needle);
}

Test(openai, refusals_name_the_field) {
  refused(OAI_COMPLETIONS, "{\"prompt\":", "not valid JSON (at byte");
  refused(OAI_COMPLETIONS, "[1,2]", "must be a JSON object");
  refused(OAI_COMPLETIONS, "{}", "'prompt' is required");
  refused(OAI_COMPLETIONS, "{\"prompt\":3}", "'prompt' must be");
  refused(OAI_COMPLETIONS, "{\"prompt\":[1,-2]}", "'prompt'[1] must be a token id");
  refused(OAI_COMPLETIONS, "{\"prompt\":[1,1e76]}", "'prompt'[1] must be a token id (an integer from 0 to 4294967295)");
  refused(OAI_COMPLETIONS, "{\"prompt_token_ids\":[4294967296]}", "'prompt_token_ids'[0] must be a token id");
  refused(OAI_COMPLETIONS, "{\"prompt\":[\"a\",\"b\"]}", "several prompts");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"prompt_token_ids\":[1]}", "not both");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":0}", "'max_tokens' must be at least 1");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":1.5}", "'max_tokens' must be an integer");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":\"5\"}", "'max_tokens' must be an integer, got a string");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"n\":2}", "'n' = 2");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"stream\":1}", "'stream' must be a boolean");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"stream_options\":{\"include_usage\":true}}",
          "Stream options can only be defined when `stream=True`.");
  refused(OAI_COMPLETIONS, "{\"prompt\":\"a\",\"model\":7}", "'model' must be a string");
  refused(OAI_CHAT, "{\"messages\":[]}", "'messages' is empty");
  refused(OAI_CHAT, "{\"messages\":[{\"content\":\"x\"}]}", "'messages'[0].role");
  refused(OAI_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}", "only text parts");
}

static cJSON *parse_json(const char *s, size_t n) {
  cJSON *j = cJSON_ParseWithLength(s, n);
  cr_assert_not_null(j, "not JSON: %.*s", (int)n, s);
  return j;
}

Test(openai, responses_and_chunks_are_vllms_json) {
  oai_reply r = {OAI_COMPLETIONS, "cmpl-1", 1700000000, "my \"model\"", 12, 3, "length"};
  oai_buf b = {0};
  oai_response(&b, &r);
  cJSON *j = parse_json(b.p, b.len);
  cr_assert_str_eq(cJSON_GetObjectItem(j, "object")->valuestring, "text_completion");
  cr_assert_str_eq(cJSON_GetObjectItem(j, "model")->valuestring, "my \"model\"");
  cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
  cr_assert_str_eq(cJSON_GetObjectItem(ch, "text")->valuestring, " tok tok tok");
  cr_assert_str_eq(cJSON_GetObjectItem(ch, "finish_reason")->valuestring, "length");
  cJSON *u = cJSON_GetObjectItem(j, "usage");
  cr_assert_eq(cJSON_GetObjectItem(u, "prompt_tokens")->valueint, 12);
  cr_assert_eq(cJSON_GetObjectItem(u, "completion_tokens")->valueint, 3);
  cr_assert_eq(cJSON_GetObjectItem(u, "total_tokens")->valueint, 15);
  cJSON_Delete(j);

  r.kind = OAI_CHAT;
  r.finish_reason = NULL;
  b.len = 0;
  oai_chunk(&b, &r, 0, true);
  cr_assert(!strncmp(b.p, "data: ", 6) && b.len > 8 && !strcmp(b.p + b.len - 2, "\n\n"));
  j = parse_json(b.p + 6, b.len - 8);
  ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
  cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "delta"), "role")->valuestring, "assistant");
  cr_assert(cJSON_IsNull(cJSON_GetObjectItem(ch, "finish_reason")));
  cr_assert_str_eq(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion.chunk");
  cJSON_Delete(j);

  b.len = 0;
  oai_usage_chunk(&b, &r);
  j = parse_json(b.p + 6, b.len - 8);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "choices")), 0);
  cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "usage"), "total_tokens")->valueint, 15);
  cJSON_Delete(j);

  b.len = 0;
  oai_error(&b, 404, "The model `x` does not exist.");
  j = parse_json(b.p, b.len);
  cJSON *e = cJSON_GetObjectItem(j, "error");
  cr_assert_str_eq(cJSON_GetObjectItem(e, "type")->valuestring, "NotFoundError");
  cr_assert_eq(cJSON_GetObjectItem(e, "code")->valueint, 404);
  cJSON_Delete(j);
  oai_buf_free(&b);
}

Test(prom, exposition_has_cumulative_buckets_counts_and_sums) {
  prom p;
  prom_init(&p, 2, PROM_VLLM, 2048);
  prom_observe(&p, 0, PH_TTFT, 0.001); /* on a bound: le="0.001" counts it */
  prom_observe(&p, 0, PH_TTFT, 0.03);
  prom_observe(&p, 0, PH_TTFT, 5000.0); /* past the last bound: +Inf only */
  prom_observe(&p, 1, PH_ITL, 0.02);
  p.e[1].generation_tokens = 41;
  prom_gauges g[2] = {{3, 1, 0.5, 2, 100, 60}, {0, 0, 0.0, 0, 0, 0}};
  oai_buf b = {0};
  prom_write(&p, "m", g, &b);
  const char *must[] = {
      "# TYPE vllm:time_to_first_token_seconds histogram\n",
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\",model_name=\"m\"} 1.0\n",
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.04\",model_name=\"m\"} 2.0\n",
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"2560.0\",model_name=\"m\"} 2.0\n",
      "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 3.0\n",
      "vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} 3.0\n",
      "vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m\"} 5000.031\n",
      "vllm:inter_token_latency_seconds_bucket{engine=\"1\",le=\"0.025\",model_name=\"m\"} 1.0\n",
      "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n",
      "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 1.0\n",
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n",
      "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 2.0\n",
      "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 100.0\n",
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 60.0\n",
      "vllm:generation_tokens_total{engine=\"1\",model_name=\"m\"} 41.0\n",
      "# TYPE vllm:e2e_request_latency_seconds histogram\n",
      "# TYPE vllm:request_queue_time_seconds histogram\n",
      "vllm:request_success_total{engine=\"1\",finished_reason=\"abort\",model_name=\"m\"} 0.0\n",
  };
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
    cr_assert_not_null(strstr(b.p, must[i]), "missing: %s", must[i]);
  oai_buf_free(&b);
  prom_free(&p);
}

/* vLLM's token-count and phase-time histograms (v0.12 vllm/v1/metrics/loggers.py): the token counts' buckets are
 * build_1_2_5_buckets(max_model_len); vllm:iteration_tokens_total gets one observation per engine step, the sum
 * of the tokens it put out; numbers past six integer digits as prometheus_client writes them (1e+06). */
Test(prom, vllm_token_and_phase_histograms) {
  prom p;
  prom_init(&p, 1, PROM_VLLM, 2048);
  cr_assert_eq(p.n_tok_b, 11); /* 1 2 5 10 20 50 100 200 500 1000 2000 */
  cr_assert_eq(p.tok_b[10], 2000.0);
  prom_observe(&p, 0, PH_PROMPT, 512);
  prom_observe(&p, 0, PH_GEN, 2000); /* on the last bound */
  prom_observe(&p, 0, PH_PREFILL, 0.25);
  prom_step_tokens(&p, 0, 100, 512 + 1); /* a step: one request's prompt and first token, another's token */
  prom_step_tokens(&p, 0, 100, 1);
  prom_step_tokens(&p, 0, 200, 1);       /* the next step closes it */
  prom_steps_flush(&p);                  /* and a scrape closes the open one */
  prom_steps_flush(&p);                  /* nothing left open */
  cr_assert_eq(p.e[0].h[PH_ITER].n, 2);
  prom_gauges g[1] = {{0, 0, 0.0, 0, 0, 0}};
  oai_buf b = {0};
  prom_write(&p, "m", g, &b);
  const char *must[] = {
      "# HELP vllm:request_prompt_tokens Number of prefill tokens processed.\n"
      "# TYPE vllm:request_prompt_tokens histogram\n",
      "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"500.0\",model_name=\"m\"} 0.0\n",
      "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"1000.0\",model_name=\"m\"} 1.0\n",
      "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"2000.0\",model_name=\"m\"} 1.0\n",
      "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 1.0\n",
      "vllm:request_prompt_tokens_sum{engine=\"0\",model_name=\"m\"} 512.0\n",
      "# HELP vllm:request_generation_tokens Number of generation tokens processed.\n",
      "vllm:request_generation_tokens_bucket{engine=\"0\",le=\"1000.0\",model_name=\"m\"} 0.0\n",
      "vllm:request_generation_tokens_bucket{engine=\"0\",le=\"2000.0\",model_name=\"m\"} 1.0\n",
      "# HELP vllm:iteration_tokens_total Histogram of number of tokens per engine_step.\n"
      "# TYPE vllm:iteration_tokens_total histogram\n",
      "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"1.0\",model_name=\"m\"} 1.0\n",
      "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"512.0\",model_name=\"m\"} 1.0\n",
      "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"1024.0\",model_name=\"m\"} 2.0\n",
      "vllm:iteration_tokens_total_bucket{engine=\"0\",le=\"16384.0\",model_name=\"m\"} 2.0\n",
      "vllm:iteration_tokens_total_count{engine=\"0\",model_name=\"m\"} 2.0\n",
      "vllm:iteration_tokens_total_sum{engine=\"0\",model_name=\"m\"} 515.0\n",
      "# HELP vllm:request_max_num_generation_tokens Histogram of maximum number of requested generation tokens.\n",
      "# HELP vllm:request_params_max_tokens Histogram of the max_tokens request parameter.\n",
      "# HELP vllm:request_inference_time_seconds Histogram of time spent in RUNNING phase for request.\n",
      "# HELP vllm:request_prefill_time_seconds Histogram of time spent in PREFILL phase for request.\n"
      "# TYPE vllm:request_prefill_time_seconds histogram\n",
      "vllm:request_prefill_time_seconds_bucket{engine=\"0\",le=\"0.3\",model_name=\"m\"} 1.0\n",
      "vllm:request_prefill_time_seconds_bucket{engine=\"0\",le=\"7680.0\",model_name=\"m\"} 1.0\n",
      "# HELP vllm:request_decode_time_seconds Histogram of time spent in DECODE phase for request.\n",
  };
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
    cr_assert_not_null(strstr(b.p, must[i]), "missing: %s", must[i]);
  oai_buf_free(&b);
  prom_free(&p);

  /* a long context: buckets up to 1e+06, and a sum of 1234567 tokens written as prometheus_client writes it */
  prom_init(&p, 1, PROM_VLLM, 1048576);
  cr_assert_eq(p.n_tok_b, 19);
  prom_observe(&p, 0, PH_PROMPT, 1234567);
  b = (oai_buf){0};
  prom_write(&p, "m", g, &b);
  cr_assert_not_null(strstr(b.p, "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"500000.0\",model_name=\"m\"} 0.0\n"));
  cr_assert_not_null(strstr(b.p, "vllm:request_prompt_tokens_bucket{engine=\"0\",le=\"1e+06\",model_name=\"m\"} 0.0\n"));
  cr_assert_not_null(strstr(b.p, "vllm:request_prompt_tokens_sum{engine=\"0\",model_name=\"m\"} 1.234567e+06\n"));
  oai_buf_free(&b);
  prom_free(&p);
}

/* --engine sglang: SGLang's names, buckets and label sets (observability/metrics_collector.py): the scheduler's
 * gauges, retractions and queue time per engine (dp_rank with several), the tokenizer manager's counters and
 * latency histograms summed over the server; labels sorted as prometheus_client writes them. */
Test(prom, sglang_exposition) {
  prom p;
  prom_init(&p, 2, PROM_SGLANG, 2048);
  prom_observe(&p, 0, PH_TTFT, 0.1); /* on SGLang's first bound */
  prom_observe(&p, 1, PH_TTFT, 0.15);
  prom_observe(&p, 1, PH_TTFT, 500.0); /* past the last bound (400) */
  prom_observe(&p, 0, PH_QUEUE, 0.0);  /* SGLang's queue histogram starts at 0 */
  p.e[0].prompt_tokens = 100, p.e[1].prompt_tokens = 23;
  p.e[0].success[PR_STOP] = 2, p.e[1].success[PR_ABORT] = 1;
  prom_gauges g[2] = {{3, 1, 0.5, 2, 100, 60}, {0, 4, 0.25, 0, 0, 0}};
  oai_buf b = {0};
  prom_write(&p, "m", g, &b);
  const char *must[] = {
      "# TYPE sglang:num_running_reqs gauge\n",
      "sglang:num_running_reqs{dp_rank=\"0\",engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\","
      "pp_rank=\"0\",tp_rank=\"0\"} 3.0\n",
      "sglang:num_queue_reqs{dp_rank=\"1\",engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\",pp_rank=\"0\","
      "tp_rank=\"0\"} 4.0\n",
      "sglang:token_usage{dp_rank=\"1\",engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\",pp_rank=\"0\","
      "tp_rank=\"0\"} 0.25\n",
      "sglang:cache_hit_rate{dp_rank=\"0\",engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\","
      "pp_rank=\"0\",tp_rank=\"0\"} 0.6\n",
      "sglang:num_retracted_requests_total{dp_rank=\"0\",engine_type=\"unified\",model_name=\"m\","
      "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"} 2.0\n",
      "sglang:queue_time_seconds_bucket{dp_rank=\"0\",engine_type=\"unified\",le=\"0.0\",model_name=\"m\","
      "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"} 1.0\n",
      "sglang:prompt_tokens_total{engine_type=\"unified\",model_name=\"m\"} 123.0\n",
      "sglang:num_requests_total{engine_type=\"unified\",model_name=\"m\"} 3.0\n",
      "sglang:num_aborted_requests_total{engine_type=\"unified\",model_name=\"m\"} 1.0\n",
      "sglang:time_to_first_token_seconds_bucket{engine_type=\"unified\",le=\"0.1\",model_name=\"m\"} 1.0\n",
      "sglang:time_to_first_token_seconds_bucket{engine_type=\"unified\",le=\"0.2\",model_name=\"m\"} 2.0\n",
      "sglang:time_to_first_token_seconds_bucket{engine_type=\"unified\",le=\"400.0\",model_name=\"m\"} 2.0\n",
      "sglang:time_to_first_token_seconds_bucket{engine_type=\"unified\",le=\"+Inf\",model_name=\"m\"} 3.0\n",
      "sglang:time_to_first_token_seconds_count{engine_type=\"unified\",model_name=\"m\"} 3.0\n",
      "# HELP sglang:e2e_request_latency_seconds Histogram of End-to-end request latency in seconds\n",
  };
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
    cr_assert_not_null(strstr(b.p, must[i]), "missing: %s", must[i]);
  cr_assert_null(strstr(b.p, "vllm:"), "no vLLM name");
  oai_buf_free(&b);
  prom_free(&p);
}

Test(eos, parse_and_draw) {
  eos_dist d;
  sim_err err = {0, ""};
  cr_assert_eq(eos_dist_parse("geometric:100", &d, &err), 0, "%s", err.msg);
  cr_assert_eq(d.kind, EOS_GEOMETRIC);
  cr_assert_eq(eos_dist_parse("uniform:5:9", &d, &err), 0);
  cr_assert_eq(eos_dist_parse("lognormal:200:0.8", &d, &err), 0);
  cr_assert_eq(eos_dist_parse("fixed:12", &d, &err), 0);
  const char *badv[] = {"geometric", "geometric:0", "uniform:9:5", "uniform:5", "fixed:1.5", "normal:3", "fixed:3:4",
                        "lognormal:100:9", "geometric:10x"};
  for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++) {
    cr_assert_neq(eos_dist_parse(badv[i], &d, &err), 0, "%s accepted", badv[i]);
    cr_assert(strstr(err.msg, "--eos-dist"), "%s", err.msg);
  }
  /* geometric: mean as asked, every draw >= 1 */
  rng g;
  rng_seed(&g, 1);
  cr_assert_eq(eos_dist_parse("geometric:50", &d, &err), 0);
  double sum = 0;
  for (int i = 0; i < 200000; i++) {
    uint64_t v = eos_draw(&d, &g);
    cr_assert_geq(v, 1);
    sum += (double)v;
  }
  cr_assert(fabs(sum / 200000 - 50) < 1.0, "mean %g", sum / 200000);
  cr_assert_eq(eos_dist_parse("uniform:5:9", &d, &err), 0);
  for (int i = 0; i < 1000; i++) {
    uint64_t v = eos_draw(&d, &g);
    cr_assert(v >= 5 && v <= 9);
  }
}

Test(openai, strings_written_are_json_and_utf8) {
  oai_buf b = {0};
  oai_json_str(&b, "a\"b\\c\n\xc3\xa9\xff");
  cr_assert_str_eq(b.p, "\"a\\\"b\\\\c\\u000a\xc3\xa9\\ufffd\"");
  oai_buf_free(&b);
}

/* Prompt-block ids (prefix caching): equal prefixes, equal leading ids; one block per full 16 tokens. */
static oai_request named(oai_kind k, const char *body) {
  oai_request q;
  char msg[512];
  cr_assert_eq(oai_parse(k, body, strlen(body), 16, &q, msg, sizeof msg), 0, "%s", msg);
  cr_assert_eq(q.n_ids, q.prompt_tokens / 16);
  return q;
}

Test(openai, prompt_blocks_are_named_for_prefix_caching) {
  char a[4096], b[4096];
  /* 40 token ids, then the same 32 and different ones after */
  int n = snprintf(a, sizeof a, "{\"prompt\":["), m = snprintf(b, sizeof b, "{\"prompt\":[");
  for (int i = 0; i < 40; i++) {
    n += snprintf(a + n, sizeof a - (size_t)n, "%s%d", i ? "," : "", i);
    m += snprintf(b + m, sizeof b - (size_t)m, "%s%d", i ? "," : "", i < 32 ? i : 1000 + i);
  }
  snprintf(a + n, sizeof a - (size_t)n, "]}");
  snprintf(b + m, sizeof b - (size_t)m, ",7,7,7,7,7,7,7,7,7,7]}");
  oai_request x = named(OAI_COMPLETIONS, a), y = named(OAI_COMPLETIONS, b);
  cr_assert_eq(x.n_ids, 2);
  cr_assert_eq(y.n_ids, 3);
  cr_assert(x.ids[0] == y.ids[0] && x.ids[1] == y.ids[1], "the same 32 tokens: the same two blocks");
  oai_request_free(&x), oai_request_free(&y);
  /* text: 1 + ceil(bytes / 4) tokens; blocks change where the bytes do */
  char t1[600], t2[600];
  memset(t1, 0, sizeof t1), memset(t2, 0, sizeof t2);
  strcpy(t1, "{\"prompt\":\"");
  strcpy(t2, "{\"prompt\":\"");
  size_t o = strlen(t1);
  for (int i = 0; i < 400; i++) t1[o + (size_t)i] = t2[o + (size_t)i] = (char)('a' + i % 26);
  t2[o + 300] = 'Z'; /* byte 300: token 76, block 4 */
  strcat(t1, "\"}"), strcat(t2, "\"}");
  x = named(OAI_COMPLETIONS, t1), y = named(OAI_COMPLETIONS, t2);
  cr_assert_eq(x.prompt_tokens, 101);
  cr_assert_eq(x.n_ids, 6);
  for (uint32_t j = 0; j < 4; j++) cr_assert(x.ids[j] == y.ids[j], "block %u before the change", j);
  cr_assert(x.ids[4] != y.ids[4], "the block holding the changed byte");
  oai_request_free(&x), oai_request_free(&y);
  /* chats: a shared system prompt shares its blocks; another role does not */
  char sys[300];
  memset(sys, 's', 280);
  sys[280] = 0;
  char c1[800], c2[800], c3[800];
  snprintf(c1, sizeof c1, "{\"messages\":[{\"role\":\"system\",\"content\":\"%s\"},{\"role\":\"user\",\"content\":\"one\"}]}", sys);
  snprintf(c2, sizeof c2, "{\"messages\":[{\"role\":\"system\",\"content\":\"%s\"},{\"role\":\"user\",\"content\":\"two\"}]}", sys);
  snprintf(c3, sizeof c3, "{\"messages\":[{\"role\":\"user\",\"content\":\"%s\"},{\"role\":\"user\",\"content\":\"one\"}]}", sys);
  x = named(OAI_CHAT, c1), y = named(OAI_CHAT, c2);
  oai_request z = named(OAI_CHAT, c3);
  cr_assert_geq(x.n_ids, 4);
  for (uint32_t j = 0; j < 4; j++) cr_assert(x.ids[j] == y.ids[j], "system prompt block %u shared", j);
  cr_assert(x.ids[0] != z.ids[0], "another role: another block");
  oai_request_free(&x), oai_request_free(&y), oai_request_free(&z);
}
