/* rng.h: the one seeded random generator of a run (xoshiro256**, seeded by
 * splitmix64) and the distributions the workload generators need.
 * Same seed, same sequence, on every platform: no libc rand(). */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct rng {
  uint64_t s[4];
} rng;

void rng_seed(rng *r, uint64_t seed);
uint64_t rng_u64(rng *r);
double rng_uniform(rng *r);                       /* [0, 1) with 53 random bits */
uint64_t rng_below(rng *r, uint64_t n);           /* uniform integer in [0, n), unbiased */
int64_t rng_int_range(rng *r, int64_t lo, int64_t hi); /* uniform in [lo, hi] inclusive */
double rng_normal(rng *r);                        /* standard normal */
double rng_exponential(rng *r, double rate);      /* mean 1/rate */
double rng_gamma(rng *r, double shape, double scale); /* Marsaglia-Tsang; mean shape*scale */
double rng_lognormal(rng *r, double mu, double sigma);

#endif
