/* test_jsonx.c: the strict JSON layer (config/jsonx.h): parse errors with
 * line and column, exact lines of keys and list elements (nested, repeated,
 * inside tricky strings), spans, key checks, typed getters and their range
 * messages; and the scenario and grid readers giving those lines. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "config/jsonx.h"
#include "plan/grid.h"
#include "runner/scenario.h"

static jx J;
static sim_err E;

static void parse_ok(const char *text) {
  cr_assert_eq(jx_parse(&J, text, "t.json", &E), SIM_OK, "%s", E.msg);
}

static void has(const char *needle) {
  cr_assert(strstr(E.msg, needle) != NULL, "expected '%s' in: %s", needle, E.msg);
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

Test(jsonx, parse_errors_give_line_and_column) {
  cr_assert_eq(jx_parse(&J, "{\n  \"a\": 1,\n  \"b\": ,\n}", "t.json", &E), SIM_EINPUT);
  has("t.json:3:8: invalid JSON");
  cr_assert_null(J.root);
  cr_assert_eq(jx_parse(&J, "[1, 2]", "t.json", &E), SIM_EINPUT);
  has("t.json: (top level): expected a JSON object, got an array");
  cr_assert_eq(jx_parse(&J, "{\"a\": 1}\nextra", "t.json", &E), SIM_EINPUT);
  has("t.json:2:1: invalid JSON");
  cr_assert_eq(jx_parse(&J, "", "t.json", &E), SIM_EINPUT);
  has("invalid JSON");
}

Test(jsonx, lines_are_exact) {
  const char *text =
      "{\"s\": \"a \\\"b\\\": {[\",\n"      /* 1: a string holding quotes, a colon and brackets */
      " \"o\": {\"x\": 1,\n"                /* 2 */
      "       \"o\": {\"x\": 2}},\n"        /* 3: the same key names one level down */
      " \"x\": [10,\n"                      /* 4 */
      "       20,\n"                        /* 5 */
      "       {\"y\": null}],\n"            /* 6 */
      " \"m\": \"line\\nbreak\",\n"         /* 7 */
      " \"x\": 3}";                         /* 8: a repeated key */
  parse_ok(text);
  const cJSON *r = J.root, *o = get(r, "o"), *oo = get(o, "o"), *x = get(r, "x");
  cr_assert_eq(jx_line(&J, get(r, "s")), 1);
  cr_assert_eq(jx_line(&J, o), 2);
  cr_assert_eq(jx_line(&J, get(o, "x")), 2);
  cr_assert_eq(jx_line(&J, oo), 3);
  cr_assert_eq(jx_line(&J, get(oo, "x")), 3);
  cr_assert_eq(jx_line(&J, x), 4);
  cr_assert_eq(jx_line(&J, cJSON_GetArrayItem(x, 1)), 5, "an array element: its own line");
  cr_assert_eq(jx_line(&J, get(cJSON_GetArrayItem(x, 2), "y")), 6);
  cr_assert_eq(jx_line(&J, get(r, "m")), 7);
  const cJSON *last = r->child;
  while (last->next) last = last->next;
  cr_assert_eq(jx_line(&J, last), 8, "the second 'x', not the first");
  cr_assert_eq(jx_line(&J, NULL), 0);

  size_t b, e;
  cr_assert(jx_span(&J, oo, &b, &e));
  cr_assert_eq(e - b, strlen("{\"x\": 2}"));
  cr_assert(!strncmp(text + b, "{\"x\": 2}", e - b));
  cJSON *foreign = cJSON_CreateNumber(1);
  cr_assert_not(jx_span(&J, foreign, &b, &e));
  cr_assert_eq(jx_line(&J, foreign), 0);
  cJSON_Delete(foreign);

  char where[128];
  jx_where(&J, get(oo, "x"), "o.o.x", where, sizeof where);
  cr_assert_str_eq(where, "t.json:3: o.o.x");
  jx_free(&J);
}

Test(jsonx, keys_unknown_and_repeated) {
  static const char *const known[] = {"a", "b", "c", NULL};
  const cJSON *found[3];
  parse_ok("{\"b\": 1,\n \"a\": 2}");
  cr_assert_eq(jx_keys(&J, J.root, NULL, known, found), SIM_OK);
  cr_assert_null(found[2]);
  cr_assert_eq(found[0]->valuedouble, 2);
  jx_free(&J);

  parse_ok("{\"a\": 1,\n \"d\": {\"e\": 2}}");
  cr_assert_eq(jx_keys(&J, J.root, NULL, known, NULL), SIM_EINPUT);
  has("t.json:2: d: unknown key (known keys: a, b, c)");
  cr_assert_eq(jx_keys(&J, get(J.root, "d"), "d", known, NULL), SIM_EINPUT);
  has("t.json:2: d.e: unknown key");
  jx_free(&J);

  parse_ok("{\"a\": 1,\n\n \"a\": 2}");
  cr_assert_eq(jx_keys(&J, J.root, "top", known, NULL), SIM_EINPUT);
  has("t.json:3: top.a: given twice");
  jx_free(&J);
}

Test(jsonx, getters_types_and_ranges) {
  parse_ok("{\"s\": \"abc\", \"e\": \"\", \"n\": 2.5, \"i\": 7, \"neg\": -1, \"big\": 5e10, \"t\": true,\n"
           " \"inf\": \"inf\", \"o\": {}, \"a\": [], \"z\": 0}");
  const cJSON *r = J.root;
  char buf[4] = "old";
  cr_assert_eq(jx_str(&J, r, NULL, "absent", buf, sizeof buf), SIM_OK);
  cr_assert_str_eq(buf, "old", "an absent key leaves the default");
  cr_assert_eq(jx_str(&J, r, NULL, "s", buf, sizeof buf), SIM_OK);
  cr_assert_str_eq(buf, "abc");
  cr_assert_eq(jx_str(&J, r, "p", "e", buf, sizeof buf), SIM_EINPUT);
  has("t.json:1: p.e: must not be empty");
  char tiny[3];
  cr_assert_eq(jx_str(&J, r, NULL, "s", tiny, sizeof tiny), SIM_EINPUT);
  has("s: longer than 2 characters");
  cr_assert_eq(jx_str(&J, r, NULL, "n", buf, sizeof buf), SIM_EINPUT);
  has("n: expected a string, got a number");

  double x = -7;
  cr_assert_eq(jx_num(&J, r, NULL, "n", &x, 0, 10, 0), SIM_OK);
  cr_assert_float_eq(x, 2.5, 0);
  cr_assert_eq(jx_num(&J, r, NULL, "n", &x, 3, 10, 0), SIM_EINPUT);
  has("n: must be in [3, 10], got 2.5");
  cr_assert_eq(jx_num(&J, r, NULL, "z", &x, 0, 1, JX_GT), SIM_EINPUT);
  has("z: must be in (0, 1], got 0");
  cr_assert_eq(jx_num(&J, r, NULL, "z", &x, 0, INFINITY, JX_GT), SIM_EINPUT);
  has("z: must be > 0, got 0");
  cr_assert_eq(jx_num(&J, r, NULL, "neg", &x, 0, INFINITY, 0), SIM_EINPUT);
  has("neg: must be >= 0, got -1");
  cr_assert_eq(jx_num(&J, r, NULL, "inf", &x, 0, 10, 0), SIM_EINPUT);
  has("inf: expected a number, got a string");
  cr_assert_eq(jx_num(&J, r, NULL, "inf", &x, 0, 10, JX_INF), SIM_OK);
  cr_assert(isinf(x) && x > 0);
  cr_assert_eq(jx_num(&J, r, NULL, "t", &x, 0, 10, JX_INF), SIM_EINPUT);
  has("t: expected a number or \"inf\", got a boolean");

  uint32_t u = 99;
  cr_assert_eq(jx_u32(&J, r, NULL, "i", &u, 1, 64, 0), SIM_OK);
  cr_assert_eq(u, 7);
  cr_assert_eq(jx_u32(&J, r, NULL, "n", &u, 0, 64, 0), SIM_EINPUT);
  has("n: expected an integer, got 2.5");
  cr_assert_eq(jx_u32(&J, r, NULL, "neg", &u, -INFINITY, INFINITY, 0), SIM_EINPUT);
  has("neg: must be in [0, 4294967295], got -1");
  cr_assert_eq(jx_u32(&J, r, NULL, "big", &u, 0, INFINITY, 0), SIM_EINPUT);
  has("big: must be in [0, 4294967295]");
  cr_assert_eq(u, 7, "a failed read leaves the value");

  bool b = false;
  cr_assert_eq(jx_bool(&J, r, NULL, "t", &b), SIM_OK);
  cr_assert(b);
  cr_assert_eq(jx_bool(&J, r, NULL, "i", &b), SIM_EINPUT);
  has("i: expected a boolean (true or false), got a number");

  const cJSON *v = r;
  cr_assert_eq(jx_obj(&J, r, NULL, "absent", &v), SIM_OK);
  cr_assert_null(v);
  cr_assert_eq(jx_obj(&J, r, NULL, "o", &v), SIM_OK);
  cr_assert(cJSON_IsObject(v));
  cr_assert_eq(jx_obj(&J, r, NULL, "a", &v), SIM_EINPUT);
  has("t.json:2: a: expected an object, got an array");
  cr_assert_eq(jx_arr(&J, r, NULL, "a", &v), SIM_OK);
  cr_assert_eq(jx_arr(&J, r, NULL, "o", &v), SIM_EINPUT);
  has("o: expected an array, got an object");
  jx_free(&J);
}

Test(jsonx, scenario_errors_name_the_line) {
  scenario s;
  scenario_init(&s);
  const char *text = "{\"model\": \"llama-3.1-8b\",\n"
                     " \"workload\": {\"num_prompts\": 10,\n"
                     "   \"replica_failures\": [{\"replica\": 0, \"at_s\": 1},\n"
                     "                        {\"replica\": 9999, \"at_s\": 1}]}}";
  cr_assert_eq(scenario_parse(&s, text, "s.json", &E), SIM_EINPUT);
  has("s.json:4: workload.replica_failures[1].replica: must be in [0, 4095], got 9999");
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"model\": \"a\",\n \"model\": \"b\"}", "s.json", &E), SIM_EINPUT);
  has("s.json:2: model: given twice");
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"deployment\": {\"tensor_parallel_size\": 4,\n \"allreduce\": \"fast\"}}", "s.json", &E),
               SIM_EINPUT);
  has("s.json:2: deployment.allreduce: unknown value 'fast' (auto, table, link)");
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"deployment\": {\"allreduce\": \"link\"}}", "s.json", &E), SIM_OK, "%s", E.msg);
  cr_assert_eq(s.deploy.allreduce, AR_LINK);
  scenario_init(&s);
  cr_assert_eq(s.deploy.allreduce, AR_AUTO, "auto is the default");
  cr_assert_eq(scenario_parse(&s, "{\"deployment\": {\"allreduce\": \"table\"}}", "s.json", &E), SIM_OK, "%s", E.msg);
  cr_assert_eq(s.deploy.allreduce, AR_TABLE);
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"workload\": {\"duration_s\": 3600, \"repeat_shares_prefixes\": true}}", "s.json",
                              &E),
               SIM_OK, "%s", E.msg);
  cr_assert_float_eq(s.duration_s, 3600, 0);
  cr_assert(s.repeat_shares_prefixes);
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, "{\"workload\": {\"duration_s\": 0}}", "s.json", &E), SIM_EINPUT);
}

Test(jsonx, grid_inline_scenario_errors_keep_the_file_lines) {
  grid_spec g;
  grid_init(&g);
  const char *text = "{\"grid\": {\"tensor_parallel_size\": [1, 2]},\n"
                     " \"scenario\": {\n"
                     "   \"model\": \"llama-3.1-8b\",\n"
                     "   \"deployment\": {\"replicas\": 0}}}";
  cr_assert_eq(grid_parse(&g, text, "g.json", &E), SIM_OK, "%s", E.msg);
  cr_assert_not_null(g.scenario_json);
  scenario s;
  scenario_init(&s);
  cr_assert_eq(scenario_parse(&s, g.scenario_json, g.file, &E), SIM_EINPUT);
  has("g.json:4: deployment.replicas: must be in [1, 100000], got 0");
  grid_free(&g);

  grid_init(&g);
  cr_assert_eq(grid_parse(&g, "{\"configs\": [\n {\"tensor_parallel_size\": 2},\n {\"tensor_parallel_size\": 0}]}",
                          "g.json", &E),
               SIM_EINPUT);
  has("g.json:3: configs[1].tensor_parallel_size");
  grid_free(&g);
}
