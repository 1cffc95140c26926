/* test_instance.c: cloud instance files (every bundled one loads; errors name
 * file, line and key) and packing replicas onto instances (several per
 * instance when they fit; MIG slices fill every GPU with their profile). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "config/instance.h"
#include "testutil.h"

static void has(const sim_err *e, const char *needle) {
  cr_assert(strstr(e->msg, needle) != NULL, "expected '%s' in: %s", needle, e->msg);
}

Test(instance, bundled_catalog_loads_with_sources) {
  char names[2048];
  cfg_list(CFG_INSTANCE, names, sizeof names);
  cr_assert(strstr(names, "aws-p5.48xlarge") && strstr(names, "generic-8x-h200"), "%s", names);
  char *save = NULL;
  int n = 0;
  for (char *t = strtok_r(names, ", ", &save); t; t = strtok_r(NULL, ", ", &save), n++) {
    instance_cfg in;
    sim_err e = {0};
    cr_assert_eq(cfg_instance_load(&in, t, &e), SIM_OK, "%s: %s", t, e.msg);
    cr_assert_str_eq(in.name, t, "the file is named after its instance");
    cr_assert_gt(in.price_per_hour, 0);
    cr_assert_gt(strlen(in.price_source), 20, "%s: a price names where it comes from", t);
  }
  cr_assert_geq(n, 4);
}

static const char *inst_json(const char *extra_or_replace) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "{\n  \"name\": \"x\",\n  \"provider\": \"p\",\n  \"gpu\": \"h200\",\n  \"gpu_count\": 8,\n"
           "  \"interconnect\": \"nvlink\",\n  \"price_usd_per_hour\": 20%s\n}\n",
           extra_or_replace);
  return buf;
}

Test(instance, file_errors_name_the_key) {
  instance_cfg in;
  sim_err e = {0};
  cr_assert_eq(cfg_instance_parse(&in, inst_json(",\n  \"price_source\": \"s\""), "i.json", &e), SIM_OK, "%s", e.msg);
  cr_assert_eq(in.gpu_count, 8);
  cr_assert_eq(cfg_instance_parse(&in, inst_json(""), "i.json", &e), SIM_EINPUT);
  has(&e, "i.json: price_source: missing required key");
  cr_assert_eq(cfg_instance_parse(&in, inst_json(",\n  \"price_source\": \"s\", \"cost\": 1"), "i.json", &e),
               SIM_EINPUT);
  has(&e, "i.json:8: cost: unknown key");
  const char *bad_price = "{\"name\": \"x\", \"provider\": \"p\", \"gpu\": \"h200\", \"gpu_count\": 8, \"interconnect\": "
                          "\"nvlink\", \"price_usd_per_hour\": 0, \"price_source\": \"s\"}";
  cr_assert_eq(cfg_instance_parse(&in, bad_price, "i.json", &e), SIM_EINPUT);
  has(&e, "price_usd_per_hour");
  const char *slice = "{\"name\": \"x\", \"provider\": \"p\", \"gpu\": \"h200:1g.18gb\", \"gpu_count\": 8, "
                      "\"interconnect\": \"nvlink\", \"price_usd_per_hour\": 9, \"price_source\": \"s\"}";
  cr_assert_eq(cfg_instance_parse(&in, slice, "i.json", &e), SIM_EINPUT);
  has(&e, "an instance holds whole GPUs");
  const char *link = "{\"name\": \"x\", \"provider\": \"p\", \"gpu\": \"h200\", \"gpu_count\": 8, "
                     "\"interconnect\": \"ib\", \"price_usd_per_hour\": 9, \"price_source\": \"s\"}";
  cr_assert_eq(cfg_instance_parse(&in, link, "i.json", &e), SIM_EINPUT);
  has(&e, "interconnect: expected \"nvlink\" or \"pcie\"");
  cr_assert_eq(cfg_instance_load(&in, "no-such-instance", &e), SIM_EINPUT);
  has(&e, "unknown instance 'no-such-instance'");
  /* a user's file naming a GPU servesim does not know: the file and the key */
  const char *path = tu_tmpfile(".json", "{\"name\": \"x\", \"provider\": \"p\", \"gpu\": \"tpu-v9\", \"gpu_count\": 8, "
                                         "\"interconnect\": \"nvlink\", \"price_usd_per_hour\": 9, \"price_source\": \"s\"}");
  cr_assert_eq(cfg_instance_load(&in, path, &e), SIM_EINPUT);
  has(&e, path);
  has(&e, ": gpu: unknown gpu 'tpu-v9'");
}

Test(instance, packing) {
  instance_cfg eight = {.name = "eight", .gpu = "h200", .gpu_count = 8, .price_per_hour = 28},
               one = {.name = "one", .gpu = "h200", .gpu_count = 1, .price_per_hour = 3.5},
               h100 = {.name = "h100x8", .gpu = "h100-sxm", .gpu_count = 8, .price_per_hour = 24};
  gpu_cfg g, slice;
  sim_err e = {0};
  cr_assert_eq(cfg_gpu_load(&g, "h200", &e), SIM_OK);
  char why[256];
  uint32_t n;
  cr_assert_eq(instance_pack(&eight, &g, 4, 5, &n, why, sizeof why), 2, "two TP4 replicas per 8 GPUs");
  cr_assert_eq(n, 3, "5 replicas: 3 instances");
  cr_assert_eq(instance_pack(&eight, &g, 8, 2, &n, why, sizeof why), 1);
  cr_assert_eq(n, 2);
  cr_assert_eq(instance_pack(&eight, &g, 3, 4, &n, why, sizeof why), 2, "TP3 leaves 2 GPUs idle");
  cr_assert_eq(n, 2);
  cr_assert_eq(instance_pack(&one, &g, 2, 1, &n, why, sizeof why), 0);
  cr_assert(strstr(why, "one has 1 GPUs, a replica needs 2"), "%s", why);
  cr_assert_eq(instance_pack(&h100, &g, 1, 1, &n, why, sizeof why), 0);
  cr_assert(strstr(why, "h100x8 holds h100-sxm, not h200"), "%s", why);
  cr_assert_eq(cfg_gpu_load(&slice, "h200:1g.18gb", &e), SIM_OK);
  cr_assert_eq(instance_pack(&eight, &slice, 1, 57, &n, why, sizeof why), 56, "8 GPUs x 7 slices");
  cr_assert_eq(n, 2);
  cr_assert_eq(cfg_gpu_load(&slice, "h200:3g.71gb", &e), SIM_OK);
  cr_assert_eq(instance_pack(&one, &slice, 1, 3, &n, why, sizeof why), 2);
  cr_assert_eq(n, 2);
}
