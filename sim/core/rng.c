/* rng.c: xoshiro256** (Blackman & Vigna, public domain algorithm) plus
 * distributions: normal (polar Box-Muller without caching, so the stream does
 * not depend on call history), gamma (Marsaglia and Tsang 2000), lognormal. */
#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void rng_seed(rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double rng_uniform(rng *r) { return (double)(rng_u64(r) >> 11) * 0x1.0p-53; }

uint64_t rng_below(rng *r, uint64_t n) {
  if (n <= 1) return 0;
  uint64_t lim = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rng_u64(r);
  while (x >= lim);
  return x % n;
}

int64_t rng_int_range(rng *r, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo) + 1);
}

double rng_normal(rng *r) {
  for (;;) {
    double u = 2.0 * rng_uniform(r) - 1.0, v = 2.0 * rng_uniform(r) - 1.0;
    double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * log(s) / s);
  }
}

double rng_exponential(rng *r, double rate) {
  double u;
  do u = rng_uniform(r);
  while (u == 0.0);
  return -log(u) / rate;
}

double rng_gamma(rng *r, double shape, double scale) {
  if (shape < 1.0) {
    /* boost: gamma(a) = gamma(a+1) * U^(1/a) */
    double u;
    do u = rng_uniform(r);
    while (u == 0.0);
    return rng_gamma(r, shape + 1.0, scale) * pow(u, 1.0 / shape);
  }
  double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng_normal(r);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = rng_uniform(r);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
    if (u > 0.0 && log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v * scale;
  }
}

double rng_lognormal(rng *r, double mu, double sigma) { return exp(mu + sigma * rng_normal(r)); }
