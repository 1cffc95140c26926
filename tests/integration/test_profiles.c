/* test_profiles.c: measured profiles end to end:
 *  - `servesim calibrate --from-kernel-db` on a tiny fixture database writes a
 *    profile that loads, byte-identical when run twice; refuses to overwrite
 *    without --force; lists versions; names what is missing;
 *  - with ../shared/kernel-db (skipped when absent): bundled profiles equal
 *    what the importer makes from it, byte for byte;
 *  - `calibrate --loo` on a bundled profile: median error <= 5% per family;
 *  - --profile auto (runner/profsel.h): by file name, this GPU and engine at
 *    the nearest version, else the same engine's profile of the GPU with the
 *    nearest bandwidth, scaled; the source line; the process-wide cache;
 *  - sliding-window tables imported with a profile serve a model of their
 *    window and no other. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "config/cfg.h"
#include "hw/prof.h"
#include "runner/profsel.h"
#include "testutil.h"

static char out_buf[1 << 16], err_buf[1 << 16];

static int cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cli(const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return tu_run_cli(args, out_buf, sizeof out_buf, err_buf, sizeof err_buf);
}

Test(profiles, import_from_a_fixture_database) {
  const char *root = tu_tmpdir();
  cr_assert(root && tu_kdb_fixture(root));
  char a[512], b[512];
  snprintf(a, sizeof a, "%s/a.json", root);
  snprintf(b, sizeof b, "%s/b.json", root);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --engine-version 0.14.0 --out %s", root,
                   a),
               0, "%s", err_buf);
  cr_assert(strstr(out_buf, "wrote") && strstr(out_buf, "attn_context") && strstr(out_buf, "median"), "%s", out_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --engine-version 0.14.0 --out %s", root,
                   b),
               0, "%s", err_buf);
  char *x = tu_slurp(a, NULL), *y = tu_slurp(b, NULL);
  cr_assert(x && y && !strcmp(x, y), "two runs write the same bytes");
  cr_assert(strstr(x, "\"attribution\"") && strstr(x, "Apache-2.0"));
  free(x), free(y);
  prof *p;
  sim_err err = {0};
  cr_assert_eq(prof_load(&p, a, &err), SIM_OK, "%s", err.msg);
  cr_assert_str_eq(prof_gpu_name(p), "h100-sxm");
  prof_free(p);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --out %s", root, a), 2);
  cr_assert(strstr(err_buf, "exists") && strstr(err_buf, "--force"), "%s", err_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --out %s --force", root, a), 0, "%s",
               err_buf);
  cr_assert(strstr(out_buf, "vllm 0.24.0"), "the newest version by default: %s", out_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --list-versions", root), 0);
  cr_assert_str_eq(out_buf, "0.14.0\n0.24.0\n");
  cr_assert_eq(cli("calibrate --from-kernel-db %s --engine vllm --out %s --force", root, a), 2);
  cr_assert(strstr(err_buf, "--gpu"), "%s", err_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu l40s --engine vllm --out %s --force", root, a), 2);
  cr_assert(strstr(err_buf, "no directory for gpu l40s"), "%s", err_buf);
  /* --gemm-m-step: a note in the profile; refused without the database and below 2 */
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --gemm-m-step 16 --out %s --force", root,
                   b),
               0, "%s", err_buf);
  y = tu_slurp(b, NULL);
  cr_assert(y && strstr(y, "--gemm-m-step 16"), "the profile's notes say what was left out");
  free(y);
  cr_assert_eq(cli("calibrate --gemm-m-step 16 --model llama-3.1-70b --out %s --force", b), 2);
  cr_assert(strstr(err_buf, "--gemm-m-step") && strstr(err_buf, "--from-kernel-db"), "%s", err_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --gemm-m-step 1 --out %s --force", root,
                   b),
               2);
  cr_assert(strstr(err_buf, "--gemm-m-step 1: expected 2..65536"), "%s", err_buf);
  /* --other-device: refused without the database; an engine the database does not have is named */
  cr_assert_eq(cli("calibrate --other-device 'NVIDIA GB300' --model llama-3.1-70b --out %s --force", b), 2);
  cr_assert(strstr(err_buf, "--other-device") && strstr(err_buf, "--from-kernel-db"), "%s", err_buf);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine tgi --out %s --force", root, b), 2);
  cr_assert(strstr(err_buf, "engine 'tgi'") && strstr(err_buf, "vllm, trtllm and sglang"), "%s", err_buf);
}

/* Imports (gpu, engine, version) from the shared database (with --other-device other unless NULL, as
 * scripts/gen_profiles.sh does) and compares with the bundled file. */
static void same_as_bundled_other(const char *db, const char *gpu, const char *engine, const char *version,
                                  const char *other) {
  const char *dir = tu_tmpdir();
  char out[512], moe[512], bundled[512], bundled_moe[512];
  snprintf(out, sizeof out, "%s/p.json", dir);
  snprintf(moe, sizeof moe, "%s/p.moe.json", dir);
  snprintf(bundled, sizeof bundled, "configs/profiles/%s_%s-%s.json", gpu, engine, version);
  snprintf(bundled_moe, sizeof bundled_moe, "configs/profiles/%s_%s-%s.moe.json", gpu, engine, version);
  char flag[128] = "";
  if (other) snprintf(flag, sizeof flag, "--other-device '%s'", other);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu %s --engine %s --engine-version %s %s --out %s --moe-out %s", db,
                   gpu, engine, version, flag, out, moe),
               0, "%s", err_buf);
  const char *mine[2] = {out, moe}, *theirs[2] = {bundled, bundled_moe};
  for (int i = 0; i < 2; i++) {
    size_t la, lb;
    char *a = tu_slurp(mine[i], &la), *b = tu_slurp(tu_src(theirs[i]), &lb);
    cr_assert(a && b, "%s is not bundled", theirs[i]);
    cr_assert(la == lb && !memcmp(a, b, la), "%s differs from the importer's output: run scripts/gen_profiles.sh",
              theirs[i]);
    free(a), free(b);
  }
}

static void same_as_bundled(const char *db, const char *gpu, const char *engine, const char *version) {
  same_as_bundled_other(db, gpu, engine, version, NULL);
}

Test(profiles, bundled_profiles_are_what_the_importer_makes, .timeout = 300) {
  const char *db = tu_shared("kernel-db");
  if (!db) cr_skip_test("../shared/kernel-db is absent");
  char root[4096];
  snprintf(root, sizeof root, "%s", db);
  same_as_bundled(root, "h100-sxm", "vllm", "0.14.0");
  same_as_bundled(root, "a100-sxm-80gb", "trtllm", "1.0.0");
  same_as_bundled(root, "gb300", "trtllm", "1.3.0rc20"); /* a GPU the round-3 database added */
}

/* SGLang's profiles: the one whose all-reduce is TensorRT-LLM's stand-in, and B300's, whose GEMM and attention
 * tables are GB300's copies (both said in the source line) */
Test(profiles, bundled_sglang_profiles_are_what_the_importer_makes, .timeout = 300) {
  const char *db = tu_shared("kernel-db");
  if (!db) cr_skip_test("../shared/kernel-db is absent");
  char root[4096];
  snprintf(root, sizeof root, "%s", db);
  same_as_bundled(root, "h200", "sglang", "0.5.6.post2");
  same_as_bundled_other(root, "b300", "sglang", "0.5.14", "NVIDIA GB300");
  prof *p;
  sim_err err = {0};
  cr_assert_eq(prof_load(&p, tu_src("configs/profiles/b300_sglang-0.5.14.json"), &err), SIM_OK, "%s", err.msg);
  cr_assert(strstr(prof_origin(p), "gemm_perf, generation_attention_perf, context_attention_perf measured on NVIDIA "
                                   "GB300"),
            "%s", prof_origin(p));
  prof_free(p);
}

Test(profiles, loo_of_a_bundled_profile_meets_the_target) {
  cr_assert_eq(cli("calibrate --loo configs/profiles/h100-sxm_vllm-0.14.0.json"), 0, "%s", err_buf);
  static const char *const families[] = {"gemm_grid", "attn_decode", "attn_context", "allreduce"};
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    const char *line = strstr(out_buf, families[i]);
    cr_assert(line, "no %s line: %s", families[i], out_buf);
    int tables;
    unsigned points;
    double median, p90, max;
    cr_assert_eq(sscanf(line + strlen(families[i]), "%d %u %lf%% %lf%% %lf%%", &tables, &points, &median, &p90, &max),
                 5, "%s", line);
    cr_assert(points > 100 && median <= 5.0 && p90 >= median && max >= p90, "%s: n %u median %.2f%%", families[i],
              points, median);
  }
}

/* ---- --profile auto ----------------------------------------------------------------------------- */

static prof_sel choose(const char *spec, const char *gpu, const char *engine, const char *version) {
  gpu_cfg g;
  engine_cfg e;
  sim_err err = {0};
  cr_assert_eq(cfg_gpu_load(&g, gpu, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, engine, &err), SIM_OK, "%s", err.msg);
  if (version) snprintf(e.version, sizeof e.version, "%s", version);
  prof_sel s;
  cr_assert_eq(profsel_choose(&s, spec, &g, &e, &err), SIM_OK, "%s", err.msg);
  return s;
}

Test(profiles, auto_picks_this_gpu_engine_and_nearest_version) {
  prof_sel s = choose("auto", "h100-sxm", "vllm@0.15.1", NULL);
  cr_assert_str_eq(s.source, "measured kernel tables h100-sxm_vllm-0.14.0 (kernel-db: NVIDIA AIConfigurator, vllm "
                             "0.14.0 on h100_sxm); roofline from the h100-sxm datasheet where they have no data");
  cr_assert(s.own && !s.other);
  cr_assert_str_eq(prof_engine_version(s.own), "0.14.0");
  profsel_free(&s);
  s = choose("auto", "h100-sxm", "vllm", NULL); /* the engine file's version, 0.25.0 */
  cr_assert_str_eq(prof_engine_version(s.own), "0.24.0");
  profsel_free(&s);
  s = choose("auto", "h100-sxm", "vllm", "0.30.0");
  cr_assert_str_eq(prof_engine_version(s.own), "0.24.0", "the newest not newer than 0.30.0");
  s = choose("auto", "h100-sxm", "vllm", "0.20.1");
  cr_assert_str_eq(prof_engine_version(s.own), "0.14.0");
  s = choose("auto", "h100-sxm", "vllm", "");
  cr_assert_str_eq(prof_engine_version(s.own), "0.24.0", "no engine version: the newest");
  s = choose("auto", "b200", "vllm", "0.14.0");
  cr_assert_str_eq(prof_engine_version(s.own), "0.19.0", "none old enough: the oldest");
  s = choose("auto", "a100-sxm-80gb", "trtllm", NULL);
  cr_assert_str_eq(prof_engine_version(s.own), "1.0.0");
  s = choose("auto", "h200", "trtllm", NULL);
  cr_assert(strstr(s.source, "h200_trtllm-1.3.0rc20") && strstr(s.source, "trtllm 1.3.0rc20 on h200_sxm"), "%s",
            s.source);
  /* Blackwell Ultra and the NVL72 racks: their own measured tables (kernel-db b300_sxm, gb200, gb300) */
  static const char *const bw[] = {"b300", "gb200", "gb300"};
  for (int i = 0; i < 3; i++) {
    s = choose("auto", bw[i], "vllm", NULL);
    cr_assert(s.own && !s.other && !strcmp(prof_engine_version(s.own), "0.24.0"), "%s: %s", bw[i], s.source);
    cr_assert(strstr(s.source, bw[i]) && !strstr(s.source, "scaled"), "%s", s.source);
    s = choose("auto", bw[i], "trtllm", NULL);
    cr_assert(s.own && !strcmp(prof_engine_version(s.own), "1.3.0rc20"), "%s: %s", bw[i], s.source);
  }
  s = choose("none", "h200", "vllm", NULL);
  cr_assert(!s.own && !s.other && strstr(s.source, "roofline"));
  profsel_cache_clear();
}

/* engine sglang: its own profiles by the same version rule (the engine file is another branch's: the choice
 * reads only the engine's name and version) */
static prof_sel choose_sglang(const char *gpu, const char *version) {
  gpu_cfg g;
  engine_cfg e;
  sim_err err = {0};
  cr_assert_eq(cfg_gpu_load(&g, gpu, &err), SIM_OK, "%s", err.msg);
  cr_assert_eq(cfg_engine_load(&e, "vllm", &err), SIM_OK, "%s", err.msg);
  snprintf(e.name, sizeof e.name, "sglang");
  snprintf(e.version, sizeof e.version, "%s", version);
  prof_sel s;
  cr_assert_eq(profsel_choose(&s, "auto", &g, &e, &err), SIM_OK, "%s", err.msg);
  return s;
}

Test(profiles, auto_picks_sglang_tables_for_engine_sglang) {
  prof_sel s = choose_sglang("h200", "0.5.10");
  cr_assert(s.own && !s.other, "%s", s.source);
  cr_assert_str_eq(prof_engine(s.own), "sglang");
  cr_assert_str_eq(prof_engine_version(s.own), "0.5.6.post2", "the newest not newer than 0.5.10");
  cr_assert(strstr(s.source, "measured kernel tables h200_sglang-0.5.6.post2 (kernel-db: NVIDIA AIConfigurator, "
                             "sglang 0.5.6.post2 on h200_sxm; custom_allreduce_perf is TensorRT-LLM 1.2.0rc5"),
            "%s", s.source);
  s = choose_sglang("h200", "0.5.14");
  cr_assert_str_eq(prof_engine_version(s.own), "0.5.14");
  s = choose_sglang("h100-sxm", "0.5.5");
  cr_assert_str_eq(prof_engine_version(s.own), "0.5.6.post2", "none old enough: the oldest");
  s = choose_sglang("b200", "0.5.12");
  cr_assert_str_eq(prof_engine_version(s.own), "0.5.9");
  static const char *const bw[] = {"b300", "gb200", "gb300"};
  for (int i = 0; i < 3; i++) {
    s = choose_sglang(bw[i], "");
    cr_assert(s.own && !s.other && !strcmp(prof_engine(s.own), "sglang") &&
                  !strcmp(prof_engine_version(s.own), "0.5.14"),
              "%s: %s", bw[i], s.source);
  }
  profsel_cache_clear();
}

Test(profiles, auto_without_tables_scales_the_nearest_bandwidth_gpu) {
  /* h20 (4.0 TB/s) has no tables: h100-sxm (3.35) is nearer than h200 (4.8) */
  prof_sel s = choose("auto", "h20", "vllm", NULL);
  cr_assert(!s.own && s.other, "%s", s.source);
  cr_assert_str_eq(s.other_gpu.name, "h100-sxm");
  cr_assert(strstr(s.source, "h100-sxm_vllm-0.24.0") && strstr(s.source, "scaled to h20"), "%s", s.source);
  profsel_cache_clear();
}

/* A small version 2 profile of gpu h20 (no tables: enough for choosing). */
static void fake_profile(const char *dir, const char *name) {
  char p[1024];
  snprintf(p, sizeof p, "%s/configs/profiles/%s.json", dir, name);
  cr_assert(tu_write_table(p,
                           "{\"format\": \"servesim-profile\", \"version\": 2, \"gpu\": \"h20\", \"probes\": "
                           "{\"copy_Bps\": 4e12, \"peak_flops\": {\"bf16\": 1.48e14}}}\n",
                           false));
}

Test(profiles, auto_reads_names_of_the_data_dir_too) {
  const char *dir = tu_tmpdir();
  fake_profile(dir, "h20_vllm-0.10.0");
  fake_profile(dir, "h20_vllm-0.20.0");
  fake_profile(dir, "h20_llama-3.1-70b"); /* a calibrate file name: only by name */
  setenv("SERVESIM_DATA_DIR", dir, 1);
  prof_sel s = choose("auto", "h20", "vllm", "0.14.0");
  cr_assert(s.own && strstr(s.source, "h20_vllm-0.10.0"), "%s", s.source);
  s = choose("auto", "h20", "vllm", "0.05");
  cr_assert(strstr(s.source, "h20_vllm-0.10.0"), "%s", s.source);
  s = choose("auto", "h20", "vllm", "");
  cr_assert(strstr(s.source, "h20_vllm-0.20.0"), "%s", s.source);
  s = choose("h20_llama-3.1-70b", "h20", "vllm", NULL);
  cr_assert(s.own && strstr(s.source, "measured profile"), "a v1-style name given explicitly: %s", s.source);
  unsetenv("SERVESIM_DATA_DIR");
  profsel_cache_clear();
}

typedef struct race {
  const char *path;
  const prof *got;
  int rc;
} race;

static void racer(void *arg) { /* no Criterion assertions off the test's thread */
  race *r = arg;
  sim_err err = {0};
  r->rc = profsel_cache_get(r->path, &r->got, &err);
}

Test(profiles, cache_loads_a_path_once_across_threads) {
  enum { N = 4 };
  uv_thread_t t[N];
  race r[N];
  for (int i = 0; i < N; i++) {
    r[i].path = "configs/profiles/a100-sxm-80gb_vllm-0.14.0.json";
    cr_assert_eq(uv_thread_create(&t[i], racer, &r[i]), 0);
  }
  for (int i = 0; i < N; i++) uv_thread_join(&t[i]);
  for (int i = 0; i < N; i++) cr_assert(r[i].rc == SIM_OK && r[i].got == r[0].got, "one load shared by every thread");
  const prof *again;
  sim_err err = {0};
  cr_assert_eq(profsel_cache_get("configs/profiles/a100-sxm-80gb_vllm-0.14.0.json", &again, &err), SIM_OK);
  cr_assert_eq(again, r[0].got);
  cr_assert_eq(profsel_cache_get("/nonexistent/p.json", &again, &err), SIM_EINPUT);
  profsel_cache_clear();
}

Test(profiles, list_shows_the_bundled_profiles) {
  cr_assert_eq(cli("list"), 0);
  cr_assert(strstr(out_buf, "h100-sxm_vllm-0.14.0") && strstr(out_buf, "l40s_trtllm-1.3.0rc20"), "%s", out_buf);
}

/* Sliding-window tables end to end: imported from the fixture's window-128 context rows into a one-file profile,
 * they serve a dense model with window-128 layers of that head layout (the run's cost model line names them);
 * a model with another window is not served by them. */
Test(profiles, sliding_window_tables_serve_a_model_with_that_window) {
  const char *root = tu_tmpdir();
  cr_assert(root && tu_kdb_fixture(root));
  char prof_path[512];
  snprintf(prof_path, sizeof prof_path, "%s/w.json", root);
  cr_assert_eq(cli("calibrate --from-kernel-db %s --gpu h100-sxm --engine vllm --engine-version 0.14.0 --out %s", root,
                   prof_path),
               0, "%s", err_buf);
  for (int window = 128; window <= 256; window += 128) {
    char model[1024];
    snprintf(model, sizeof model,
             "{\"model_type\": \"gpt_oss\", \"hidden_size\": 512, \"intermediate_size\": 1024, \"num_hidden_layers\": "
             "2, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, \"head_dim\": 64, \"sliding_window\": %d, "
             "\"layer_types\": [\"sliding_attention\", \"full_attention\"], \"vocab_size\": 1000, "
             "\"max_position_embeddings\": 4096}",
             window);
    const char *mpath = tu_tmpfile(".json", model);
    cr_assert_eq(cli("run --model %s --gpu h100-sxm --profile %s --num-prompts 5 --random-input-len 300 "
                     "--random-output-len 4",
                     mpath, prof_path),
                 0, "%s", err_buf);
    bool named = strstr(out_buf, "sliding-window attention tables (window 128)") != NULL;
    cr_assert_eq(named, window == 128, "window %d: %s", window, out_buf);
  }
}

/* vLLM 0.14.0's bundled tables hold attention of 128-wide heads only: a model with 64-wide heads run as vLLM 0.18
   takes its attention from the nearest other version of the same GPU and engine that has them (0.24.0), and the
   output says so; a model the chosen profile covers, or the version whose profile covers it, needs none. */
Test(profiles, attention_of_an_uncovered_head_layout_from_another_version) {
  const char *json = "{\"model_type\": \"llama\", \"hidden_size\": 512, \"intermediate_size\": 1024, "
                     "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, \"head_dim\": %d, "
                     "\"vocab_size\": 1000, \"max_position_embeddings\": 4096}";
  char model[512];
  const char *cases[][2] = {{"64", "vllm@0.18.0"}, {"128", "vllm@0.18.0"}, {"64", "vllm@0.24.0"}};
  for (int k = 0; k < 3; k++) {
    snprintf(model, sizeof model, json, atoi(cases[k][0]));
    const char *mpath = tu_tmpfile(".json", model);
    cr_assert_eq(cli("run --model %s --gpu h200 --tp 1 --engine %s --num-prompts 5 --random-input-len 300 "
                     "--random-output-len 4",
                     mpath, cases[k][1]),
                 0, "%s", err_buf);
    bool alt = strstr(out_buf, "attention tables h200_vllm-0.24.0 (h200_vllm-0.14.0 has none for 8 query / 8 KV "
                               "heads of 64)") != NULL;
    cr_assert_eq(alt, k == 0, "head_dim %s, %s: %s", cases[k][0], cases[k][1], out_buf);
    remove(mpath);
  }
}
