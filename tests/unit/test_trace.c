/* test_trace.c: the trace readers (every format, every bad-input case names
 * file, line and field), lossless native round trip, transforms, statistics,
 * the real public traces when ../shared is present, and a seeded fuzz pass. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "testutil.h"
#include "workload/trace.h"

#define PATH "traces/x.csv"
#define NS 1000000000ull

static int parse(trace *t, const char *text, trace_format fmt, sim_err *e) {
  return trace_parse(t, text, strlen(text), PATH, fmt, e);
}

static void parse_ok(trace *t, const char *text, trace_format fmt) {
  sim_err e = {0};
  int rc = parse(t, text, fmt, &e);
  cr_assert_eq(rc, SIM_OK, "parse failed: %s\ninput:\n%s", e.msg, text);
}

/* Parses `len` bytes (copied into an exact-size buffer, so ASan sees any read
 * past the end), expects SIM_EINPUT with a message that starts with
 * "traces/x.csv:<line>: " and contains each of f1, f2 (if non-NULL). */
static void expect_err_n(const char *text, size_t len, trace_format fmt, size_t line, const char *f1,
                         const char *f2) {
  char *buf = malloc(len ? len : 1);
  memcpy(buf, text, len);
  trace t;
  sim_err e = {0};
  int rc = trace_parse(&t, buf, len, PATH, fmt, &e);
  free(buf);
  cr_assert_eq(rc, SIM_EINPUT, "expected SIM_EINPUT, got %d for input:\n%.*s", rc, (int)len, text);
  cr_assert_eq(e.code, SIM_EINPUT);
  char want[64];
  snprintf(want, sizeof want, PATH ":%zu: ", line);
  cr_assert(strncmp(e.msg, want, strlen(want)) == 0, "message '%s' should start with '%s'", e.msg, want);
  if (f1) cr_assert(strstr(e.msg, f1), "message '%s' lacks '%s'", e.msg, f1);
  if (f2) cr_assert(strstr(e.msg, f2), "message '%s' lacks '%s'", e.msg, f2);
  cr_assert_eq(t.n, 0);
  trace_free(&t);
}

static void expect_err(const char *text, trace_format fmt, size_t line, const char *f1, const char *f2) {
  expect_err_n(text, strlen(text), fmt, line, f1, f2);
}

/* ---------------------------------------------------------------- readers */

Test(trace_native, columns_sessions_hashes_and_exact_ns) {
  trace t;
  parse_ok(&t,
           "# comment\n# hash_block_tokens=16\narrival_s,prompt_tokens,output_tokens,session_id,hash_ids\n"
           "10.25,20,5,a,7|8\n10.25,16,7,,9\n11.000000001,40,1,b,7|8|10\n12.5,8,3,a,\n",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.format, TRACE_FMT_NATIVE);
  cr_assert_eq(t.n, 4);
  cr_assert_eq(t.hash_block_tokens, 16);
  cr_assert_float_eq(t.t0_s, 10.25, 1e-12);
  sim_ns want_t[] = {0, 0, 750000001, 2250000000ull};
  uint32_t want_p[] = {20, 16, 40, 8}, want_o[] = {5, 7, 1, 3}, want_s[] = {1, 0, 2, 1}, want_nh[] = {2, 1, 3, 0};
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(t.reqs[i].arrival_ns, want_t[i], "req %d arrival %llu", i, (unsigned long long)t.reqs[i].arrival_ns);
    cr_assert_eq(t.reqs[i].prompt_tokens, want_p[i]);
    cr_assert_eq(t.reqs[i].output_tokens, want_o[i]);
    cr_assert_eq(t.reqs[i].session, want_s[i]);
    cr_assert_eq(t.reqs[i].n_hash, want_nh[i]);
  }
  cr_assert_eq(t.n_sessions, 2);
  cr_assert_eq(t.n_hash, 6);
  cr_assert_eq(t.hash_ids[t.reqs[2].hash_off + 2], 10);
  cr_assert_eq(t.hash_ids[t.reqs[1].hash_off], 9);
  cr_assert_str_eq(t.source, PATH);
  trace_free(&t);
}

Test(trace_native, minimal_header_crlf_bom_no_final_newline_blank_lines) {
  trace t;
  parse_ok(&t, "\xef\xbb\xbf" "arrival_s,prompt_tokens,output_tokens\r\n\r\n0.5,3,4\r\n 0.75 , 5 , 6 \r\n\r\n1,7,8", TRACE_FMT_AUTO);
  cr_assert_eq(t.n, 3);
  cr_assert_eq(t.reqs[1].arrival_ns, 250000000);
  cr_assert_eq(t.reqs[1].prompt_tokens, 5);
  cr_assert_eq(t.reqs[2].arrival_ns, 500000000);
  cr_assert_eq(t.reqs[2].output_tokens, 8);
  cr_assert_eq(t.n_sessions, 0);
  cr_assert_eq(t.hash_block_tokens, 512);
  trace_free(&t);
  parse_ok(&t, "arrival_s,prompt_tokens,output_tokens\n0,1,1\n\n\n\n", TRACE_FMT_NATIVE);
  cr_assert_eq(t.n, 1);
  trace_free(&t);
}

Test(trace_native, arrival_number_forms_are_exact) {
  trace t;
  parse_ok(&t,
           "arrival_s,prompt_tokens,output_tokens\n0,1,1\n.5,1,1\n5.,1,1\n2.5e1,1,1\n1234567.123456789,1,1\n"
           "1234567.1234567894,1,1\n1234567.1234567895,1,1\n9999999999.999999999,1,1\n",
           TRACE_FMT_NATIVE);
  sim_ns want[] = {0, 500000000, 5 * NS, 25 * NS, 1234567123456789ull, 1234567123456789ull, 1234567123456790ull,
                   9999999999999999999ull};
  cr_assert_eq(t.n, 8);
  for (int i = 0; i < 8; i++)
    cr_assert_eq(t.reqs[i].arrival_ns, want[i], "row %d: %llu", i, (unsigned long long)t.reqs[i].arrival_ns);
  trace_free(&t);
  parse_ok(&t, "arrival_s,prompt_tokens,output_tokens\n1e-3,1,1\n2E-3,1,1\n0.000000003e+6,2,2\n472.0,1,1\n",
           TRACE_FMT_NATIVE);
  cr_assert_eq(t.reqs[1].arrival_ns, 1000000);
  cr_assert_eq(t.reqs[2].arrival_ns, 2000000);
  cr_assert_float_eq(t.t0_s, 0.001, 1e-15);
  trace_free(&t);
}

Test(trace_native, columns_in_any_order_and_case) {
  trace t;
  parse_ok(&t, "Output_Tokens,hash_ids,Arrival_S,prompt_tokens\n3,1|2,0.5,600\n", TRACE_FMT_AUTO);
  cr_assert_eq(t.n, 1);
  cr_assert_eq(t.reqs[0].prompt_tokens, 600);
  cr_assert_eq(t.reqs[0].output_tokens, 3);
  cr_assert_eq(t.reqs[0].n_hash, 2);
  trace_free(&t);
}

Test(trace_azure, crlf_no_final_newline_exact_ns) {
  trace t;
  parse_ok(&t,
           "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n"
           "2023-11-16 18:17:04.0319600,3180,8\r\n2023-11-16 18:17:04.0781490,110,27",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.format, TRACE_FMT_AZURE);
  cr_assert_eq(t.n, 3);
  cr_assert_eq(t.reqs[1].arrival_ns, 52000000);
  cr_assert_eq(t.reqs[2].arrival_ns, 98189000);
  cr_assert_eq(t.reqs[0].prompt_tokens, 4808);
  cr_assert_eq(t.reqs[2].output_tokens, 27);
  /* 2023-11-16 18:17:03 UTC is 1700158623 s after the epoch (python datetime) */
  cr_assert_float_eq(t.t0_s, 1700158623.97996, 1e-6);
  trace_free(&t);
}

Test(trace_azure, calendar_arithmetic_and_fraction_digits) {
  trace t;
  parse_ok(&t,
           "TIMESTAMP,ContextTokens,GeneratedTokens\n"
           "2024-02-28 23:59:59,1,1\n"             /* base */
           "2024-02-29 00:00:00.5,1,1\n"          /* leap day: +0.5 s */
           "2024-03-01 00:00:00.123456789,1,1\n"  /* +1 day + 0.123456789 */
           "2024-12-31 23:59:59.1,1,1\n"
           "2025-01-01T00:00:00.0000001,1,1\n",
           TRACE_FMT_AZURE);
  cr_assert_eq(t.reqs[1].arrival_ns, NS + NS / 2);
  cr_assert_eq(t.reqs[2].arrival_ns, NS + 86400 * NS + 123456789);
  /* 2024-02-28 23:59:59 -> 2024-12-31 23:59:59 is 307 days (2024 is a leap year) */
  cr_assert_eq(t.reqs[3].arrival_ns, 307 * 86400 * NS + 100000000);
  cr_assert_eq(t.reqs[4].arrival_ns, 307 * 86400 * NS + NS + 100);
  /* 2024-02-28 23:59:59 UTC = 1709164799 s */
  cr_assert_float_eq(t.t0_s, 1709164799.0, 1e-6);
  trace_free(&t);
  /* 1970-01-01 and 2000-02-29 (a leap year divisible by 400) */
  parse_ok(&t, "TIMESTAMP,ContextTokens,GeneratedTokens\n1970-01-01 00:00:00,1,1\n2000-02-29 12:00:00,1,1\n",
           TRACE_FMT_AZURE);
  cr_assert_float_eq(t.t0_s, 0.0, 1e-12);
  cr_assert_eq(t.reqs[1].arrival_ns, (951782400ull + 43200) * NS); /* python: 2000-02-29 00:00 UTC = 951782400 */
  trace_free(&t);
}

Test(trace_burstgpt, first_order_skips_failures_allows_ties) {
  trace t;
  parse_ok(&t,
           "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation "
           "log\n45,ChatGPT,1087,230,1317,Conversation log\n45,GPT-4,0,0,0,Conversation log\n45,GPT-4,3,4,7,API log\n"
           "118,GPT-4,417,276,693,API log\n",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.format, TRACE_FMT_BURSTGPT);
  cr_assert_eq(t.n, 4);
  cr_assert_eq(t.n_failed_rows, 1);
  cr_assert_eq(t.reqs[1].arrival_ns, 40 * NS);
  cr_assert_eq(t.reqs[2].arrival_ns, 40 * NS);
  cr_assert_eq(t.reqs[2].prompt_tokens, 3);
  cr_assert_eq(t.reqs[3].arrival_ns, 113 * NS);
  cr_assert_eq(t.reqs[3].output_tokens, 276);
  cr_assert_float_eq(t.t0_s, 5.0, 1e-12);
  trace_free(&t);
}

Test(trace_burstgpt, third_order_sessions_by_first_appearance) {
  trace t;
  parse_ok(&t,
           "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
           "19440110.0,aaaa-1,43,GPT-4,906,446,1352,Conversation log\n"
           "19440161.0,bbbb-2,2,ChatGPT,36,29,65,Conversation log\n"
           "19440170.0,,3,ChatGPT,12,7,19,API log\n"
           "19440171.0,cccc-3,3,ChatGPT,0,0,0,Conversation log\n"
           "19440192.5,aaaa-1,8,GPT-4,1779,123,1902,Conversation log\n"
           "19440193.0,dddd-4,8,GPT-4,5,6,11,Conversation log\n",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.n, 5);
  cr_assert_eq(t.n_failed_rows, 1);
  uint32_t want_s[] = {1, 2, 0, 1, 3}; /* the failure row's session is not counted */
  for (int i = 0; i < 5; i++) cr_assert_eq(t.reqs[i].session, want_s[i], "req %d", i);
  cr_assert_eq(t.n_sessions, 3);
  cr_assert_eq(t.reqs[3].arrival_ns, 82500000000ull);
  cr_assert_eq(t.reqs[3].prompt_tokens, 1779);
  trace_free(&t);
}

Test(trace_mooncake, lines_hashes_ms_and_unknown_keys) {
  trace t;
  parse_ok(&t,
           "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 50, \"hash_ids\": [0, 1]}\n"
           "  {\"hash_ids\":[0],\"output_length\":1,\"extra\":{\"a\":[1,{\"b\":null}],\"c\":\"x\\\"}\"},"
           "\"timestamp\":3000,\"input_length\":512,\"ok\":true}  \r\n"
           "\n"
           "{\"timestamp\": 5999.5, \"input_length\": 1537, \"output_length\": 300, \"hash_ids\": [18446744073709551615, "
           "1, 2, 3]}\n"
           "{\"timestamp\": 6000, \"input_length\": 10, \"output_length\": 2}",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.format, TRACE_FMT_MOONCAKE);
  cr_assert_eq(t.hash_block_tokens, 512);
  cr_assert_eq(t.n, 4);
  cr_assert_eq(t.reqs[1].arrival_ns, 3000000000ull);
  cr_assert_eq(t.reqs[2].arrival_ns, 5999500000ull);
  cr_assert_eq(t.reqs[1].n_hash, 1);
  cr_assert_eq(t.reqs[2].n_hash, 4);
  cr_assert_eq(t.hash_ids[t.reqs[2].hash_off], UINT64_MAX);
  cr_assert_eq(t.reqs[3].n_hash, 0);
  cr_assert_eq(t.reqs[2].prompt_tokens, 1537);
  cr_assert_eq(t.reqs[2].output_tokens, 300);
  trace_free(&t);
}

Test(trace_detect, explicit_format_must_match_header) {
  expect_err("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,1\n", TRACE_FMT_NATIVE, 1, "header",
             "unknown column 'TIMESTAMP'");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n", TRACE_FMT_AZURE, 1, "header",
             "missing column 'TIMESTAMP'");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n", TRACE_FMT_BURSTGPT, 1, "header",
             "missing column 'Timestamp'");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n", TRACE_FMT_MOONCAKE, 1, "invalid JSON", "'{'");
  expect_err("{\"timestamp\": 0}\n", TRACE_FMT_NATIVE, 1, "header", NULL);
  trace t;
  parse_ok(&t, "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n", TRACE_FMT_MOONCAKE);
  cr_assert_eq(t.format, TRACE_FMT_MOONCAKE);
  trace_free(&t);
}

Test(trace_detect, format_names_round_trip) {
  for (int f = TRACE_FMT_AUTO; f <= TRACE_FMT_GENERATED; f++) {
    trace_format g;
    cr_assert(trace_format_parse(trace_format_name((trace_format)f), &g));
    cr_assert_eq((int)g, f);
  }
  trace_format g;
  cr_assert_not(trace_format_parse("csv", &g));
  cr_assert_str_eq(trace_format_name(TRACE_FMT_BURSTGPT), "burstgpt");
}

Test(trace_load, fixtures_from_disk) {
  static const struct {
    const char *file;
    trace_format fmt;
    size_t n;
    uint32_t sessions;
  } cases[] = {
      {"native_small.csv", TRACE_FMT_NATIVE, 4, 2},
      {"azure_small.csv", TRACE_FMT_AZURE, 3, 0},
      {"burstgpt1_small.csv", TRACE_FMT_BURSTGPT, 3, 0},
      {"burstgpt3_small.csv", TRACE_FMT_BURSTGPT, 4, 2},
      {"mooncake_small.jsonl", TRACE_FMT_MOONCAKE, 3, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "tests/data/traces/%s", cases[i].file);
    trace t;
    sim_err e = {0};
    int rc = trace_load(&t, tu_src(rel), TRACE_FMT_AUTO, &e);
    cr_assert_eq(rc, SIM_OK, "%s: %s", cases[i].file, e.msg);
    cr_assert_eq(t.format, cases[i].fmt, "%s", cases[i].file);
    cr_assert_eq(t.n, cases[i].n, "%s: n=%zu", cases[i].file, t.n);
    cr_assert_eq(t.n_sessions, cases[i].sessions, "%s", cases[i].file);
    cr_assert(strstr(t.source, cases[i].file));
    trace_free(&t);
  }
  trace t;
  sim_err e = {0};
  cr_assert_eq(trace_load(&t, "/nonexistent/servesim/trace.csv", TRACE_FMT_AUTO, &e), SIM_EINPUT);
  cr_assert(strstr(e.msg, "/nonexistent/servesim/trace.csv"), "%s", e.msg);
  trace_free(&t);
}

/* -------------------------------------------------------------- bad input */

Test(trace_errors, empty_and_header_problems) {
  expect_err("", TRACE_FMT_AUTO, 1, "empty", NULL);
  expect_err("\n\n \r\n", TRACE_FMT_AUTO, 3, "empty", NULL);
  expect_err("# only a comment\n", TRACE_FMT_NATIVE, 1, "empty", NULL);
  expect_err("0.5,10,20\n1.0,3,4\n", TRACE_FMT_AUTO, 1, "header", "unrecognized header '0.5,10,20'");
  expect_err("0.5,10,20\n", TRACE_FMT_NATIVE, 1, "header", "unknown column '0.5'");
  expect_err("\n\narrival_s,prompt_tokens,output_tokens,foo\n0,1,1\n", TRACE_FMT_AUTO, 3, "header",
             "unknown column 'foo'");
  expect_err("arrival_s,prompt_tokens\n0,1\n", TRACE_FMT_AUTO, 1, "header", "missing column 'output_tokens'");
  expect_err("TIMESTAMP,ContextTokens\n2023-11-16 18:17:03,1\n", TRACE_FMT_AUTO, 1, "header",
             "missing column 'GeneratedTokens'");
  expect_err("Timestamp,Model,Request tokens,Total tokens\n5,x,1,2\n", TRACE_FMT_AUTO, 1, "header",
             "missing column 'Response tokens'");
  expect_err("arrival_s,prompt_tokens,output_tokens,prompt_tokens\n0,1,1,1\n", TRACE_FMT_AUTO, 1, "header",
             "duplicate column 'prompt_tokens'");
  expect_err("arrival_s,prompt_tokens,output_tokens\n", TRACE_FMT_AUTO, 1, "no requests", NULL);
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,0,0,0,x\n6,GPT-4,0,0,0,x\n",
             TRACE_FMT_AUTO, 3, "all 2 rows are failures", NULL);
}

Test(trace_errors, the_documented_example_message) {
  char text[2048] = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 15; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "%d,10,20\n", i);
  strcat(text, "16,10,abc\n17,1,1\n");
  trace t;
  sim_err e = {0};
  cr_assert_eq(parse(&t, text, TRACE_FMT_AUTO, &e), SIM_EINPUT);
  cr_assert_str_eq(e.msg, "traces/x.csv:17: column 'output_tokens': expected a non-negative integer, got 'abc'");
  trace_free(&t);
}

Test(trace_errors, field_counts) {
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n1.0,5\n", TRACE_FMT_AUTO, 3, "column 'output_tokens'",
             "missing field");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n\n1.0\n", TRACE_FMT_AUTO, 4, "column 'prompt_tokens'",
             "missing field");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n1.0,5,6,7\n", TRACE_FMT_AUTO, 3, "column 4",
             "extra field '7'");
  expect_err("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.1,5,6,\r\n", TRACE_FMT_AUTO, 2,
             "column 4", "extra field ''");
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490\n",
             TRACE_FMT_AUTO, 2, "column 6 'Log Type'", "missing field");
}

Test(trace_errors, token_values) {
  const char *h = "arrival_s,prompt_tokens,output_tokens\n0,1,1\n";
  char b[512];
  struct {
    const char *row, *f1, *f2;
  } cases[] = {
      {"1,abc,1", "column 'prompt_tokens'", "got 'abc'"},
      {"1,1,-5", "column 'output_tokens'", "negative '-5'"},
      {"1,-0,1", "column 'prompt_tokens'", "'-0'"},
      {"1,12.5,1", "column 'prompt_tokens'", "got '12.5'"},
      {"1,1e3,1", "column 'prompt_tokens'", "got '1e3'"},
      {"1,,1", "column 'prompt_tokens'", "got ''"},
      {"1,1,0", "column 'output_tokens'", "0 output tokens"},
      {"1,0,1", "column 'prompt_tokens'", "0 prompt tokens"},
      {"1,10000001,1", "column 'prompt_tokens'", "limit of 10000000"},
      {"1,1,99999999999999999999999999", "column 'output_tokens'", "limit of 10000000"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(b, sizeof b, "%s%s\n", h, cases[i].row);
    expect_err(b, TRACE_FMT_AUTO, 3, cases[i].f1, cases[i].f2);
  }
  trace t;
  snprintf(b, sizeof b, "%s1,10000000,10000000\n", h);
  parse_ok(&t, b, TRACE_FMT_AUTO);
  cr_assert_eq(t.reqs[1].prompt_tokens, 10000000);
  trace_free(&t);
  /* Azure and Mooncake report zero tokens too; BurstGPT only skips rows where both are 0 */
  expect_err("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,5,0\n", TRACE_FMT_AUTO, 2,
             "column 'GeneratedTokens'", "0 output tokens");
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,0,18,18,x\n",
             TRACE_FMT_AUTO, 2, "column 'Request tokens'", "0 prompt tokens");
  parse_ok(&t, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,7,0,7,x\n6,a,1,1,2,x\n",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.n, 1, "BurstGPT: 0 response tokens marks a failure, whatever the request tokens");
  cr_assert_eq(t.n_failed_rows, 1);
  cr_assert_eq(t.reqs[0].prompt_tokens, 1);
  trace_free(&t);
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,x7,0,7,x\n",
             TRACE_FMT_AUTO, 2, "column 'Request tokens'", "got 'x7'");
  expect_err("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 0}\n", TRACE_FMT_AUTO, 1,
             "key 'output_length'", "0 output tokens");
  expect_err("{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 4}\n", TRACE_FMT_AUTO, 1,
             "key 'input_length'", "0 prompt tokens");
  expect_err("{\"timestamp\": 0, \"input_length\": 20000000, \"output_length\": 4}\n", TRACE_FMT_AUTO, 1,
             "key 'input_length'", "limit of 10000000");
}

Test(trace_errors, timestamps) {
  const char *nh = "arrival_s,prompt_tokens,output_tokens\n0,1,1\n";
  char b[512];
  const char *bad_native[] = {"abc", "1.2.3", "nan", "inf", "", "1e", "+1", "0x10", "1,5"};
  for (size_t i = 0; i < sizeof bad_native / sizeof bad_native[0]; i++) {
    snprintf(b, sizeof b, "%s%s,1,1\n", nh, bad_native[i]);
    if (strcmp(bad_native[i], "1,5") == 0) continue; /* that is an extra field, tested elsewhere */
    expect_err(b, TRACE_FMT_NATIVE, 3, "column 'arrival_s'", "expected a non-negative number of seconds");
  }
  snprintf(b, sizeof b, "%s-1.5,1,1\n", nh);
  expect_err(b, TRACE_FMT_NATIVE, 3, "column 'arrival_s'", "negative timestamp '-1.5'");
  snprintf(b, sizeof b, "%s1e10,1,1\n", nh);
  expect_err(b, TRACE_FMT_NATIVE, 3, "column 'arrival_s'", "beyond the supported range");
  snprintf(b, sizeof b, "%s10000000000.0,1,1\n", nh);
  expect_err(b, TRACE_FMT_NATIVE, 3, "column 'arrival_s'", "beyond the supported range");
  snprintf(b, sizeof b, "%s1e999999999,1,1\n", nh);
  expect_err(b, TRACE_FMT_NATIVE, 3, "column 'arrival_s'", "beyond the supported range");

  const char *ah = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,1\n";
  struct {
    const char *ts, *f2;
  } bad_azure[] = {
      {"yesterday", "expected a timestamp"},
      {"2023-11-16 18:17:03.97996xx", "expected a timestamp"},
      {"2023-11-16 18:17:03.", "1 to 9 fractional digits"},
      {"2023-11-16 18:17:03.1234567890", "1 to 9 fractional digits"},
      {"2023-11-16 18:17", "expected a timestamp"},
      {"2023/11/16 18:17:04", "expected a timestamp"},
      {"2023-13-16 18:17:04", "invalid date"},
      {"2023-02-29 18:17:04", "invalid date"},
      {"2023-11-16 24:00:00", "invalid date"},
      {"2023-11-16 18:60:00", "invalid date"},
      {"1969-12-31 23:59:59", "before 1970"},
      {"2300-01-01 00:00:00", "beyond the supported range"},
      {"2023-11-16 18:17:03 +0100", "fractional digits"},
  };
  for (size_t i = 0; i < sizeof bad_azure / sizeof bad_azure[0]; i++) {
    snprintf(b, sizeof b, "%s%s,1,1\n", ah, bad_azure[i].ts);
    expect_err(b, TRACE_FMT_AZURE, 3, "column 'TIMESTAMP'", bad_azure[i].f2);
  }
  expect_err("{\"timestamp\": 1e13, \"input_length\": 1, \"output_length\": 1}\n", TRACE_FMT_AUTO, 1,
             "key 'timestamp'", "beyond the supported range");
  expect_err("{\"timestamp\": -3, \"input_length\": 1, \"output_length\": 1}\n", TRACE_FMT_AUTO, 1,
             "key 'timestamp'", "negative");
  expect_err("{\"timestamp\": \"0\", \"input_length\": 1, \"output_length\": 1}\n", TRACE_FMT_AUTO, 1,
             "key 'timestamp'", "a string");
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5:00,a,1,1,2,x\n", TRACE_FMT_AUTO,
             2, "column 'Timestamp'", "got '5:00'");
}

Test(trace_errors, unsorted_names_line_and_both_values) {
  expect_err("arrival_s,prompt_tokens,output_tokens\n1.0,1,1\n2.0,1,1\n2.0,1,1\n1.5,1,1\n", TRACE_FMT_AUTO, 5,
             "column 'arrival_s': timestamp '1.5' is earlier than '2.0' on line 4", NULL);
  expect_err("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:04.5,1,1\r\n2023-11-16 18:17:04.4999999,1,1",
             TRACE_FMT_AUTO, 3, "'2023-11-16 18:17:04.4999999' is earlier than '2023-11-16 18:17:04.5' on line 2",
             NULL);
  expect_err("{\"timestamp\": 3000, \"input_length\": 1, \"output_length\": 1}\n"
             "{\"timestamp\": 2999, \"input_length\": 1, \"output_length\": 1}\n",
             TRACE_FMT_AUTO, 2, "key 'timestamp'", "'2999' is earlier than '3000' on line 1");
  /* a BurstGPT failure row still counts for ordering */
  expect_err("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,a,1,1,2,x\n9,a,0,0,0,x\n"
             "7,a,1,1,2,x\n",
             TRACE_FMT_AUTO, 4, "column 'Timestamp'", "'7' is earlier than '9' on line 3");
}

Test(trace_errors, mooncake_json) {
  struct {
    const char *line, *f1, *f2;
  } cases[] = {
      {"{\"timestamp\": 0, \"input_length\": 5", "invalid JSON", "expected ',' or '}'"},
      {"{\"timestamp\": 0 \"input_length\": 5}", "invalid JSON", "expected ',' or '}'"},
      {"[1, 2]", "invalid JSON", "expected '{'"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 3} x", "invalid JSON", "trailing"},
      {"{\"timestamp\" 0}", "invalid JSON", "':'"},
      {"{timestamp: 0}", "invalid JSON", "key string"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"x\": [1, }", "invalid JSON", "malformed value"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"x\": tru}", "invalid JSON", "malformed value"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"x\": \"abc}", "invalid JSON", NULL},
      {"{\"timestamp\": 0, \"input_length\": 5}", "key 'output_length'", "missing key"},
      {"{}", "key 'timestamp'", "missing key"},
      {"{\"timestamp\": 0, \"output_length\": 5}", "key 'input_length'", "missing key"},
      {"{\"timestamp\": 0, \"input_length\": \"5\", \"output_length\": 5}", "key 'input_length'", "got a string"},
      {"{\"timestamp\": 0, \"input_length\": null, \"output_length\": 5}", "key 'input_length'", "got null"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": [5]}", "key 'output_length'", "got an array"},
      {"{\"timestamp\": 0, \"input_length\": 5.5, \"output_length\": 5}", "key 'input_length'", "got '5.5'"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"input_length\": 6}", "key 'input_length'",
       "duplicate"},
      {"{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5, \"hash_ids\": 7}", "key 'hash_ids'",
       "expected an array of non-negative integers, got a number"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, -2]}", "key 'hash_ids'",
       "element 2"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, \"a\"]}", "key 'hash_ids'",
       "element 2: expected a non-negative integer, got a string"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1.5]}", "key 'hash_ids'",
       "element 1"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [18446744073709551616]}",
       "key 'hash_ids'", "element 1"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2, 3]}", "key 'hash_ids'",
       "3 hash ids for 600 prompt tokens"},
      {"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2", "invalid JSON",
       "hash_ids"},
  };
  char b[512];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* the bad line is line 2 after a good one, except when it must be the first (detection) */
    snprintf(b, sizeof b, "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n%s\n", cases[i].line);
    expect_err(b, TRACE_FMT_MOONCAKE, 2, cases[i].f1, cases[i].f2);
  }
  /* deep nesting in an unknown key does not recurse */
  char deep[4096];
  int k = snprintf(deep, sizeof deep, "{\"x\": ");
  for (int i = 0; i < 2000; i++) deep[k++] = '[';
  deep[k] = 0;
  expect_err(deep, TRACE_FMT_AUTO, 1, "invalid JSON", NULL);
}

Test(trace_errors, native_hash_ids_and_comments) {
  const char *h = "arrival_s,prompt_tokens,output_tokens,hash_ids\n";
  char b[512];
  struct {
    const char *row, *f2;
  } cases[] = {
      {"0,600,1,1||2", "element 2"}, {"0,600,1,1|x", "element 2"},  {"0,600,1,-1", "element 1"},
      {"0,600,1,1|", "element 2"},   {"0,600,1,1|2|3", "3 hash ids"}, {"0,600,1,99999999999999999999", "element 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(b, sizeof b, "%s%s\n", h, cases[i].row);
    expect_err(b, TRACE_FMT_AUTO, 2, "column 'hash_ids'", cases[i].f2);
  }
  expect_err("# hash_block_tokens=0\narrival_s,prompt_tokens,output_tokens\n0,1,1\n", TRACE_FMT_AUTO, 1,
             "comment 'hash_block_tokens'", "must be >= 1");
  expect_err("# hash_block_tokens = abc\narrival_s,prompt_tokens,output_tokens\n0,1,1\n", TRACE_FMT_AUTO, 1,
             "comment 'hash_block_tokens'", "got 'abc'");
  expect_err("arrival_s,prompt_tokens,output_tokens\n0,1,1\n# hash_block_tokens=16\n", TRACE_FMT_AUTO, 3, "comment",
             "before the header");
  expect_err("# hash_block_tokens=16\nTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,1,1\n",
             TRACE_FMT_AUTO, 1, "comment", "only meaningful in native");
  trace t;
  parse_ok(&t, "#hash_block_tokens = 4\narrival_s,prompt_tokens,output_tokens,hash_ids\n0,9,1,5|6|7\n# note\n",
           TRACE_FMT_AUTO);
  cr_assert_eq(t.hash_block_tokens, 4);
  cr_assert_eq(t.reqs[0].n_hash, 3);
  trace_free(&t);
}

Test(trace_errors, hostile_bytes_never_crash) {
  /* embedded NULs: shown escaped */
  const char nul[] = "arrival_s,prompt_tokens,output_tokens\n0,1\0\0,1\n";
  expect_err_n(nul, sizeof nul - 1, TRACE_FMT_AUTO, 2, "column 'prompt_tokens'", "got '1\\x00\\x00'");
  /* UTF-8 garbage in a header */
  expect_err("\xff\xfe\xc3(arrival\n", TRACE_FMT_AUTO, 1, "header", "\\xff\\xfe\\xc3(arrival");
  /* a 1 MB number, a 1 MB line of commas, a 1 MB line without newline */
  size_t big = 1 << 20;
  char *b = malloc(big + 128);
  strcpy(b, "arrival_s,prompt_tokens,output_tokens\n");
  size_t o = strlen(b);
  memset(b + o, '9', big);
  memcpy(b + o + big, ",1,1\n", 6);
  expect_err(b, TRACE_FMT_AUTO, 2, "column 'arrival_s'", "beyond the supported range");
  memset(b + o, ',', big);
  b[o + big] = 0;
  expect_err(b, TRACE_FMT_AUTO, 2, "column 4", "extra field");
  memset(b + o, '1', big);
  b[o + big] = 0;
  expect_err(b, TRACE_FMT_AUTO, 2, "column 'prompt_tokens'", "missing field");
  memset(b, '{', big);
  expect_err_n(b, big, TRACE_FMT_AUTO, 1, "invalid JSON", NULL);
  free(b);
}

/* ------------------------------------------------------------- round trip */

static char *write_to_string(const trace *t, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  cr_assert(f);
  sim_err e = {0};
  cr_assert_eq(trace_write_native(t, f, &e), SIM_OK, "%s", e.msg);
  fclose(f);
  return buf;
}

static void assert_same_requests(const trace *a, const trace *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert_eq(a->n_sessions, b->n_sessions);
  for (size_t i = 0; i < a->n; i++) {
    const trace_req *x = &a->reqs[i], *y = &b->reqs[i];
    cr_assert_eq(x->arrival_ns, y->arrival_ns, "req %zu: %llu vs %llu", i, (unsigned long long)x->arrival_ns,
                 (unsigned long long)y->arrival_ns);
    cr_assert_eq(x->prompt_tokens, y->prompt_tokens, "req %zu", i);
    cr_assert_eq(x->output_tokens, y->output_tokens, "req %zu", i);
    cr_assert_eq(x->session, y->session, "req %zu", i);
    cr_assert_eq(x->n_hash, y->n_hash, "req %zu", i);
    for (uint32_t k = 0; k < x->n_hash; k++)
      cr_assert_eq(a->hash_ids[x->hash_off + k], b->hash_ids[y->hash_off + k], "req %zu hash %u", i, k);
  }
  if (a->n_hash) cr_assert_eq(a->hash_block_tokens, b->hash_block_tokens);
}

static void round_trip(const trace *a) {
  size_t len;
  char *text = write_to_string(a, &len);
  trace b;
  sim_err e = {0};
  int rc = trace_parse(&b, text, len, "roundtrip.csv", TRACE_FMT_AUTO, &e);
  cr_assert_eq(rc, SIM_OK, "%s", e.msg);
  cr_assert_eq(b.format, TRACE_FMT_NATIVE);
  assert_same_requests(a, &b);
  trace_free(&b);
  free(text);
}

Test(trace_write, exact_text_and_round_trip) {
  trace t;
  parse_ok(&t,
           "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
           "19440110.0,u-1,43,GPT-4,906,446,1352,Conversation log\n"
           "19440110.123456789,,2,ChatGPT,36,29,65,API log\n"
           "19440171.5,u-2,3,ChatGPT,1,1,2,Conversation log\n"
           "19440172,u-1,3,ChatGPT,2,3,5,Conversation log\n",
           TRACE_FMT_AUTO);
  size_t len;
  char *text = write_to_string(&t, &len);
  cr_assert_str_eq(text,
                   "arrival_s,prompt_tokens,output_tokens,session_id\n0.000000000,906,446,s1\n0.123456789,36,29,\n"
                   "61.500000000,1,1,s2\n62.000000000,2,3,s1\n");
  free(text);
  round_trip(&t);
  trace_free(&t);

  parse_ok(&t,
           "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 50, \"hash_ids\": [0, 1]}\n"
           "{\"timestamp\": 1, \"input_length\": 7, \"output_length\": 2}\n"
           "{\"timestamp\": 3000.000001, \"input_length\": 513, \"output_length\": 1, \"hash_ids\": [0, 18446744073709551615]}\n",
           TRACE_FMT_AUTO);
  text = write_to_string(&t, &len);
  cr_assert_str_eq(text,
                   "# hash_block_tokens=512\narrival_s,prompt_tokens,output_tokens,hash_ids\n0.000000000,600,50,0|1\n"
                   "0.001000000,7,2,\n3.000000001,513,1,0|18446744073709551615\n");
  free(text);
  round_trip(&t);
  trace_free(&t);
}

Test(trace_write, random_traces_round_trip) {
  rng r;
  rng_seed(&r, 11);
  for (int iter = 0; iter < 20; iter++) {
    trace t;
    trace_init(&t);
    t.hash_block_tokens = 1 + (uint32_t)rng_below(&r, 64);
    sim_ns at = 0;
    uint32_t next_sess = 0;
    uint64_t ids[64];
    for (int i = 0; i < 300; i++) {
      if (i) at += rng_below(&r, 3) ? rng_below(&r, 5 * NS) : 0;
      uint32_t p = 1 + (uint32_t)rng_below(&r, 5000), o = 1 + (uint32_t)rng_below(&r, 900);
      uint32_t s = 0;
      if (rng_below(&r, 2)) s = next_sess && rng_below(&r, 2) ? 1 + (uint32_t)rng_below(&r, next_sess) : ++next_sess;
      uint32_t nh = 0;
      if (iter % 2) {
        uint64_t blocks = (p + t.hash_block_tokens - 1) / t.hash_block_tokens;
        nh = (uint32_t)rng_below(&r, SIM_MIN(blocks, 64) + 1);
        for (uint32_t k = 0; k < nh; k++) ids[k] = rng_u64(&r) >> rng_below(&r, 64);
      }
      trace_push(&t, at, p, o, s, ids, nh);
    }
    round_trip(&t);
    trace_free(&t);
  }
}

/* ------------------------------------------------------------- transforms */

static void five_requests(trace *t) {
  parse_ok(t,
           "# hash_block_tokens=4\narrival_s,prompt_tokens,output_tokens,session_id,hash_ids\n"
           "100,4,10,x,1\n101,8,20,y,2|3\n102,3,30,x,4\n103.5,1,1,,\n104,10,5,z,5|6|7\n",
           TRACE_FMT_AUTO);
}

/* --duration: a trace of 5 requests over 4 s (arrivals 0, 1, 2, 3.5, 4; mean
 * gap 1 s, so a period of 5 s) repeated to 12 s holds copies at 0, 5 and 10
 * s (the third cut at 12 s: 10 and 11 s): 5 + 5 + 2 requests, the trace's own rate; each
 * copy's sessions and prefix ids are new (within a copy equal ids stay equal:
 * x's two requests), unless shared; a shorter duration cuts. */
Test(trace_transform, repeat_extends_with_new_sessions_and_prefixes) {
  trace t;
  five_requests(&t);
  cr_assert(trace_repeat(&t, 12.0, false));
  cr_assert_eq(t.n, 12);
  cr_assert_eq(t.reqs[5].arrival_ns, 5 * NS);
  cr_assert_eq(t.reqs[10].arrival_ns, 10 * NS);
  cr_assert_eq(t.reqs[11].arrival_ns, 11 * NS);
  for (size_t i = 1; i < t.n; i++) cr_assert_geq(t.reqs[i].arrival_ns, t.reqs[i - 1].arrival_ns, "sorted");
  cr_assert_eq(t.n_sessions, 8, "3 sessions a copy; the cut third copy holds 2 of them");
  cr_assert_eq(t.reqs[5].session, t.reqs[0].session + 3);
  cr_assert_eq(t.reqs[7].session, t.reqs[5].session, "x's requests share their session within a copy");
  /* prefix ids: copy 1 differs from copy 0, equal within the copy where they were equal */
  uint64_t id0 = t.hash_ids[t.reqs[1].hash_off], id1 = t.hash_ids[t.reqs[6].hash_off];
  cr_assert_neq(id0, id1);
  for (size_t i = 0; i < 5; i++)
    for (size_t j = 5; j < 10; j++)
      for (uint32_t a = 0; a < t.reqs[i].n_hash; a++)
        for (uint32_t b = 0; b < t.reqs[j].n_hash; b++)
          cr_assert_neq(t.hash_ids[t.reqs[i].hash_off + a], t.hash_ids[t.reqs[j].hash_off + b],
                        "no prefix block shared across copies");
  cr_assert_eq(t.reqs[6].n_hash, 2);
  round_trip(&t);
  trace_free(&t);

  five_requests(&t);
  cr_assert(trace_repeat(&t, 12.0, true));
  cr_assert_eq(t.n, 12);
  cr_assert_eq(t.n_sessions, 3, "shared: the same sessions");
  cr_assert_eq(t.hash_ids[t.reqs[6].hash_off], t.hash_ids[t.reqs[1].hash_off], "shared: the same prefix ids");
  trace_free(&t);

  five_requests(&t);
  cr_assert(trace_repeat(&t, 2.5, false));
  cr_assert_eq(t.n, 3, "cut: 0, 1, 2 s");
  trace_free(&t);

  trace_init(&t);
  trace_push(&t, 0, 10, 10, 0, NULL, 0);
  trace_push(&t, 0, 10, 10, 0, NULL, 0);
  cr_assert(!trace_repeat(&t, 10.0, false), "no time span to repeat");
  cr_assert_eq(t.n, 2);
  trace_free(&t);
}

Test(trace_transform, window_rezeroes_compacts_and_renumbers) {
  trace t;
  five_requests(&t);
  trace_window(&t, 1.0, 3.5); /* keeps 101, 102 (103.5 is at the end bound) */
  cr_assert_eq(t.n, 2);
  cr_assert_eq(t.reqs[0].arrival_ns, 0);
  cr_assert_eq(t.reqs[1].arrival_ns, NS);
  cr_assert_float_eq(t.t0_s, 101.0, 1e-9);
  cr_assert_eq(t.reqs[0].session, 1); /* y first, then x */
  cr_assert_eq(t.reqs[1].session, 2);
  cr_assert_eq(t.n_sessions, 2);
  cr_assert_eq(t.n_hash, 3);
  cr_assert_eq(t.hash_ids[t.reqs[0].hash_off], 2);
  cr_assert_eq(t.hash_ids[t.reqs[0].hash_off + 1], 3);
  cr_assert_eq(t.hash_ids[t.reqs[1].hash_off], 4);
  round_trip(&t);
  trace_free(&t);

  five_requests(&t);
  trace_window(&t, 3.5, -1); /* from 103.5 to the end */
  cr_assert_eq(t.n, 2);
  cr_assert_eq(t.reqs[1].arrival_ns, NS / 2);
  cr_assert_eq(t.reqs[0].session, 0);
  cr_assert_eq(t.reqs[1].session, 1);
  cr_assert_eq(t.n_sessions, 1);
  trace_free(&t);

  five_requests(&t);
  trace_window(&t, 100, -1);
  cr_assert_eq(t.n, 0);
  cr_assert_eq(t.n_hash, 0);
  trace_free(&t);
}

Test(trace_transform, scale_rate_lengths_truncate) {
  trace t;
  five_requests(&t);
  trace_scale_rate(&t, 2.0);
  sim_ns want[] = {0, NS / 2, NS, 1750000000ull, 2 * NS};
  for (int i = 0; i < 5; i++) cr_assert_eq(t.reqs[i].arrival_ns, want[i]);
  trace_scale_rate(&t, 3.0); /* 0.5 s / 3 = 166666666.67 ns -> rounds to 166666667 */
  cr_assert_eq(t.reqs[1].arrival_ns, 166666667);
  cr_assert_eq(t.reqs[3].arrival_ns, 583333333);
  trace_free(&t);

  five_requests(&t);
  trace_scale_lengths(&t, 0.5, 0.25); /* prompts 4 8 3 1 10 -> 2 4 2 1 5; outputs 10 20 30 1 5 -> 3 5 8 1 1 */
  uint32_t wp[] = {2, 4, 2, 1, 5}, wo[] = {3, 5, 8, 1, 1}, wh[] = {1, 1, 1, 0, 2};
  for (int i = 0; i < 5; i++) {
    cr_assert_eq(t.reqs[i].prompt_tokens, wp[i], "req %d prompt %u", i, t.reqs[i].prompt_tokens);
    cr_assert_eq(t.reqs[i].output_tokens, wo[i], "req %d output %u", i, t.reqs[i].output_tokens);
    cr_assert_eq(t.reqs[i].n_hash, wh[i], "req %d n_hash %u", i, t.reqs[i].n_hash);
  }
  round_trip(&t);
  trace_scale_lengths(&t, 3.0, 0.0);
  cr_assert_eq(t.reqs[4].prompt_tokens, 15);
  cr_assert_eq(t.reqs[4].output_tokens, 1);
  trace_free(&t);

  five_requests(&t);
  trace_truncate(&t, 2);
  cr_assert_eq(t.n, 2);
  cr_assert_eq(t.n_hash, 3);
  cr_assert_eq(t.n_sessions, 2);
  trace_truncate(&t, 100);
  cr_assert_eq(t.n, 2);
  trace_truncate(&t, 0);
  cr_assert_eq(t.n, 0);
  cr_assert_eq(t.n_sessions, 0);
  trace_free(&t);
}

/* ------------------------------------------------------------------ stats */

Test(trace_stats, numpy_linear_percentiles) {
  trace t;
  trace_init(&t);
  uint32_t p[] = {10, 1, 4, 3, 2}, o[] = {7, 7, 7, 7, 100};
  for (int i = 0; i < 5; i++) trace_push(&t, (sim_ns)i * NS / 4, p[i], o[i], 0, NULL, 0);
  trace_stats s;
  trace_compute_stats(&t, &s);
  cr_assert_eq(s.n, 5);
  cr_assert_float_eq(s.span_s, 1.0, 1e-12);
  cr_assert_float_eq(s.rate_per_s, 5.0, 1e-12);
  cr_assert_float_eq(s.prompt_mean, 4.0, 1e-12);
  cr_assert_float_eq(s.prompt_p50, 3.0, 1e-12);
  cr_assert_float_eq(s.prompt_p90, 7.6, 1e-9);  /* numpy.percentile([1,2,3,4,10], 90) */
  cr_assert_float_eq(s.prompt_p99, 9.76, 1e-9); /* numpy.percentile([1,2,3,4,10], 99) */
  cr_assert_float_eq(s.prompt_max, 10.0, 1e-12);
  cr_assert_eq(s.prompt_total, 20);
  cr_assert_float_eq(s.output_p90, 62.8, 1e-9);
  cr_assert_eq(s.output_total, 128);
  trace_free(&t);
  trace_init(&t);
  trace_compute_stats(&t, &s);
  cr_assert_eq(s.n, 0);
  cr_assert_float_eq(s.prompt_mean, 0.0, 1e-12);
  trace_push(&t, 0, 70000, 3, 0, NULL, 0); /* values above 65535 exercise the radix sort's upper bytes */
  trace_push(&t, 0, 65536, 3, 0, NULL, 0);
  trace_compute_stats(&t, &s);
  cr_assert_float_eq(s.prompt_p50, 67768.0, 1e-9);
  cr_assert_float_eq(s.rate_per_s, 0.0, 1e-12);
  trace_free(&t);
}

/* ------------------------------------------------------ real public traces */

static bool load_shared(trace *t, const char *rel) {
  const char *p = tu_shared(rel);
  if (!p) return false;
  sim_err e = {0};
  int rc = trace_load(t, p, TRACE_FMT_AUTO, &e);
  cr_assert_eq(rc, SIM_OK, "%s: %s", rel, e.msg);
  return true;
}

/* Sum of the third CSV column, read without the reader under test. */
static uint64_t sum_third_column(const char *path, size_t *rows) {
  FILE *f = fopen(path, "rb");
  cr_assert(f);
  char line[4096];
  uint64_t sum = 0;
  *rows = 0;
  cr_assert(fgets(line, sizeof line, f)); /* header */
  while (fgets(line, sizeof line, f)) {
    char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (!c2) continue;
    sum += strtoull(c2 + 1, NULL, 10);
    (*rows)++;
  }
  fclose(f);
  return sum;
}

Test(trace_shared, azure_conv_and_code) {
  trace t;
  if (!load_shared(&t, "traces/azure2023_conv.csv")) cr_skip_test("../shared absent");
  cr_assert_eq(t.format, TRACE_FMT_AZURE);
  cr_assert_eq(t.n, 19366);
  size_t rows;
  uint64_t want = sum_third_column(tu_shared("traces/azure2023_conv.csv"), &rows);
  cr_assert_eq(rows, 19366);
  trace_stats s;
  trace_compute_stats(&t, &s);
  cr_assert_eq(s.output_total, want, "output total %llu, file says %llu", (unsigned long long)s.output_total,
               (unsigned long long)want);
  /* SOURCES.md: span 3,501.7 s; prompt 1154.7 / 1020 / 2734.5 / 4142 / 14050; output 211.1 / 129 / 424 / 601 / 1000 */
  cr_assert_float_eq(s.span_s, 3501.7, 0.05);
  cr_assert_float_eq(s.prompt_mean, 1154.7, 0.05);
  cr_assert_float_eq(s.prompt_p50, 1020, 1e-9);
  cr_assert_float_eq(s.prompt_p90, 2734.5, 1e-9);
  cr_assert_float_eq(s.prompt_p99, 4142, 1e-9);
  cr_assert_float_eq(s.prompt_max, 14050, 1e-9);
  cr_assert_float_eq(s.output_p50, 129, 1e-9);
  cr_assert_float_eq(s.output_p99, 601, 1e-9);
  cr_assert_float_eq(t.t0_s, 1700158546.68059, 1e-5); /* 2023-11-16 18:15:46.6805900 */
  round_trip(&t);
  trace_free(&t);
  cr_assert(load_shared(&t, "traces/azure2023_code.csv"));
  cr_assert_eq(t.n, 8819);
  trace_compute_stats(&t, &s);
  cr_assert_float_eq(s.prompt_p90, 5187.6, 0.05);
  cr_assert_float_eq(s.output_p99, 251.5, 0.05);
  trace_free(&t);
}

Test(trace_shared, burstgpt_slices) {
  trace t;
  if (!load_shared(&t, "traces/burstgpt1_first400.csv")) cr_skip_test("../shared absent");
  cr_assert_eq(t.n, 383);
  cr_assert_eq(t.n_failed_rows, 17);
  trace_stats s;
  trace_compute_stats(&t, &s);
  /* SOURCES.md, excluding failures: 543.6 / 353 / 1436.6 / 1958.4 / 2126; output 288.8 / 238 / 584.2 / 1424.8 */
  cr_assert_float_eq(s.prompt_mean, 543.6, 0.05);
  cr_assert_float_eq(s.prompt_p90, 1436.6, 0.05);
  cr_assert_float_eq(s.prompt_p99, 1958.4, 0.05);
  cr_assert_float_eq(s.output_p90, 584.2, 0.05);
  cr_assert_float_eq(s.output_p99, 1424.8, 0.05);
  trace_free(&t);
  cr_assert(load_shared(&t, "traces/burstgpt3_first400.csv"));
  cr_assert_eq(t.n, 399);
  cr_assert_eq(t.n_failed_rows, 1);
  cr_assert_eq(t.n_sessions, 134); /* 135 ids in the file, one only on the failure row */
  cr_assert_float_eq(t.t0_s, 19440110.0, 1e-9);
  trace_compute_stats(&t, &s);
  cr_assert_float_eq(s.prompt_p99, 5991.7, 0.05);
  round_trip(&t);
  trace_free(&t);
}

Test(trace_shared, mooncake_conversation) {
  trace t;
  if (!load_shared(&t, "traces/mooncake_conversation.jsonl")) cr_skip_test("../shared absent");
  cr_assert_eq(t.n, 12031);
  cr_assert_eq(t.hash_block_tokens, 512);
  cr_assert_eq(t.n_hash, 288500);
  for (size_t i = 0; i < t.n; i++)
    cr_assert_eq(t.reqs[i].n_hash, (t.reqs[i].prompt_tokens + 511) / 512, "row %zu", i + 1);
  trace_stats s;
  trace_compute_stats(&t, &s);
  cr_assert_float_eq(s.span_s, 3537.0, 0.05);
  cr_assert_float_eq(s.prompt_p99, 85400.4, 0.05);
  cr_assert_float_eq(s.output_mean, 342.6, 0.05);
  round_trip(&t);
  trace_free(&t);
}

/* ------------------------------------------------------------------- fuzz */

static const char *const seeds[] = {
    "# hash_block_tokens=16\narrival_s,prompt_tokens,output_tokens,session_id,hash_ids\n10.25,20,5,a,7|8\n"
    "10.25,16,7,,9\n11.000000001,40,1,b,7|8|10\n12.5,8,3,a,\n",
    "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n2023-11-16 "
    "18:17:04.0319600,3180,8\r\n2023-11-16 18:17:04.0781490,110,27",
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n"
    "45,GPT-4,0,0,0,Conversation log\n118,GPT-4,417,276,693,API log\n",
    "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "19440110.0,aaaa-1,43,GPT-4,906,446,1352,Conversation log\n19440170.0,,3,ChatGPT,12,7,19,API log\n"
    "19440192.5,aaaa-1,8,GPT-4,1779,123,1902,Conversation log\n",
    "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 50, \"hash_ids\": [0, 1]}\n"
    "{\"timestamp\": 3000, \"input_length\": 512, \"x\": {\"y\": [1, \"}\"]}, \"output_length\": 1, \"hash_ids\": [0]}\n",
};

static void check_valid(const trace *t) {
  cr_assert(t->n >= 1);
  cr_assert_eq(t->reqs[0].arrival_ns, 0);
  for (size_t i = 0; i < t->n; i++) {
    const trace_req *q = &t->reqs[i];
    if (i) cr_assert(q->arrival_ns >= t->reqs[i - 1].arrival_ns);
    cr_assert(q->prompt_tokens >= 1 && q->prompt_tokens <= 10000000);
    cr_assert(q->output_tokens >= 1 && q->output_tokens <= 10000000);
    cr_assert(q->session <= t->n_sessions);
    cr_assert((size_t)q->hash_off + q->n_hash <= t->n_hash);
  }
}

Test(trace_fuzz, mutated_inputs_return_ok_or_einput) {
  rng r;
  rng_seed(&r, 2024);
  static const char alphabet[] = "0123456789.,-+eE:| \"{}[]\r\n\t#xT\0\xff";
  size_t cap = 1 << 14, n_ok = 0, n_err = 0;
  char *buf = malloc(cap);
  for (int iter = 0; iter < 4000; iter++) {
    size_t len;
    if (iter % 10 == 9) { /* pure random bytes */
      len = rng_below(&r, 300);
      for (size_t i = 0; i < len; i++)
        buf[i] = rng_below(&r, 2) ? alphabet[rng_below(&r, sizeof alphabet - 1)] : (char)rng_below(&r, 256);
    } else {
      const char *s = seeds[rng_below(&r, SIM_ARRAY_LEN(seeds))];
      len = strlen(s);
      memcpy(buf, s, len);
      int muts = 1 + (int)rng_below(&r, 6);
      for (int m = 0; m < muts; m++) {
        size_t pos = len ? rng_below(&r, len) : 0;
        switch (rng_below(&r, 5)) {
        case 0: /* replace a byte */
          if (len) buf[pos] = alphabet[rng_below(&r, sizeof alphabet - 1)];
          break;
        case 1: /* insert a byte */
          if (len + 1 < cap) {
            memmove(buf + pos + 1, buf + pos, len - pos);
            buf[pos] = rng_below(&r, 4) ? alphabet[rng_below(&r, sizeof alphabet - 1)] : (char)rng_below(&r, 256);
            len++;
          }
          break;
        case 2: { /* delete a range */
          size_t k = (size_t)rng_below(&r, 8); /* not inside SIM_MIN: it evaluates twice */
          if (k > len - pos) k = len - pos;
          memmove(buf + pos, buf + pos + k, len - pos - k);
          len -= k;
          break;
        }
        case 3: /* truncate */
          len = pos;
          break;
        default: { /* duplicate a range */
          size_t k = (size_t)rng_below(&r, 60);
          if (k > len - pos) k = len - pos;
          if (len + k < cap) {
            memmove(buf + pos + k, buf + pos, len - pos);
            len += k;
          }
        }
        }
      }
    }
    for (int f = TRACE_FMT_AUTO; f <= TRACE_FMT_MOONCAKE; f++) {
      char *exact = malloc(len ? len : 1); /* no slack after the input: ASan catches over-reads */
      memcpy(exact, buf, len);
      trace t;
      sim_err e = {0};
      int rc = trace_parse(&t, exact, len, "fuzz.csv", (trace_format)f, &e);
      free(exact);
      cr_assert(rc == SIM_OK || rc == SIM_EINPUT, "rc %d", rc);
      if (rc == SIM_OK) {
        check_valid(&t);
        n_ok++;
      } else {
        cr_assert(strncmp(e.msg, "fuzz.csv:", 9) == 0, "%s", e.msg);
        cr_assert_eq(t.n, 0);
        n_err++;
      }
      trace_free(&t);
    }
  }
  free(buf);
  cr_assert(n_ok > 100 && n_err > 100, "ok %zu, errors %zu: the mutations should hit both", n_ok, n_err);
}
