/* test_jsonw.c: the JSON writer (core/jsonw.h): layout of objects, plain and
 * flow arrays (values per line, nested flow rows), numbers with significant
 * digits (integer form, %g form, rounding, null for non-finite), escaping,
 * and that what it writes parses back. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

/* Runs fn on a writer into memory and returns the text (caller frees). */
static char *write_with(void (*fn)(jw *)) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  jw j;
  jw_begin(&j, f);
  fn(&j);
  sim_err err = {0};
  cr_assert_eq(jw_finish(&j, &err), SIM_OK);
  fclose(f);
  return text;
}

static void doc(jw *j) {
  jw_str(j, "s", "a\"b\\c\nd");
  jw_arr_flow(j, "flat", 3);
  for (int i = 1; i <= 7; i++) jw_u64(j, NULL, (uint64_t)i);
  jw_end(j);
  jw_arr(j, "rows");
  for (int r = 0; r < 2; r++) {
    jw_arr_flow(j, NULL, 0);
    jw_sig(j, NULL, r ? NAN : 1234.56, 4);
    jw_sig(j, NULL, 0.000123456, 3);
    jw_end(j);
  }
  jw_end(j);
  jw_arr_flow(j, "empty", 0);
  jw_end(j);
}

Test(jsonw, flow_arrays_and_layout) {
  char *t = write_with(doc);
  const char *want = "{\n"
                     "  \"s\": \"a\\\"b\\\\c\\nd\",\n"
                     "  \"flat\": [1, 2, 3,\n"
                     "    4, 5, 6,\n"
                     "    7],\n"
                     "  \"rows\": [\n"
                     "    [1235, 0.000123],\n"
                     "    [null, 0.000123]\n"
                     "  ],\n"
                     "  \"empty\": []\n"
                     "}\n";
  cr_assert_str_eq(t, want);
  cJSON *j = cJSON_Parse(t);
  cr_assert_not_null(j, "the output parses");
  cJSON_Delete(j);
  free(t);
}

Test(jsonw, significant_digits) {
  static const struct {
    double v;
    int d;
    const char *want;
  } c[] = {{2452.3, 4, "2452"},     {123456, 4, "123500"},  {3.3553e8, 4, "335500000"}, {812.34, 4, "812.3"},
           {0.5, 4, "0.5"},         {-0.0, 4, "0"},         {1e-7, 4, "1e-07"},         {1.5e20, 4, "1.5e+20"},
           {99999.5, 4, "100000"},  {7, 17, "7"},           {INFINITY, 4, "null"},      {-1234.5, 3, "-1230"}};
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char buf[64];
    jw_format_sig(buf, sizeof buf, c[i].v, c[i].d);
    cr_assert_str_eq(buf, c[i].want, "%g with %d digits", c[i].v, c[i].d);
  }
}
