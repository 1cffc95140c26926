/* test_yamlx.c: the YAML-subset reader (config/yamlx.h): PyYAML's block
 * style as inference-perf writes it (a sequence at its key's indent, `- key:`
 * items continuing below), scalars, nulls and empty collections, the line of
 * every node, and each rejected construct with its line; the typed getters'
 * messages name file, line and path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/yamlx.h"

static yx_doc D;
static sim_err E;

static void parse_ok(const char *text) { cr_assert_eq(yx_parse(&D, text, "c.yaml", &E), SIM_OK, "%s", E.msg); }

static void parse_bad(const char *text, const char *needle) {
  cr_assert_eq(yx_parse(&D, text, "c.yaml", &E), SIM_EINPUT, "accepted: %s", text);
  cr_assert_null(D.root);
  cr_assert(strstr(E.msg, needle), "expected '%s' in: %s", needle, E.msg);
}

static void has(const char *needle) { cr_assert(strstr(E.msg, needle), "expected '%s' in: %s", needle, E.msg); }

/* The shape of an inference-perf config.yaml (abridged). */
static const char *CONFIG =
    "api:\n"                                     /* 1 */
    "  type: completion\n"                       /* 2 */
    "  streaming: true\n"                        /* 3 */
    "  headers: null\n"                          /* 4 */
    "data:\n"                                    /* 5 */
    "  type: shared_prefix\n"                    /* 6 */
    "  path: null\n"                             /* 7 */
    "  shared_prefix:\n"                         /* 8 */
    "    num_groups: 10\n"                       /* 9 */
    "    question_len: 466\n"                    /* 10 */
    "# a comment line\n"                         /* 11 */
    "load:\n"                                    /* 12 */
    "  type: constant\n"                         /* 13 */
    "  interval: 1.0\n"                          /* 14 */
    "  stages:\n"                                /* 15 */
    "  - rate: 5.0\n"                            /* 16 */
    "    duration: 600\n"                        /* 17 */
    "\n"                                         /* 18 */
    "  - rate: 10.0   # faster\n"                /* 19 */
    "    duration: 600\n"                        /* 20 */
    "  sweep: null\n"                            /* 21 */
    "  circuit_breakers: []\n"                   /* 22 */
    "server:\n"                                  /* 23 */
    "  base_url: http://10.128.6.76:8000\n"      /* 24 */
    "  model_name: 'meta-llama/Llama-2-7b-hf'\n" /* 25 */
    "  note: \"a \\\"b\\\": c\"\n"               /* 26 */
    "  empty:\n"                                 /* 27 */
    "  tilde: ~\n"                               /* 28 */
    "  opts: {}\n";                              /* 29 */

Test(yamlx, reads_pyyaml_block_style_with_lines) {
  parse_ok(CONFIG);
  const yx_node *r = D.root, *load = yx_get(r, "load"), *stages = yx_get(load, "stages");
  cr_assert_eq(r->kind, YX_MAP);
  cr_assert_eq(r->n, 4);
  cr_assert_str_eq(yx_get(yx_get(r, "api"), "type")->text, "completion");
  cr_assert_eq(yx_get(r, "data")->line, 5);
  cr_assert_eq(yx_get(yx_get(yx_get(r, "data"), "shared_prefix"), "question_len")->line, 10);
  cr_assert_eq(load->line, 12);
  cr_assert_eq(stages->kind, YX_SEQ, "a sequence at its key's indent is the key's value");
  cr_assert_eq(stages->n, 2);
  const yx_node *s1 = yx_item(stages, 1);
  cr_assert_eq(s1->kind, YX_MAP);
  cr_assert_eq(s1->line, 19);
  cr_assert_str_eq(yx_get(s1, "rate")->text, "10.0", "the trailing comment is not part of the value");
  cr_assert_eq(yx_get(s1, "duration")->line, 20);
  cr_assert_null(yx_item(stages, 2));
  cr_assert(yx_is_null(yx_get(load, "sweep")));
  cr_assert_eq(yx_get(load, "sweep")->line, 21);
  const yx_node *cb = yx_get(load, "circuit_breakers");
  cr_assert_eq(cb->kind, YX_SEQ);
  cr_assert_eq(cb->n, 0);
  const yx_node *srv = yx_get(r, "server");
  cr_assert_str_eq(yx_get(srv, "base_url")->text, "http://10.128.6.76:8000");
  cr_assert_str_eq(yx_get(srv, "model_name")->text, "meta-llama/Llama-2-7b-hf");
  cr_assert(yx_get(srv, "model_name")->quoted);
  cr_assert_str_eq(yx_get(srv, "note")->text, "a \"b\": c");
  cr_assert(yx_is_null(yx_get(srv, "empty")));
  cr_assert(yx_is_null(yx_get(srv, "tilde")));
  cr_assert_eq(yx_get(srv, "opts")->kind, YX_MAP);
  cr_assert_null(yx_get(srv, "absent"));
  double rate;
  uint32_t dur;
  bool st;
  char name[64];
  cr_assert_eq(yx_need_num(&D, s1, "load.stages[1]", "rate", 0, 1e6, &rate), 0, "%s", E.msg);
  cr_assert_float_eq(rate, 10.0, 1e-12);
  cr_assert_eq(yx_need_u32(&D, s1, "load.stages[1]", "duration", 1, 1000000, &dur), 0, "%s", E.msg);
  cr_assert_eq(dur, 600);
  cr_assert_eq(yx_need_bool(&D, yx_get(r, "api"), "api", "streaming", &st), 0, "%s", E.msg);
  cr_assert(st);
  cr_assert_eq(yx_need_str(&D, srv, "server", "model_name", name, sizeof name), 0, "%s", E.msg);
  cr_assert_str_eq(name, "meta-llama/Llama-2-7b-hf");
  yx_free(&D);
  cr_assert_null(D.root);
}

Test(yamlx, sequences_of_scalars_nested_blocks_and_quotes) {
  parse_ok("---\n"
           "a:\n"
           "  - 1\n"
           "  - 'it''s'\n"
           "  -\n"
           "    x: 2\n"
           "  - - 3\n"
           "    - 4\n"
           "  - \"5\"\n"
           "'quoted key': v\n");
  const yx_node *a = yx_get(D.root, "a");
  cr_assert_eq(a->kind, YX_SEQ);
  cr_assert_eq(a->n, 5);
  cr_assert_str_eq(yx_item(a, 1)->text, "it's");
  cr_assert_eq(yx_item(a, 2)->kind, YX_MAP);
  cr_assert_str_eq(yx_get(yx_item(a, 2), "x")->text, "2");
  const yx_node *inner = yx_item(a, 3);
  cr_assert_eq(inner->kind, YX_SEQ);
  cr_assert_eq(inner->n, 2);
  cr_assert_str_eq(yx_item(inner, 1)->text, "4");
  cr_assert(yx_item(a, 4)->quoted);
  cr_assert_str_eq(yx_get(D.root, "quoted key")->text, "v");
  yx_free(&D);
  parse_ok("");
  cr_assert(yx_is_null(D.root), "an empty document is null");
  yx_free(&D);
  parse_ok("# only a comment\n\n");
  cr_assert(yx_is_null(D.root));
  yx_free(&D);
}

Test(yamlx, rejects_what_it_does_not_read_with_the_line) {
  parse_bad("a: 1\n\tb: 2\n", "c.yaml:2: a tab");
  parse_bad("a:\n  b: 1\n   c: 2\n", "c.yaml:3: unexpected indentation");
  parse_bad("a:\n    b: 1\n  c: 2\n", "c.yaml:3: unexpected indentation");
  parse_bad("a: 1\nb: 2\na: 3\n", "c.yaml:3: a: given twice (first on line 1)");
  parse_bad("a: &x 1\n", "c.yaml:1: '&'");
  parse_bad("a: *x\n", "c.yaml:1: '*'");
  parse_bad("a: !!str 1\n", "c.yaml:1: '!'");
  parse_bad("a: |\n  text\n", "c.yaml:1: '|'");
  parse_bad("a: [1, 2]\n", "c.yaml:1: a flow collection ('[1, 2]')");
  parse_bad("a: {b: 1}\n", "c.yaml:1: a flow collection");
  parse_bad("a: b: c\n", "c.yaml:1: ': ' inside a plain value");
  parse_bad("a: 1\n---\nb: 2\n", "c.yaml:2: a second document");
  parse_bad("a: 'open\n", "c.yaml:1: a quoted string that does not close");
  parse_bad("a: 'x' y\n", "c.yaml:1: 'y' after a quoted string");
  parse_bad("a: \"\\q\"\n", "c.yaml:1: escape '\\q'");
  parse_bad("a: 1\n- 2\n", "c.yaml:2: a sequence item where a mapping key was expected");
  parse_bad("a: 1\njust text\n", "c.yaml:2: expected 'key: value', got 'just text'");
  parse_bad("a: - 1\n", "c.yaml:1: a sequence cannot start");
  parse_bad("a: 1\n  continued\n", "c.yaml:2: unexpected indentation");
  parse_bad("a: 1\n...\n", "c.yaml:2: a document end marker");
  char deep[8192] = "";
  for (int k = 0; k < 70; k++) {
    char line[200];
    snprintf(line, sizeof line, "%*sk%d:\n", 2 * k, "", k);
    strcat(deep, line);
  }
  parse_bad(deep, "nested deeper than 64 levels");
}

Test(yamlx, getters_name_file_line_and_path) {
  parse_ok("load:\n"
           "  stages:\n"
           "  - rate: fast\n"
           "    duration: 2.5\n"
           "  - rate: '5'\n"
           "    duration: -1\n"
           "  interval: null\n"
           "  flag: yes\n");
  const yx_node *load = yx_get(D.root, "load"), *st;
  cr_assert_eq(yx_need(&D, load, "load", "stages", YX_SEQ, &st), 0);
  double x;
  uint32_t u;
  bool b;
  char s[8];
  cr_assert_eq(yx_need_num(&D, yx_item(st, 0), "load.stages[0]", "rate", 0, 1e6, &x), SIM_EINPUT);
  has("c.yaml:3: load.stages[0].rate: expected a number, got 'fast'");
  cr_assert_eq(yx_need_u32(&D, yx_item(st, 0), "load.stages[0]", "duration", 1, 100, &u), SIM_EINPUT);
  has("c.yaml:4: load.stages[0].duration: expected an integer, got 2.5");
  cr_assert_eq(yx_need_num(&D, yx_item(st, 1), "load.stages[1]", "rate", 0, 1e6, &x), SIM_EINPUT);
  has("c.yaml:5: load.stages[1].rate: expected a number, got the string '5'");
  cr_assert_eq(yx_need_u32(&D, yx_item(st, 1), "load.stages[1]", "duration", 1, 100, &u), SIM_EINPUT);
  has("c.yaml:6: load.stages[1].duration: must be in [1, 100], got -1");
  cr_assert_eq(yx_need_num(&D, load, "load", "interval", 0, 10, &x), SIM_EINPUT);
  has("c.yaml:7: load.interval: expected a number, got null");
  cr_assert_eq(yx_need_bool(&D, load, "load", "flag", &b), SIM_EINPUT);
  has("c.yaml:8: load.flag: expected true or false, got 'yes'");
  cr_assert_eq(yx_need(&D, load, "load", "sweep", YX_MAP, &st), SIM_EINPUT);
  has("c.yaml:1: load.sweep: missing");
  cr_assert_eq(yx_need(&D, D.root, NULL, "load", YX_SEQ, &st), SIM_EINPUT);
  has("c.yaml:1: load: expected a sequence, got a mapping");
  cr_assert_eq(yx_need_str(&D, load, "load", "interval", s, sizeof s), SIM_EINPUT);
  has("load.interval: expected a non-empty string, got null");
  cr_assert_eq(yx_need_str(&D, load, "load", "flag", s, 3), SIM_EINPUT);
  has("load.flag: longer than 2 characters");
  cr_assert_eq(yx_need_num(&D, NULL, "data", "x", 0, 1, &x), SIM_EINPUT);
  has("c.yaml: data.x: missing");
  yx_free(&D);
}
