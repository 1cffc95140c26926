/* sweep_part.c: shard files of a sweep (see sweep_part.h). */
#include "plan/sweep_part.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"

#include "plan/capacity.h"
#include "plan/part_rows.h"

static const char MAGIC[] = "servesim-part 1 ";

/* The row size this build has for a kind of part; 0 for a kind it does not know. */
static size_t row_bytes_of(const char *kind) {
  return !strcmp(kind, "sweep") ? sizeof(sweep_row) : !strcmp(kind, "capacity") ? sizeof(cap_candidate) : 0;
}

#define FNV_BASIS 0xcbf29ce484222325ull

/* FNV-1a over n more bytes. */
static uint64_t fnv(uint64_t h, const void *bytes, size_t n) {
  const uint8_t *b = bytes;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

uint64_t sweep_part_fingerprint(const char *kind, size_t row_bytes, const char *args, size_t args_len) {
  uint64_t h = FNV_BASIS; /* FNV-1a */
  char pre[160];
  int n = snprintf(pre, sizeof pre, "%s|%s|%zu|", kind, SERVESIM_VERSION, row_bytes);
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)pre[i]) * 0x100000001b3ull;
  for (size_t i = 0; i < args_len; i++) h = (h ^ (uint8_t)args[i]) * 0x100000001b3ull;
  return h;
}

int sweep_part_write(const char *kind, const void *rows, size_t row_bytes, size_t n_rows, size_t k, size_t n,
                     const char *args, size_t args_len, FILE *f, const char *path, sim_err *err) {
  SIM_ASSERT(row_bytes == row_bytes_of(kind));
  size_t m = sweep_shard_rows(n_rows, k, n);
  fprintf(f, "%s%s\n", MAGIC, kind);
  fprintf(f, "version %s row_bytes %zu shard %zu of %zu rows %zu fingerprint %016" PRIx64 "\n", SERVESIM_VERSION,
          row_bytes, k, n, n_rows, sweep_part_fingerprint(kind, row_bytes, args, args_len));
  fprintf(f, "args %zu\n", args_len);
  fwrite(args, 1, args_len, f);
  uint64_t sum = FNV_BASIS;
  for (size_t j = 0; j < m; j++) {
    uint64_t i = j * n + (k - 1);
    sum = fnv(sum, &i, sizeof i);
    sum = fnv(sum, (const unsigned char *)rows + i * row_bytes, row_bytes);
  }
  fprintf(f, "\ndata %zu checksum %016" PRIx64 "\n", m, sum);
  for (size_t j = 0; j < m; j++) {
    uint64_t i = j * n + (k - 1);
    fwrite(&i, sizeof i, 1, f);
    fwrite((const unsigned char *)rows + i * row_bytes, row_bytes, 1, f);
  }
  if (fflush(f) || ferror(f)) return sim_errf(err, SIM_EINPUT, "%s: write failed", path);
  return SIM_OK;
}

static int bad(const char *path, sim_err *err, const char *what) {
  return sim_errf(err, SIM_EINPUT, "%s: not a sweep part of this servesim build: %s", path, what);
}

int sweep_part_read(sweep_part *p, const char *path, sim_err *err) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "%s", path);
  FILE *f = fopen(path, "rb");
  if (!f) return sim_errf(err, SIM_EINPUT, "%s: cannot open", path);
  char line[512], version[64];
  size_t row_bytes = 0;
  uint64_t fp = 0;
  int rc = SIM_OK;
  if (!fgets(line, sizeof line, f) || strncmp(line, MAGIC, strlen(MAGIC)) ||
      sscanf(line + strlen(MAGIC), "%15s", p->kind) != 1)
    rc = bad(path, err, "no 'servesim-part 1 KIND' header");
  else if (!row_bytes_of(p->kind))
    rc = bad(path, err, "unknown kind of part");
  else if (!fgets(line, sizeof line, f) ||
           sscanf(line, "version %63s row_bytes %zu shard %zu of %zu rows %zu fingerprint %" SCNx64, version,
                  &row_bytes, &p->k, &p->n, &p->rows, &fp) != 6)
    rc = bad(path, err, "line 2 is not 'version V row_bytes B shard K of N rows R fingerprint F'");
  else if (strcmp(version, SERVESIM_VERSION) || row_bytes != row_bytes_of(p->kind))
    rc = sim_errf(err, SIM_EINPUT, "%s: written by servesim %s (rows of %zu bytes); this is %s (%zu): merge with the "
                  "build that ran the shards", path, version, row_bytes, SERVESIM_VERSION, row_bytes_of(p->kind));
  else if (p->n < 1 || p->k < 1 || p->k > p->n)
    rc = bad(path, err, "shard number out of range");
  else if (!fgets(line, sizeof line, f) || sscanf(line, "args %zu", &p->args_len) != 1 || p->args_len > (1u << 20))
    rc = bad(path, err, "line 3 is not 'args L'");
  if (!rc) {
    p->args = sim_malloc(p->args_len + 1);
    if (fread(p->args, 1, p->args_len, f) != p->args_len || fgetc(f) != '\n') rc = bad(path, err, "arguments cut short");
    else p->args[p->args_len] = 0;
  }
  p->row_bytes = row_bytes;
  if (!rc && sweep_part_fingerprint(p->kind, row_bytes, p->args, p->args_len) != fp)
    rc = bad(path, err, "fingerprint does not match");
  p->fingerprint = fp;
  uint64_t want_sum = 0;
  if (!rc && (!fgets(line, sizeof line, f) || sscanf(line, "data %zu checksum %" SCNx64, &p->m, &want_sum) != 2))
    rc = bad(path, err, "no 'data M checksum C' line");
  if (!rc && p->m != sweep_shard_rows(p->rows, p->k, p->n))
    rc = sim_errf(err, SIM_EINPUT, "%s: shard %zu of %zu of %zu rows should hold %zu rows", path, p->k, p->n, p->rows,
                  sweep_shard_rows(p->rows, p->k, p->n));
  if (!rc) { /* the rows must be in the file before anything is allocated for them */
    long here = ftell(f);
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, here, SEEK_SET);
    if (here < 0 || end < here || (uint64_t)(end - here) / (sizeof(uint64_t) + p->row_bytes) < p->m)
      rc = sim_errf(err, SIM_EINPUT, "%s: cut short: %zu rows announced, the file holds fewer", path, p->m);
  }
  if (!rc) {
    p->index = sim_calloc(p->m ? p->m : 1, sizeof *p->index);
    p->row = sim_calloc(p->m ? p->m : 1, p->row_bytes);
    uint64_t sum = FNV_BASIS;
    for (size_t j = 0; j < p->m && !rc; j++) {
      if (fread(&p->index[j], sizeof p->index[j], 1, f) != 1 || fread(p->row + j * p->row_bytes, p->row_bytes, 1, f) != 1)
        rc = sim_errf(err, SIM_EINPUT, "%s: cut short at row %zu of %zu", path, j, p->m);
      sum = fnv(fnv(sum, &p->index[j], sizeof p->index[j]), p->row + j * p->row_bytes, p->row_bytes);
    }
    if (!rc && fgetc(f) != EOF) rc = bad(path, err, "bytes after the last row");
    if (!rc && sum != want_sum) /* an accident on the way: named as such (a forgery is the record checks' to find) */
      rc = sim_errf(err, SIM_EINPUT, "%s: corrupted: the rows' checksum is %016" PRIx64 ", the header says %016" PRIx64
                    " (the file changed after servesim wrote it)", path, sum, want_sum);
    for (size_t j = 0; j < p->m && !rc; j++) {
      if (p->index[j] != j * p->n + (p->k - 1))
        rc = bad(path, err, "row index out of its shard");
      else /* every field of the record, before anything reads it as a struct */
        rc = part_row_check(p->kind, p->row + j * p->row_bytes, path, p->index[j], err);
    }
  }
  fclose(f);
  if (rc) sweep_part_free(p);
  return rc;
}

void sweep_part_free(sweep_part *p) {
  free(p->args);
  free(p->index);
  free(p->row);
  p->args = NULL;
  p->index = NULL;
  p->row = NULL;
}

/* Checks the parts belong together and cover every shard once. */
int sweep_parts_check(const sweep_part *p, int np, sim_err *err) {
  for (int i = 1; i < np; i++)
    if (strcmp(p[i].kind, p[0].kind) || p[i].fingerprint != p[0].fingerprint || p[i].n != p[0].n ||
        p[i].rows != p[0].rows)
      return sim_errf(err, SIM_EINPUT, "%s is a part of another sweep than %s (arguments, shard count or grid differ)",
                      p[i].path, p[0].path);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < i; j++)
      if (p[i].k == p[j].k)
        return sim_errf(err, SIM_EINPUT, "%s and %s are both shard %zu of %zu", p[j].path, p[i].path, p[i].k, p[i].n);
  if ((size_t)np < p[0].n) {
    char miss[512] = "";
    size_t o = 0;
    for (size_t k = 1; k <= p[0].n && o < sizeof miss - 16; k++) {
      bool have = false;
      for (int i = 0; i < np; i++) have |= p[i].k == k;
      if (!have) o += (size_t)snprintf(miss + o, sizeof miss - o, "%s%zu", o ? ", " : "", k);
    }
    return sim_errf(err, SIM_EINPUT, "missing shard%s %s of %zu (run them, then merge every part)",
                    p[0].n - (size_t)np == 1 ? "" : "s", miss, p[0].n);
  }
  return SIM_OK;
}

int sweep_parts_fill(sweep_set *s, const sweep_part *p, int np, sim_err *err) {
  if (strcmp(p[0].kind, "sweep")) return sim_errf(err, SIM_EINPUT, "%s: a %s part, not a sweep's", p[0].path, p[0].kind);
  if (s->n != p[0].rows)
    return sim_errf(err, SIM_EINPUT, "%s: its grid has %zu rows, the sweep rebuilt here %zu", p[0].path, p[0].rows,
                    s->n);
  for (int i = 0; i < np; i++)
    for (size_t j = 0; j < p[i].m; j++) {
      sweep_row *r = &s->rows[p[i].index[j]], *x = sim_malloc(sizeof *x);
      memcpy(x, p[i].row + j * p[i].row_bytes, sizeof *x); /* checked by sweep_part_read (part_row_check) */
      int rc = part_sweep_row_fit(x, r, s, p[i].path, err);
      if (!rc) *r = *x;
      free(x);
      if (rc) return rc;
    }
  return SIM_OK;
}

int capacity_parts_fill(capacity_set *s, const sweep_part *p, int np, sim_err *err) {
  if (strcmp(p[0].kind, "capacity"))
    return sim_errf(err, SIM_EINPUT, "%s: a %s part, not a capacity search's", p[0].path, p[0].kind);
  if (s->n != p[0].rows)
    return sim_errf(err, SIM_EINPUT, "%s: its search has %zu candidates, the one rebuilt here %zu", p[0].path,
                    p[0].rows, s->n);
  for (int i = 0; i < np; i++)
    for (size_t j = 0; j < p[i].m; j++) {
      cap_candidate *c = &s->c[p[i].index[j]], *x = sim_malloc(sizeof *x);
      memcpy(x, p[i].row + j * p[i].row_bytes, sizeof *x); /* checked by sweep_part_read (part_row_check) */
      int rc = part_cap_fit(x, c, s, p[i].path, err);
      if (!rc) *c = *x;
      free(x);
      if (rc) return rc;
    }
  capacity_finish(s);
  return SIM_OK;
}

size_t sweep_shard_rows(size_t n_rows, size_t k, size_t n) {
  return n_rows > k - 1 ? (n_rows - (k - 1) + n - 1) / n : 0;
}
