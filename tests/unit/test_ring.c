/* test_ring.c: the one queue (core/ring.h), the one sort and the large-block allocators (core/common.h)
 * every module shares. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/ring.h"

/* Against a plain array model: pushes at both ends across many growths and
 * wrap-arounds keep the order; pops come from the front; remove drops every
 * copy of a value and keeps the rest in order. */
Test(ring, matches_an_array_model_through_growth_and_wraparound) {
  idx_ring r;
  ring_init(&r, 1);
  uint32_t model[4096];
  uint32_t lo = 2048, hi = 2048; /* model[lo..hi) */
  uint64_t x = 12345;
  for (uint32_t step = 0; step < 3000; step++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t op = (uint32_t)(x >> 60) % 4, v = (uint32_t)(x >> 33) % 50;
    if (op == 0 && lo > 0) ring_push_front(&r, v), model[--lo] = v;
    else if (op <= 1 && hi < 4096) ring_push_back(&r, v), model[hi++] = v;
    else if (op == 2 && hi > lo) cr_assert_eq(ring_pop_front(&r), model[lo++]);
    else if (op == 3) {
      uint32_t w = lo;
      for (uint32_t i = lo; i < hi; i++)
        if (model[i] != v) model[w++] = model[i];
      cr_assert_eq(ring_remove(&r, v), hi - w);
      hi = w;
    }
    cr_assert_eq(r.len, hi - lo, "step %u", step);
    for (uint32_t i = 0; i < r.len; i++) cr_assert_eq(ring_at(&r, i), model[lo + i], "step %u, entry %u", step, i);
    if (r.len) cr_assert_eq(ring_front(&r), model[lo]);
  }
  ring_free(&r);
  cr_assert_null(r.v);
}

Test(sort, doubles_ascending_infinities_last_and_strings) {
  double v[] = {3, -1, INFINITY, 0.5, -INFINITY, 2, 2};
  sim_sort_doubles(v, 7);
  double want[] = {-INFINITY, -1, 0.5, 2, 2, 3, INFINITY};
  for (int i = 0; i < 7; i++) cr_assert(v[i] == want[i], "entry %d: %g", i, v[i]);
  sim_sort_doubles(v, 0); /* nothing to do, nothing touched */
  const char *s[] = {"b", "a", "c"};
  qsort(s, 3, sizeof *s, sim_cmp_cstr);
  cr_assert_str_eq(s[0], "a");
  cr_assert_str_eq(s[2], "c");
}

/* Large blocks in huge pages (core/common.h): sim_calloc_huge zeroes whole 2 MiB pages, aligned; such a block can
 * be grown by sim_realloc and freed by free(); SIM_GROW moves an array past 256 KiB into such a block keeping
 * every element; below the threshold the plain allocators answer. */
Test(alloc, huge_blocks_are_zeroed_aligned_growable_and_keep_contents) {
  size_t n = 300000; /* 2.3 MiB of doubles: two huge pages */
  double *p = sim_calloc_huge(n, sizeof *p);
  cr_assert_eq((uintptr_t)p % ((uintptr_t)2 << 20), 0, "aligned to 2 MiB");
  for (size_t i = 0; i < n; i++) cr_assert(p[i] == 0.0 && !signbit(p[i]), "zeroed at %zu", i);
  for (size_t i = 0; i < n; i++) p[i] = (double)i * 0.5;
  p = sim_realloc(p, 2 * n * sizeof *p);
  for (size_t i = 0; i < n; i++) cr_assert_eq(p[i], (double)i * 0.5, "kept by realloc at %zu", i);
  free(p);
  uint32_t *small = sim_calloc_huge(10, sizeof *small);
  for (int i = 0; i < 10; i++) cr_assert_eq(small[i], 0);
  free(small);
  char *m = sim_malloc_huge((size_t)3 << 20);
  cr_assert_eq((uintptr_t)m % ((uintptr_t)2 << 20), 0);
  memset(m, 7, (size_t)3 << 20);
  free(m);
  uint32_t *a = NULL;
  size_t cap = 0;
  for (uint32_t i = 0; i < 200000; i++) { /* 800 KB: crosses 256 KiB */
    SIM_GROW(a, cap, (size_t)i + 1);
    a[i] = i * 2654435761u;
  }
  cr_assert_geq(cap, 200000);
  for (uint32_t i = 0; i < 200000; i++) cr_assert_eq(a[i], i * 2654435761u, "kept through growth at %u", i);
  free(a);
}
