/* test_des.c: the event heap orders by (time, push order) and the clock is monotone. */
#include <criterion/criterion.h>

#include "core/des.h"
#include "core/rng.h"

Test(des, pops_in_time_then_push_order) {
  des d;
  des_init(&d);
  des_push(&d, 50, 1, 0, 0);
  des_push(&d, 10, 2, 0, 0);
  des_push(&d, 50, 3, 0, 0);
  des_push(&d, 10, 4, 0, 0);
  int want[] = {2, 4, 1, 3};
  des_event ev;
  for (int i = 0; i < 4; i++) {
    cr_assert(des_pop(&d, &ev));
    cr_assert_eq((int)ev.kind, want[i]);
  }
  cr_assert_not(des_pop(&d, &ev));
  cr_assert_eq(des_now(&d), 50);
  des_deinit(&d);
}

Test(des, million_random_events_monotone_and_stable) {
  des d;
  des_init(&d);
  rng r;
  rng_seed(&r, 7);
  const uint64_t n = 1000000;
  for (uint64_t i = 0; i < n; i++) des_push(&d, rng_below(&r, 1000), 0, 0, i);
  des_event ev, prev = {0, 0, 0, 0, 0, 0};
  uint64_t popped = 0;
  while (des_pop(&d, &ev)) {
    if (popped) {
      cr_assert(ev.t_ns > prev.t_ns || (ev.t_ns == prev.t_ns && ev.arg > prev.arg),
                "event %lu out of order", (unsigned long)popped);
    }
    prev = ev;
    popped++;
    /* interleave: every pop at an even count pushes a future event */
    if (popped < n / 2 && (popped & 1)) des_push(&d, ev.t_ns + 1 + rng_below(&r, 10), 0, 0, n + popped);
  }
  cr_assert_eq(d.n_popped, n + (n / 2) / 2);
  des_deinit(&d);
}

Test(rng, deterministic_and_in_range) {
  rng a, b;
  rng_seed(&a, 42);
  rng_seed(&b, 42);
  for (int i = 0; i < 1000; i++) cr_assert_eq(rng_u64(&a), rng_u64(&b));
  double sum = 0;
  for (int i = 0; i < 200000; i++) {
    double u = rng_uniform(&a);
    cr_assert(u >= 0.0 && u < 1.0);
    sum += u;
  }
  cr_assert(sum / 200000 > 0.49 && sum / 200000 < 0.51);
  double g = 0;
  for (int i = 0; i < 200000; i++) g += rng_gamma(&a, 0.5, 4.0); /* mean 2 */
  cr_assert(g / 200000 > 1.95 && g / 200000 < 2.05, "gamma mean %f", g / 200000);
  for (int i = 0; i < 1000; i++) {
    int64_t v = rng_int_range(&a, 5, 9);
    cr_assert(v >= 5 && v <= 9);
  }
}

Test(des, late_events_pop_after_every_ordinary_event_of_their_time) {
  des d;
  des_init(&d);
  des_push(&d, 10, 1, 0, 0);
  des_push_late(&d, 10, 2, 0, 0);
  des_push(&d, 10, 3, 0, 0); /* pushed after the late one, still pops before it */
  des_push(&d, 5, 4, 0, 0);
  des_push_late(&d, 10, 5, 0, 0);
  des_push(&d, 11, 6, 0, 0);
  int want[] = {4, 1, 3, 2, 5, 6};
  des_event ev;
  for (int i = 0; i < 6; i++) {
    cr_assert(des_pop(&d, &ev));
    cr_assert_eq((int)ev.kind, want[i], "pop %d", i);
  }
  des_deinit(&d);
}

/* An event pushed "from" another time sorts among same-time events by that
 * push time, as if the clock had been there; an ordinary and a des_push_from
 * event with the same time and push time are flagged: their order is unknown. */
Test(des, push_from_orders_by_push_time_and_flags_ties) {
  des d;
  des_init(&d);
  des_push(&d, 10, 1, 0, 0);          /* pushed at 0 */
  des_push_from(&d, 10, 7, 2, 0, 0);  /* as if pushed at 7 */
  des_push_from(&d, 10, 3, 3, 0, 0);  /* as if pushed at 3 */
  des_push(&d, 5, 4, 0, 0);
  des_event ev;
  cr_assert(des_pop(&d, &ev) && ev.kind == 4);
  des_push(&d, 10, 5, 0, 0); /* pushed at 5: between the two */
  des_push_late(&d, 10, 6, 0, 0);
  uint32_t order[5], n = 0;
  while (des_pop(&d, &ev)) order[n++] = ev.kind;
  cr_assert_eq(n, 5);
  cr_assert(order[0] == 1 && order[1] == 3 && order[2] == 5 && order[3] == 2 && order[4] == 6,
            "%u %u %u %u %u", order[0], order[1], order[2], order[3], order[4]);
  cr_assert_not(d.ambiguous);
  des_push(&d, 20, 7, 0, 0);          /* pushed at 10 */
  des_push_from(&d, 20, 10, 8, 0, 0); /* the same time and push time: order unknown */
  while (des_pop(&d, &ev)) {
  }
  cr_assert(d.ambiguous);
  des_deinit(&d);
}

/* Taking one target's event out (des_remove) and putting it back, and holding a run of events outside the heap
 * (des_stamp, des_took) as cluster.c's decode runs do, pop everything in the order plain pushes and pops give. */
Test(des, events_held_outside_the_heap_keep_the_order) {
  des a, b;
  des_init(&a), des_init(&b);
  rng r;
  rng_seed(&r, 11);
  for (uint32_t i = 0; i < 300; i++) {
    sim_ns t = rng_below(&r, 50);
    uint32_t target = (uint32_t)rng_below(&r, 20);
    if (i % 3) des_push(&a, t, 1, target, i), des_push(&b, t, 1, target, i);
    else des_push_late(&a, t, 1, target, i), des_push_late(&b, t, 1, target, i);
  }
  des_event ea, eb, held;
  uint64_t n = 0;
  while (des_pop(&a, &ea)) {
    cr_assert(des_pop(&b, &eb));
    cr_assert(ea.t_ns == eb.t_ns && ea.seq == eb.seq && ea.arg == eb.arg, "pop %llu", (unsigned long long)n);
    n++;
    if (n % 7 == 0 && des_remove(&b, 1, (uint32_t)(n % 20), &held)) { /* out and back in */
      cr_assert_eq(held.target, (uint32_t)(n % 20));
      des_put_back(&b, &held);
    }
    if (n % 11 == 0) { /* a's next event pushed and popped at once; b's held outside, then accounted */
      des_push(&a, ea.t_ns + 1, 2, 99, 1000 + n);
      des_event x;
      des_stamp(&b, &held, eb.t_ns + 1, 2, 99, 1000 + n);
      const des_event *top = des_peek(&b);
      if (!top || des_before(&held, top)) {
        cr_assert(des_pop(&a, &x));
        cr_assert(x.seq == held.seq && x.t_ns == held.t_ns);
        des_took(&b, &held);
        cr_assert_eq(des_now(&b), held.t_ns);
      } else {
        des_put_back(&b, &held);
      }
    }
  }
  cr_assert_not(des_pop(&b, &eb));
  cr_assert_eq(a.n_popped, b.n_popped);
  des_deinit(&a), des_deinit(&b);
}
