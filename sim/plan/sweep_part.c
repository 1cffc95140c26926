/* sweep_part.c: shard files of a sweep (see sweep_part.h). */
#include "plan/sweep_part.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"

static const char MAGIC[] = "servesim-sweep-part 1\n";

uint64_t sweep_part_fingerprint(const char *args, size_t args_len) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  char pre[128];
  int n = snprintf(pre, sizeof pre, "%s|%zu|", SERVESIM_VERSION, sizeof(sweep_row));
  for (int i = 0; i < n; i++) h = (h ^ (uint8_t)pre[i]) * 0x100000001b3ull;
  for (size_t i = 0; i < args_len; i++) h = (h ^ (uint8_t)args[i]) * 0x100000001b3ull;
  return h;
}

int sweep_part_write(const sweep_set *s, size_t k, size_t n, const char *args, size_t args_len, FILE *f,
                     const char *path, sim_err *err) {
  size_t m = sweep_shard_rows(s->n, k, n);
  fputs(MAGIC, f);
  fprintf(f, "version %s row_bytes %zu shard %zu of %zu rows %zu fingerprint %016" PRIx64 "\n", SERVESIM_VERSION,
          sizeof(sweep_row), k, n, s->n, sweep_part_fingerprint(args, args_len));
  fprintf(f, "args %zu\n", args_len);
  fwrite(args, 1, args_len, f);
  fprintf(f, "\ndata %zu\n", m);
  for (size_t j = 0; j < m; j++) {
    uint64_t i = j * n + (k - 1);
    fwrite(&i, sizeof i, 1, f);
    fwrite(&s->rows[i], sizeof s->rows[i], 1, f);
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
  if (!fgets(line, sizeof line, f) || strcmp(line, MAGIC)) rc = bad(path, err, "no 'servesim-sweep-part 1' header");
  else if (!fgets(line, sizeof line, f) ||
           sscanf(line, "version %63s row_bytes %zu shard %zu of %zu rows %zu fingerprint %" SCNx64, version,
                  &row_bytes, &p->k, &p->n, &p->rows, &fp) != 6)
    rc = bad(path, err, "line 2 is not 'version V row_bytes B shard K of N rows R fingerprint F'");
  else if (strcmp(version, SERVESIM_VERSION) || row_bytes != sizeof(sweep_row))
    rc = sim_errf(err, SIM_EINPUT, "%s: written by servesim %s (rows of %zu bytes); this is %s (%zu): merge with the "
                  "build that ran the shards", path, version, row_bytes, SERVESIM_VERSION, sizeof(sweep_row));
  else if (p->n < 1 || p->k < 1 || p->k > p->n)
    rc = bad(path, err, "shard number out of range");
  else if (!fgets(line, sizeof line, f) || sscanf(line, "args %zu", &p->args_len) != 1 || p->args_len > (1u << 20))
    rc = bad(path, err, "line 3 is not 'args L'");
  if (!rc) {
    p->args = sim_malloc(p->args_len + 1);
    if (fread(p->args, 1, p->args_len, f) != p->args_len || fgetc(f) != '\n') rc = bad(path, err, "arguments cut short");
    else p->args[p->args_len] = 0;
  }
  if (!rc && sweep_part_fingerprint(p->args, p->args_len) != fp) rc = bad(path, err, "fingerprint does not match");
  p->fingerprint = fp;
  if (!rc && (!fgets(line, sizeof line, f) || sscanf(line, "data %zu", &p->m) != 1 ||
              p->m != sweep_shard_rows(p->rows, p->k, p->n)))
    rc = sim_errf(err, SIM_EINPUT, "%s: shard %zu of %zu of %zu rows should hold %zu rows", path, p->k, p->n, p->rows,
                  sweep_shard_rows(p->rows, p->k, p->n));
  if (!rc) { /* the rows must be in the file before anything is allocated for them */
    long here = ftell(f);
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    fseek(f, here, SEEK_SET);
    if (here < 0 || end < here || (uint64_t)(end - here) / (sizeof(uint64_t) + sizeof(sweep_row)) < p->m)
      rc = sim_errf(err, SIM_EINPUT, "%s: cut short: %zu rows announced, the file holds fewer", path, p->m);
  }
  if (!rc) {
    p->index = sim_calloc(p->m ? p->m : 1, sizeof *p->index);
    p->row = sim_calloc(p->m ? p->m : 1, sizeof *p->row);
    for (size_t j = 0; j < p->m && !rc; j++) {
      if (fread(&p->index[j], sizeof p->index[j], 1, f) != 1 || fread(&p->row[j], sizeof p->row[j], 1, f) != 1)
        rc = sim_errf(err, SIM_EINPUT, "%s: cut short at row %zu of %zu", path, j, p->m);
      else if (p->index[j] != j * p->n + (p->k - 1))
        rc = bad(path, err, "row index out of its shard");
    }
    if (!rc && fgetc(f) != EOF) rc = bad(path, err, "bytes after the last row");
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
    if (p[i].fingerprint != p[0].fingerprint || p[i].n != p[0].n || p[i].rows != p[0].rows)
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
  if (s->n != p[0].rows)
    return sim_errf(err, SIM_EINPUT, "%s: its grid has %zu rows, the sweep rebuilt here %zu", p[0].path, p[0].rows,
                    s->n);
  for (int i = 0; i < np; i++)
    for (size_t j = 0; j < p[i].m; j++) {
      sweep_row *r = &s->rows[p[i].index[j]];
      if (strcmp(r->label, p[i].row[j].label))
        return sim_errf(err, SIM_EINPUT, "%s: row %" PRIu64 " is '%s', the grid's is '%s'", p[i].path, p[i].index[j],
                        p[i].row[j].label, r->label);
      *r = p[i].row[j];
    }
  sweep_finish(s);
  return SIM_OK;
}
