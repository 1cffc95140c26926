/* test_prof_bin.c: binary profile images (hw/prof_bin.c). Every bundled profile read back from its image is the
 * parsed profile bit for bit (every table, every array, the order of the tables); a truncated, altered or foreign
 * image is refused; an image tells the bytes it was made from from any other. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/prof_impl.h"

#define EQ_ARR(a, b, n, what)                                                                                        \
  cr_assert((n) == 0 || !memcmp((a), (b), (size_t)(n) * sizeof *(a)), "%s: %s differs", name, what)

/* The rows of two module tables (MLA modules, Gated DeltaNet kernels), bit for bit. */
static void same_rows(const mod_rows *x, const mod_rows *y, const char *name, const char *kind, int i) {
  cr_assert(x->nrows == y->nrows, "%s: %s %d rows", name, kind, i);
  EQ_ARR(x->lb, y->lb, x->nrows, "module lb");
  for (int r = 0; r < x->nrows; r++) {
    const mla_row *u = &x->rows[r], *v = &y->rows[r];
    cr_assert(u->batch == v->batch && u->n == v->n, "%s: %s %d row %d", name, kind, i, r);
    EQ_ARR(u->len, v->len, u->n, "module len");
    EQ_ARR(u->ns, v->ns, u->n, "module ns");
    EQ_ARR(u->ll, v->ll, u->n, "module ll");
    EQ_ARR(u->lt, v->lt, u->n, "module lt");
  }
}

static void same(const prof *a, const prof *b, const char *name) {
  cr_assert_eq(a->version, b->version, "%s", name);
  cr_assert_str_eq(a->gpu, b->gpu);
  cr_assert_str_eq(a->engine, b->engine);
  cr_assert_str_eq(a->engine_version, b->engine_version);
  cr_assert_str_eq(a->origin, b->origin);
  cr_assert_str_eq(a->attribution, b->attribution);
  cr_assert(!memcmp(&a->copy_Bps, &b->copy_Bps, sizeof a->copy_Bps), "%s", name);
  EQ_ARR(a->peak, b->peak, DT_COUNT, "peak");
  cr_assert_eq(a->ngemm, b->ngemm, "%s", name);
  for (int i = 0; i < a->ngemm; i++) {
    const gemm_tab *x = &a->gemm[i], *y = &b->gemm[i];
    cr_assert(x->wdtype == y->wdtype && x->adtype == y->adtype && x->n == y->n && x->k == y->k && x->np == y->np &&
                  x->idx == y->idx,
              "%s: gemm %d", name, i);
    EQ_ARR(x->m, y->m, x->np, "gemm m");
    EQ_ARR(x->ns, y->ns, x->np, "gemm ns");
    EQ_ARR(x->lx, y->lx, x->np, "gemm lx");
    EQ_ARR(x->le, y->le, x->np, "gemm le");
  }
  cr_assert_eq(a->ngrid, b->ngrid, "%s", name);
  for (int i = 0; i < a->ngrid; i++) {
    const grid_tab *x = &a->grid[i], *y = &b->grid[i];
    cr_assert(x->wdtype == y->wdtype && x->adtype == y->adtype && x->block == y->block && x->nm == y->nm &&
                  x->nn == y->nn && x->nk == y->nk && x->idx == y->idx,
              "%s: grid %d", name, i);
    size_t cells = (size_t)x->nm * (size_t)x->nn * (size_t)x->nk;
    EQ_ARR(x->m, y->m, x->nm, "grid m");
    EQ_ARR(x->n, y->n, x->nn, "grid n");
    EQ_ARR(x->k, y->k, x->nk, "grid k");
    EQ_ARR(x->lm, y->lm, x->nm, "grid lm");
    EQ_ARR(x->ln, y->ln, x->nn, "grid ln");
    EQ_ARR(x->lk, y->lk, x->nk, "grid lk");
    EQ_ARR(x->ns, y->ns, cells, "grid ns");
    EQ_ARR(x->le, y->le, cells, "grid le");
  }
  for (int k = 0; k < AK_COUNT; k++) {
    cr_assert_eq(a->nattn[k], b->nattn[k], "%s", name);
    for (int i = 0; i < a->nattn[k]; i++) {
      const attn_tab *x = &a->attn[k][i], *y = &b->attn[k][i];
      cr_assert(x->kind == y->kind && x->kv_dtype == y->kv_dtype && x->q_heads == y->q_heads &&
                    x->kv_heads == y->kv_heads && x->head_dim == y->head_dim && x->window == y->window &&
                    x->nx == y->nx && x->ny == y->ny && x->idx == y->idx,
                "%s: attn %d/%d", name, k, i);
      size_t cells = (size_t)x->nx * (size_t)x->ny;
      EQ_ARR(x->x, y->x, x->nx, "attn x");
      EQ_ARR(x->y, y->y, x->ny, "attn y");
      EQ_ARR(x->lx, y->lx, x->nx, "attn lx");
      EQ_ARR(x->ly, y->ly, x->ny, "attn ly");
      EQ_ARR(x->ns, y->ns, cells, "attn ns");
      EQ_ARR(x->le, y->le, cells, "attn le");
    }
  }
  cr_assert_eq(a->nar, b->nar, "%s", name);
  for (int i = 0; i < a->nar; i++) {
    const ar_tab *x = &a->ar[i], *y = &b->ar[i];
    cr_assert(x->impl == y->impl && x->num_gpus == y->num_gpus && x->dtype == y->dtype && x->n == y->n &&
                  x->idx == y->idx,
              "%s: allreduce %d", name, i);
    EQ_ARR(x->bytes, y->bytes, x->n, "ar bytes");
    EQ_ARR(x->ns, y->ns, x->n, "ar ns");
    EQ_ARR(x->lb, y->lb, x->n, "ar lb");
    EQ_ARR(x->lt, y->lt, x->n, "ar lt");
  }
  cr_assert_eq(a->nmoe, b->nmoe, "%s", name);
  for (int i = 0; i < a->nmoe; i++) {
    const moe_tab *x = &a->moe[i], *y = &b->moe[i];
    cr_assert(!prof_moe_key_cmp(&x->key, &y->key) && x->n == y->n && x->idx == y->idx, "%s: moe %d", name, i);
    EQ_ARR(x->tokens, y->tokens, x->n, "moe tokens");
    EQ_ARR(x->ns, y->ns, x->n, "moe ns");
    EQ_ARR(x->lx, y->lx, x->n, "moe lx");
    EQ_ARR(x->lt, y->lt, x->n, "moe lt");
  }
  cr_assert_eq(a->nmla, b->nmla, "%s", name);
  for (int i = 0; i < a->nmla; i++) {
    const mla_tab *x = &a->mla[i], *y = &b->mla[i];
    cr_assert(!prof_mla_key_cmp(&x->key, &y->key) && x->idx == y->idx, "%s: mla %d", name, i);
    same_rows(&x->r, &y->r, name, "mla", i);
  }
  cr_assert_eq(a->ngdn, b->ngdn, "%s", name);
  for (int i = 0; i < a->ngdn; i++) {
    const gdn_tab *x = &a->gdn[i], *y = &b->gdn[i];
    cr_assert(!prof_gdn_key_cmp(&x->key, &y->key) && x->idx == y->idx, "%s: gdn %d", name, i);
    same_rows(&x->r, &y->r, name, "gdn", i);
  }
}

/* An 8-byte aligned copy of an image (the reader points into it). */
static unsigned char *aligned_copy(const unsigned char *img, size_t n) {
  unsigned char *c = aligned_alloc(16, (n + 15) / 16 * 16);
  memcpy(c, img, n);
  return c;
}

Test(prof_bin, every_bundled_profile_reads_back_bit_for_bit) {
  const char *dir = SERVESIM_SOURCE_DIR "/configs/profiles";
  DIR *d = opendir(dir);
  cr_assert(d);
  struct dirent *e;
  int n = 0, moe = 0, mla = 0, gdn = 0;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *text;
    size_t len;
    sim_err err;
    cr_assert_eq(sim_read_file(path, &text, &len, &err), SIM_OK, "%s", err.msg);
    prof *a, *b;
    cr_assert_eq(prof_parse(&a, text, path, &err), SIM_OK, "%s", err.msg);
    unsigned char *img, *c;
    size_t ni;
    cr_assert_eq(prof_bin_write(a, text, len, &img, &ni, &err), SIM_OK);
    c = aligned_copy(img, ni);
    cr_assert(prof_bin_matches(c, ni, text, len), "%s", e->d_name);
    cr_assert_eq(prof_bin_read(&b, c, ni, path, true, &err), SIM_OK, "%s: %s", e->d_name, err.msg);
    cr_assert(b->image);
    same(a, b, e->d_name);
    cr_assert_str_eq(prof_source(b), prof_source(a));
    moe += a->nmoe > 0, mla += a->nmla > 0, gdn += a->ngdn > 0;
    /* the same profile writes the same image (reproducible builds) */
    unsigned char *img2;
    size_t n2;
    cr_assert_eq(prof_bin_write(b, text, len, &img2, &n2, &err), SIM_OK);
    cr_assert(n2 == ni && !memcmp(img, img2, ni), "%s: the image of the image differs", e->d_name);
    prof_free(b);
    prof_free(a);
    free(img2);
    free(img);
    free(c);
    free(text);
    n++;
  }
  closedir(d);
  cr_assert_gt(n, 10, "the bundled profiles were found");
  cr_assert_gt(moe, 0, "fused-MoE tables covered");
  cr_assert_gt(mla, 0, "MLA module tables covered");
  cr_assert_gt(gdn, 0, "Gated DeltaNet tables covered");
}

Test(prof_bin, bad_images_are_refused_and_other_bytes_told_apart) {
  char path[1024];
  snprintf(path, sizeof path, "%s/configs/profiles/h100-sxm_vllm-0.24.0.json", SERVESIM_SOURCE_DIR);
  char *text;
  size_t len;
  sim_err err;
  cr_assert_eq(sim_read_file(path, &text, &len, &err), SIM_OK, "%s", err.msg);
  prof *a, *b;
  cr_assert_eq(prof_parse(&a, text, path, &err), SIM_OK, "%s", err.msg);
  unsigned char *img;
  size_t n;
  cr_assert_eq(prof_bin_write(a, text, len, &img, &n, &err), SIM_OK);
  /* other bytes: one changed, one more, one fewer */
  text[len / 2] ^= 1;
  cr_assert_not(prof_bin_matches(img, n, text, len));
  text[len / 2] ^= 1;
  cr_assert_not(prof_bin_matches(img, n, text, len - 1));
  cr_assert(prof_bin_matches(img, n, text, len));
  unsigned char *c = aligned_copy(img, n);
  /* truncated: the payload length no longer fits */
  cr_assert_eq(prof_bin_read(&b, c, n - 8, "t", false, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "truncated or altered"), "%s", err.msg);
  /* a payload byte altered: caught by the hash when verified */
  c[n - 3] ^= 0x40;
  cr_assert_eq(prof_bin_read(&b, c, n, "t", true, &err), SIM_EINPUT);
  c[n - 3] ^= 0x40;
  /* another layout or magic */
  c[8] ^= 1;
  cr_assert_eq(prof_bin_read(&b, c, n, "t", false, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "not a profile image of this build"), "%s", err.msg);
  c[8] ^= 1;
  c[0] = 'X';
  cr_assert_eq(prof_bin_read(&b, c, n, "t", false, &err), SIM_EINPUT);
  cr_assert_not(prof_bin_matches(c, n, text, len));
  c[0] = 'S';
  /* a count forged past the image's end: refused, nothing read out of bounds (ASan) */
  size_t at = 48 + 4;      /* version, then the gpu string's length */
  c[at + 3] = 0x7f;       /* a string length of ~2^31 */
  cr_assert_eq(prof_bin_read(&b, c, n, "t", false, &err), SIM_EINPUT);
  cr_assert(strstr(err.msg, "inconsistent"), "%s", err.msg);
  /* the intact image still reads */
  memcpy(c, img, n);
  cr_assert_eq(prof_bin_read(&b, c, n, "t", true, &err), SIM_OK, "%s", err.msg);
  prof_free(b);
  prof_free(a);
  free(c);
  free(img);
  free(text);
}
